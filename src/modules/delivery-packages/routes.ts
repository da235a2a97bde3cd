import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { errors } from '../../errors.js';
import { requestHashOf, respondToWrite } from '../../http/idempotency.js';
import { formParts, uploadLimits } from '../../http/multipart-parts.js';
import { errorResponses } from '../../http/schemas.js';
import type { Limits } from '../../config.js';
import { addPackageFiles, removePackageFile, type PackageRead } from './service.js';
import { DeliveryPackage, DeliveryParams, PackageFileParams, PackageForm, PackageUpload } from './schemas.js';
import { routesOf } from '../../http/define-route.js';

const write = { auth: { scopes: ['admin'], surface: 'production' }, idempotent: true } as const;

/** What one part's headers and a label may add to a file's bytes in the form, generously. */
const PART_OVERHEAD = 64 * 1024;

/** The largest form the limits allow: every file at the upload limit, with its label. */
const largestForm = (limits: Limits) =>
  limits.submissionFiles * (limits.uploadBytes + PART_OVERHEAD) + PART_OVERHEAD;

/**
 * Refuses (413) a body whose declared Content-Length is over what the limits allow, before a
 * byte of it is read; the connection is closed rather than drained. A body sent chunked is held
 * to the limits as it streams in.
 */
function refuseDeclaredOver(limits: Limits) {
  const max = largestForm(limits);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const declared = Number(request.headers['content-length']);
    if (!Number.isFinite(declared) || declared <= max) return;
    reply.header('connection', 'close');
    throw errors.tooLarge(
      `the body declares ${declared} bytes, over the ${max} that ${limits.submissionFiles} files of at most ${limits.uploadBytes} bytes may take`,
    );
  };
}

export async function deliveryPackageRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const limits = app.ctx.config.limits;

  routesOf(app).post(
    '/admin/deliveries/:id/files',
    {
      config: write,
      schema: {
        operationId: 'addDeliveryFiles',
        summary: "Add files to a delivery's package (what the turnover sends: plates, EDL, LUT, reference)",
        description: [
          'multipart/form-data: one or more `files` parts, each optionally preceded by a `label` text part',
          'that names it (label, file, label, file…); a file with no label before it is labelled with its file',
          'name. A label is a file name (no `/` or `\\`) and unique in the package. Each file is streamed to',
          'storage (never held in memory), typed from its bytes and recorded with its size and SHA-256 as its',
          'own media object of the delivery (no work item). The answer lists the files this request added.',
          'A vendor granted the delivery sees the package on its turnover once the delivery is `sent` or',
          '`accepted`; files added to a sent delivery reach it at once. Refusals, each leaving nothing: 404',
          'unknown or retired delivery (before any byte is read); 413 a declared Content-Length over what the',
          'limits allow (before any byte is read), more than',
          `${limits.submissionFiles} files or a file over ${limits.uploadBytes} bytes (as soon as it passes the`,
          'limit; PRODGRAPH_MAX_SUBMISSION_FILES, PRODGRAPH_MAX_UPLOAD_BYTES); 422 no file, an empty file, an',
          'unknown field, a label with no file after it or a bad label; 409 a label the package already holds',
          '(take that file out first). Recorded in the activity feed and the change feed (each `media` created,',
          'the `delivery` updated). With an Idempotency-Key the request is its labels and its files’ SHA-256.',
        ].join(' '),
        tags: ['admin'],
        consumes: ['multipart/form-data'],
        params: DeliveryParams,
        body: PackageForm,
        response: { 201: PackageUpload, ...errorResponses(400, 404, 409, 413, 422) },
      },
      preParsing: refuseDeclaredOver(limits),
      // the form is read lazily by the service, so validation sees an empty stand-in body
      preValidation: async (request) => {
        if (request.isMultipart() && request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      let read: PackageRead | undefined;
      return respondToWrite<PackageUpload>(
        request,
        reply,
        { status: 201 },
        (hooks) =>
          addPackageFiles(
            app.ctx,
            principalOf(request),
            request.params.id,
            formParts(request, uploadLimits(limits)),
            hooks,
            (r) => (read = r),
          ),
        () => requestHashOf(request, read),
      );
    },
  );

  routesOf(app).post(
    '/admin/deliveries/:id/files/:media_id/remove',
    {
      config: write,
      schema: {
        operationId: 'removeDeliveryFile',
        summary: "Take a file out of a delivery's package",
        description:
          'Vendors no longer see it (on the turnover, nor by media id); the media object is kept for history and a production-wide key still fetches it by id. Answers the package as it is now. Taking out a file already taken out answers the package unchanged and records nothing. 404 for an unknown or retired delivery, or a media id that is not a file of this delivery’s package (a submitted file included). Recorded in the activity feed and the change feed (the `media` and the `delivery` updated).',
        tags: ['admin'],
        params: PackageFileParams,
        response: { 200: DeliveryPackage, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) =>
      respondToWrite<DeliveryPackage>(request, reply, { status: 200 }, (hooks) =>
        removePackageFile(app.ctx, principalOf(request), request.params.id, request.params.media_id, hooks),
      ),
  );
}
