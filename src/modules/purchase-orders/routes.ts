import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AnswerCache, sendAnswer } from '../../http/answer-cache.js';
import { principalOf } from '../../auth/route-hook.js';
import { CACHED_ANSWER } from '../../http/reference-headers.js';
import { ConditionalHeaders, KEPT_NOTE, NotModified } from '../../http/schemas.js';
import { PurchaseOrders } from './schemas.js';
import { holdsOwnPo, purchaseOrders } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function purchaseOrderRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/purchase-orders',
    {
      config: { auth: { scopes: ['read:money'], surface: 'round-trip' }, responseHeaders: CACHED_ANSWER },
      schema: {
        operationId: 'getPurchaseOrders',
        summary: "A vendor's own purchase orders and its departments' cost-report lines",
        description:
          "Needs the `read:money` scope (403 without) AND a live `own_po` grant on the key's engagement. A production-wide key, or an engagement without a live money grant, gets 200 with empty arrays and `week_of` null. Only purchase orders whose vendor is the engagement's organisation and that carry a department are returned; `line` holds the active weekly cost report's lines whose account is one of the accounts of the engagement's departments. Money values are JSON numbers. " +
          KEPT_NOTE,
        tags: ['round-trip'],
        headers: ConditionalHeaders,
        response: { 200: PurchaseOrders, 304: NotModified },
      },
    },
    // the vendor's rows are cached by revision (AnswerCache), behind the own_po grant judged
    // on every request: one that lapsed since gets the empty answer, as purchaseOrders gives it
    async (request, reply) => {
      const principal = principalOf(request);
      return sendAnswer(
        app.answers,
        request,
        reply,
        AnswerCache.key('purchase-orders', principal),
        async () => ({ payload: await purchaseOrders(app.ctx, principal) }),
        {
          door: async () =>
            (await holdsOwnPo(app.ctx, principal)) ? undefined : purchaseOrders(app.ctx, principal),
        },
      );
    },
  );
}
