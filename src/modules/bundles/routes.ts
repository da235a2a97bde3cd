import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { NodeGrantKind } from '../../auth/clamp.js';
import { AnswerCache, sendAnswer } from '../../http/answer-cache.js';
import { principalOf } from '../../auth/route-hook.js';
import { sendPage } from '../../http/paging.js';
import { CONDITIONAL_ANSWER } from '../../http/reference-headers.js';
import { errorResponses } from '../../http/schemas.js';
import {
  BundleEntry,
  BundleHeaders,
  BundleListQuery,
  BundleParams,
  CharacterBundle,
  SceneBundle,
} from './schemas.js';
import { characterBundle, listBundles, reachesBundle, sceneBundle } from './service.js';
import { routesOf } from '../../http/define-route.js';

const read = { auth: { scopes: ['read'], surface: 'round-trip' } } as const;

const NOT_MODIFIED = Type.Null({
  description: 'Not Modified: If-None-Match matched the current ETag; no body',
});

const CONDITIONAL = `
The ETag is a stable hash of the assembled document (canonical JSON, keys sorted): any change
that alters this caller's bundle changes it, nothing else does, and two keys whose views differ
get different tags. Send it back in \`If-None-Match\` (one tag, a comma-separated list, \`W/\`
weak forms and \`*\` are all understood) to get 304 with no body. The reach check runs first, so
a 304 never answers for a node the key cannot see. An assembled bundle is kept until anything in
the production changes, so a repeat request, and its 304, is answered without assembling it again.`;

/**
 * 200 with ETag, or 304 when the caller already holds this exact document. The answer comes
 * from the cache when the production has not changed since it was assembled for this view,
 * behind the door judged for this request (no query for a production-wide key beyond the key
 * lookup; one for an engagement's grant on the node), so a 304 is the key lookup, the door and
 * a comparison. On a miss the service assembles it, judging the door itself.
 */
async function sendBundle(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  kind: NodeGrantKind,
  nodeId: number,
  assemble: () => Promise<{ etag: string }>,
) {
  const principal = principalOf(request);
  return sendAnswer(
    app.answers,
    request,
    reply,
    AnswerCache.key(`bundle:${kind}`, principal, nodeId),
    async () => {
      const doc = await assemble();
      return { payload: doc, etag: doc.etag };
    },
    {
      door: () => reachesBundle(app.ctx, principal, kind, nodeId),
      headers: { 'cache-control': 'private, no-cache', vary: 'Authorization' },
    },
  );
}

export async function bundleRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/bundles',
    {
      config: read,
      schema: {
        operationId: 'listBundles',
        summary: 'The scene and character bundles this key may fetch',
        description:
          "For an engagement-bound key, the scenes and characters its live grants name, each with the grant's expiry; for a production-wide key, every live scene and character of the production (`expires_at` null). Scenes first in script order, then characters. Judged on every request: a revoked or expired grant leaves the list on the very next one, exactly as its bundle then answers 404. Pages with `limit` and the `Link` header like the other lists (no `updated_since`: a bundle changes with everything it shows, so keep each one fresh with its ETag).",
        tags: ['round-trip'],
        querystring: BundleListQuery,
        response: { 200: Type.Array(BundleEntry), ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await listBundles(app.ctx, principalOf(request), request.query)),
  );

  routesOf(app).get(
    '/bundles/scene/:node_id',
    {
      config: { ...read, responseHeaders: CONDITIONAL_ANSWER },
      schema: {
        operationId: 'getSceneBundle',
        summary: 'Everything about one scene in one call, clamped to the caller',
        description: `The scene, every asset it uses with its released versions, its shoot days, and the approvals and department notes on the scene or its assets. An engagement-bound key needs a live scene grant (otherwise 404, exactly as for an unknown id) and sees only the approvals and notes of its engagement's departments.\n${CONDITIONAL}`,
        tags: ['round-trip'],
        params: BundleParams,
        headers: BundleHeaders,
        response: { 200: SceneBundle, 304: NOT_MODIFIED, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) =>
      sendBundle(app, request, reply, 'scene', request.params.node_id, () =>
        sceneBundle(app.ctx, principalOf(request), request.params.node_id),
      ),
  );

  routesOf(app).get(
    '/bundles/character/:node_id',
    {
      config: { ...read, responseHeaders: CONDITIONAL_ANSWER },
      schema: {
        operationId: 'getCharacterBundle',
        summary: 'One character with its costumes, their released versions and ingredients',
        description: `An engagement-bound key needs a live character grant (otherwise 404, exactly as for an unknown id). Costume ingredients are the de-duplicated union over the costume's released versions.\n${CONDITIONAL}`,
        tags: ['round-trip'],
        params: BundleParams,
        headers: BundleHeaders,
        response: { 200: CharacterBundle, 304: NOT_MODIFIED, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) =>
      sendBundle(app, request, reply, 'character', request.params.node_id, () =>
        characterBundle(app.ctx, principalOf(request), request.params.node_id),
      ),
  );
}
