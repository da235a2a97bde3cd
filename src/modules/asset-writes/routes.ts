import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { requestHashOf, respondToWrite } from '../../http/idempotency.js';
import { formParts, formUpload, uploadLimits } from '../../http/multipart-parts.js';
import { API_PREFIX } from '../../http/openapi.js';
import { errorResponses } from '../../http/schemas.js';
import { errors } from '../../errors.js';
import { discardStaged, type StagedObject } from '../../media/store.js';
import {
  AssetParams,
  CreatedAsset,
  CreatedNote,
  CreatedVersion,
  NewAsset,
  NewNote,
  NewVersionForm,
  VERSION_FIELDS,
} from './schemas.js';
import { addNote, assertAsset, createAsset, landVersion, stageUpload } from './service.js';
import { routesOf } from '../../http/define-route.js';

const write = { auth: { scopes: ['write'], surface: 'production' }, idempotent: true } as const;
/** The created asset's or version's record is at Location. */
const located = { ...write, responseHeaders: { 201: ['Location'] } } as const;
const assetUrl = (nodeId: number) => `${API_PREFIX}/assets/${nodeId}`;

const ACTIVITY_NOTE =
  'Appends an activity entry (actor: the key\'s person "via" the key\'s label, or the label) and ' +
  "bumps the asset's updated_at, in the same transaction as the write.";

export async function assetWriteRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  routesOf(app).post(
    '/assets',
    {
      config: located,
      schema: {
        operationId: 'createAsset',
        summary: 'Create an asset',
        description:
          'Creates a graph node other than a scene. Answers 201 with the new asset row and a `Location` ' +
          'header naming its record. 422 names the field: blank label, kind `scene`, unknown department ' +
          'slug, status outside planned/active/blocked/done, or an unknown field. ' +
          ACTIVITY_NOTE,
        tags: ['assets'],
        body: NewAsset,
        response: { 201: CreatedAsset, ...errorResponses(400, 422) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      return respondToWrite<CreatedAsset>(
        request,
        reply,
        { status: 201, headers: (a) => ({ location: assetUrl(a.node_id) }) },
        (hooks) => createAsset(app.ctx, principal, request.body, hooks),
      );
    },
  );

  routesOf(app).post(
    '/assets/:node_id/notes',
    {
      config: write,
      schema: {
        operationId: 'addAssetNote',
        summary: 'Attach a note to an asset',
        description:
          'The note lands on the version `version_id` names (a version of this asset, released or not; ' +
          'anything else 422), else on the newest version (highest number, released or not), and shows ' +
          'in its full record, on a locked stub too; when the asset has no version yet it lands as an activity entry ' +
          '(`landed_on: "activity"`, summary `<author>: <text>` when an author was given). `author` is free ' +
          "text; when omitted the note is attributed to the key's person, else the key's label. " +
          "A scene, an unknown node or another production's node: 404. No `Location` (a note has no URL). " +
          ACTIVITY_NOTE,
        tags: ['assets'],
        params: AssetParams,
        body: NewNote,
        response: { 201: CreatedNote, ...errorResponses(400, 404, 422) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      return respondToWrite(request, reply, { status: 201 }, (hooks) =>
        addNote(app.ctx, principal, request.params.node_id, request.body, hooks),
      );
    },
  );

  const versionForm = uploadLimits(app.ctx.config.limits, 'file');
  routesOf(app).post(
    '/assets/:node_id/versions',
    {
      // the body: one file at its largest, its fields and framing
      config: { ...located, upload: formUpload({ ...versionForm, files: 1 }) },
      schema: {
        operationId: 'landAssetVersion',
        summary: 'Land a version (an on-set still) on an asset',
        description:
          'multipart/form-data: `file` (required, exactly one), `note`, `variant` (default `On-Set`); ' +
          'other fields are refused with 422. Lands a reviewable `wip` version numbered one past the ' +
          "asset's highest (two concurrent uploads always get two numbers), not released: it shows as a " +
          'locked stub in the full asset record and never in a bundle until a final approval releases it. ' +
          'The bytes are streamed to the media store and kept only if the write commits; the content ' +
          "type is sniffed from the bytes. `created_by` is the key's person, else the key's label. " +
          'Answers 201 with the version, its stored file (`media_id` for GET /media/{id}/content, `media_path` ' +
          'for the off-plane file route: the uploader can fetch what it landed before release) and a ' +
          '`Location` header naming the asset. 413 beyond the ' +
          'configured upload limit; 415 when the request is not multipart or the bytes are not an image or ' +
          'a video (the type is sniffed from the bytes); 422 for an empty file. ' +
          ACTIVITY_NOTE,
        tags: ['assets'],
        params: AssetParams,
        body: { content: { 'multipart/form-data': { schema: NewVersionForm } } },
        response: { 201: CreatedVersion, ...errorResponses(404, 413, 415, 422) },
      },
      // stream mode parses no body; an empty one lets the documented schema validate
      preValidation: async (request) => {
        if (request.isMultipart()) request.body = {};
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const nodeId = request.params.node_id;
      if (!request.isMultipart()) {
        throw errors.unsupportedMedia('send multipart/form-data with the file in a `file` field');
      }
      await assertAsset(app.ctx, principal, nodeId);

      const fields: Record<string, string> = {};
      let staged: StagedObject | undefined;
      let filename: string | undefined;
      try {
        for await (const part of formParts(request, versionForm)) {
          if (part.type === 'file') {
            if (part.name !== 'file' || staged) {
              part.stream.resume();
              throw part.name === 'file'
                ? errors.invalid('file', 'send exactly one file')
                : errors.invalid(part.name, 'unknown file field (send the file as `file`)');
            }
            filename = part.filename;
            staged = await stageUpload(app.ctx, principal, part.stream, part.filename);
          } else {
            if (!(VERSION_FIELDS as readonly string[]).includes(part.name)) {
              throw errors.invalid(part.name, `unknown field (fields: file, ${VERSION_FIELDS.join(', ')})`);
            }
            if (part.name in fields) throw errors.invalid(part.name, 'given more than once');
            fields[part.name] = part.value;
          }
        }
      } catch (err) {
        await discardStaged(staged ? [staged] : []);
        throw err;
      }
      if (!staged) throw errors.invalid('file', 'is required');
      const file = staged;
      const hash = requestHashOf(request, { fields, file: { filename, sha256: file.sha256 } });
      return respondToWrite<CreatedVersion>(
        request,
        reply,
        { status: 201, headers: (v) => ({ location: assetUrl(v.node_id) }) },
        (hooks) =>
          landVersion(
            app.ctx,
            principal,
            nodeId,
            { file, note: fields.note, variant: fields.variant },
            hooks,
          ),
        hash,
      );
    },
  );
}
