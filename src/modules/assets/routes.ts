import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AnswerCache, sendAnswer } from '../../http/answer-cache.js';
import { principalOf } from '../../auth/route-hook.js';
import { isPaged, sendPage } from '../../http/paging.js';
import { ConditionalHeaders, errorResponses, KEPT_NOTE, NotModified } from '../../http/schemas.js';
import { CACHED_ANSWER } from '../../http/reference-headers.js';
import { AssetListQuery, AssetParams, AssetRecord, AssetRow } from './schemas.js';
import { getAsset, listAssets } from './service.js';
import { routesOf } from '../../http/define-route.js';

const read = { auth: { scopes: ['read'], surface: 'production' }, responseHeaders: CACHED_ANSWER } as const;

export async function assetRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/assets',
    {
      config: read,
      schema: {
        operationId: 'listAssets',
        summary: 'Asset rows (every graph node but scenes), in the order the production lists them',
        description: `Filters combine (AND). Any value a filter does not accept, an unknown department slug included, is 422 naming the filter. Without \`limit\` (the whole list, per combination of filters): ${KEPT_NOTE}`,
        tags: ['assets'],
        querystring: AssetListQuery,
        headers: ConditionalHeaders,
        response: { 200: Type.Array(AssetRow), 304: NotModified, ...errorResponses(422) },
      },
    },
    // the plain list is cached by revision (AnswerCache), per combination of filters
    async (request, reply) => {
      const principal = principalOf(request);
      const query = request.query;
      if (isPaged(query)) return sendPage(request, reply, await listAssets(app.ctx, principal, query));
      const { department, kind, status, released } = query;
      const filters = JSON.stringify([department, kind, status, released]);
      return sendAnswer(
        app.answers,
        request,
        reply,
        AnswerCache.key('assets', principal, filters),
        async () => ({ payload: (await listAssets(app.ctx, principal, query)).items }),
      );
    },
  );
  routesOf(app).get(
    '/assets/:node_id',
    {
      config: read,
      schema: {
        operationId: 'getAsset',
        summary: 'One asset in full: versions, linked scenes and, for a character, its costumes',
        description:
          'Released versions carry media, notes and ingredients; a version not yet released is a locked stub. ' +
          `A scene's node_id, an unknown id and another production's id all answer 404. ${KEPT_NOTE}`,
        tags: ['assets'],
        params: AssetParams,
        headers: ConditionalHeaders,
        response: { 200: AssetRecord, 304: NotModified, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const id = request.params.node_id;
      return sendAnswer(app.answers, request, reply, AnswerCache.key('asset', principal, id), async () => ({
        payload: await getAsset(app.ctx, principal, id),
      }));
    },
  );
}
