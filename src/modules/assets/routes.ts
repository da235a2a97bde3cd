import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { sendPage } from '../../http/paging.js';
import { errorResponses } from '../../http/schemas.js';
import { AssetListQuery, AssetParams, AssetRecord, AssetRow } from './schemas.js';
import { getAsset, listAssets } from './service.js';

const read = { auth: { scopes: ['read'], surface: 'production' } } as const;

export async function assetRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/assets',
    {
      config: read,
      schema: {
        summary: 'Asset rows (every graph node but scenes), in the order the production lists them',
        description:
          'Filters combine (AND). Any value a filter does not accept, an unknown department slug included, is 422 naming the filter.',
        tags: ['assets'],
        querystring: AssetListQuery,
        response: { 200: Type.Array(AssetRow), ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await listAssets(app.ctx, principalOf(request), request.query)),
  );
  app.get(
    '/assets/:node_id',
    {
      config: read,
      schema: {
        summary: 'One asset in full: versions, linked scenes and, for a character, its costumes',
        description:
          'Released versions carry media, notes and ingredients; a version not yet released is a locked stub. ' +
          "A scene's node_id, an unknown id and another production's id all answer 404.",
        tags: ['assets'],
        params: AssetParams,
        response: { 200: AssetRecord, ...errorResponses(404, 422) },
      },
    },
    async (request) => getAsset(app.ctx, principalOf(request), request.params.node_id),
  );
}
