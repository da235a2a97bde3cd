import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AnswerCache, sendAnswer } from '../../http/answer-cache.js';
import { principalOf } from '../../auth/route-hook.js';
import { requestHashOf, respondToWrite } from '../../http/idempotency.js';
import { formParts, formUpload, uploadLimits } from '../../http/multipart-parts.js';
import { isPaged, sendConditionalPage, sendPage } from '../../http/paging.js';
import { ConditionalHeaders, errorResponses, KEPT_NOTE, NotModified } from '../../http/schemas.js';
import { CACHED_ANSWER } from '../../http/reference-headers.js';
import {
  SubmissionForm,
  SubmissionListQuery,
  SubmissionRow,
  TurnoverListQuery,
  TurnoverParams,
  TurnoverRow,
  TurnoverSubmission,
} from './schemas.js';
import {
  listTurnovers,
  NOTE_MAX,
  submitTurnover,
  TITLE_MAX,
  turnoverDoor,
  type SubmissionRead,
} from './service.js';
import { listSubmissions } from './submission-list.js';
import { routesOf } from '../../http/define-route.js';

export async function turnoverRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  routesOf(app).get(
    '/turnovers',
    {
      config: { auth: { scopes: ['read'], surface: 'round-trip' }, responseHeaders: CACHED_ANSWER },
      schema: {
        operationId: 'listTurnovers',
        summary: "Deliveries this key's engagement holds a live read or submit grant on",
        description: [
          'An empty array (never an error) for a production-wide key or an engagement with no live delivery grant. A revoked or expired grant counts as no grant.',
          "Each row carries the delivery's `package` (its current files, shown once the delivery is `sent` or `accepted`; `[]` before, and again if it is recalled) and this engagement's own `submissions` on it with their files and the production's `review`; another engagement's submissions are never shown.",
          "With `updated_since`, a row counts as changed when its delivery, this engagement's grant on it, its shown package (a file added or taken out) or this engagement's own submissions on it (a new one, a review) changed after the instant.",
          `Every answer carries a strong ETag, computed over exactly what this key sees (its engagement's reach and every field of its rows): send it back in If-None-Match to get 304 with no body while nothing it would see has changed. A grant added, revoked or expired, a status move, a package file, a review of its own work: each gives a new ETag; another engagement's activity does not. Without \`limit\` (the whole list): ${KEPT_NOTE} A page or a change window (\`limit\`, \`cursor\`, \`updated_since\`) is assembled on every request; its ETag covers its rows and its Link header.`,
        ].join(' '),
        tags: ['round-trip'],
        querystring: TurnoverListQuery,
        headers: ConditionalHeaders,
        response: { 200: Type.Array(TurnoverRow), 304: NotModified, ...errorResponses(422) },
      },
    },
    // The door (the live delivery grants, judged now) names the answer: the plain list is cached
    // by revision for exactly that set of grants, so an expiry or a revocation is a different
    // answer at once.
    async (request, reply) => {
      const principal = principalOf(request);
      const door = await turnoverDoor(app.ctx, principal);
      const query = request.query;
      if (isPaged(query))
        return sendConditionalPage(request, reply, await listTurnovers(app.ctx, principal, query, door));
      const reach = [...door.grantedDeliveries()]
        .map(([id, g]) => `${id}${g.canSubmit ? 's' : 'r'}${g.grantedAt ?? ''}`)
        .join(',');
      return sendAnswer(
        app.answers,
        request,
        reply,
        AnswerCache.key('turnovers', principal, reach),
        async () => ({
          payload: (await listTurnovers(app.ctx, principal, {}, door)).items,
        }),
      );
    },
  );

  routesOf(app).get(
    '/submissions',
    {
      config: { auth: { scopes: ['read'], surface: 'round-trip' } },
      schema: {
        operationId: 'listSubmissions',
        summary: 'The turnover submissions this key may see, each with its files',
        description: [
          "For an engagement-bound key, its own engagement's submissions on the deliveries it holds a",
          "live read or submit grant on now; never another engagement's. A revoked or expired grant,",
          'or an archived engagement, takes them out of the very next answer. For a production-wide',
          'key, every submission of the production. Oldest first; submissions on a delivery a',
          're-import retired are left out. Each file carries its media id, type, size and SHA-256:',
          'fetch the bytes with GET /media/{id}/content (the same key) and check them. Pages with',
          '`limit` and the `Link` header like the other lists; with `updated_since`, only submissions',
          'made after it, those whose delivery was granted to this engagement after it, and those',
          "whose delivery was retired after it (carrying `retired_at`: drop them). A vendor's list",
          'also shrinks without a `retired_at` when a grant is revoked, so a vendor mirror reads it whole.',
        ].join(' '),
        tags: ['round-trip'],
        querystring: SubmissionListQuery,
        response: { 200: Type.Array(SubmissionRow), ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await listSubmissions(app.ctx, principalOf(request), request.query)),
  );

  const limits = app.ctx.config.limits;
  const submissionForm = uploadLimits(limits);
  routesOf(app).post(
    '/turnovers/:id/submissions',
    {
      config: {
        auth: { scopes: ['submit:turnover'], surface: 'round-trip' },
        idempotent: true,
        upload: formUpload(submissionForm),
      },
      schema: {
        operationId: 'submitTurnover',
        summary: 'Submit work on a turnover: every uploaded file becomes its own media object',
        description: [
          'multipart/form-data with `files` (one or more file parts, required), `title` (text, at most',
          `${TITLE_MAX} characters, defaults to the delivery's title) and \`note\` (text, at most ${NOTE_MAX} characters).`,
          'The server chooses where bytes are stored; no path is accepted or returned. Each file is',
          'typed from its bytes (never from the name or the declared type) and recorded with its size',
          'and SHA-256. Refusals in this order: 403 missing `submit:turnover` scope; 404 unknown',
          'delivery or no live grant of this engagement on it; 403 production-wide key (no engagement',
          'to submit as) or only a read grant; 422 unknown field or no file or an empty file;',
          `413 more than ${limits.submissionFiles} files or a file over ${limits.uploadBytes} bytes`,
          '(PRODGRAPH_MAX_SUBMISSION_FILES, PRODGRAPH_MAX_UPLOAD_BYTES). All or nothing: on any failure',
          'no work item, no media and no stored bytes remain.',
        ].join(' '),
        tags: ['round-trip'],
        consumes: ['multipart/form-data'],
        params: TurnoverParams,
        body: SubmissionForm,
        response: { 200: TurnoverSubmission, ...errorResponses(400, 404, 413, 422) },
      },
      // the form is read lazily by the service, so validation sees an empty stand-in body
      preValidation: async (request) => {
        if (request.isMultipart() && request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      // the fingerprint of a multipart request is its fields and its files' SHA-256, known once read
      let form: SubmissionRead | undefined;
      return respondToWrite<TurnoverSubmission>(
        request,
        reply,
        { status: 200 },
        (hooks) =>
          submitTurnover(
            app.ctx,
            principalOf(request),
            request.params.id,
            formParts(request, submissionForm),
            hooks,
            (read) => (form = read),
          ),
        () => requestHashOf(request, form),
      );
    },
  );
}
