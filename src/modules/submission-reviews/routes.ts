import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { respondToWrite } from '../../http/idempotency.js';
import { errorResponses } from '../../http/schemas.js';
import { ReviewBody, SubmissionParams } from './schemas.js';
import { reviewSubmission } from './service.js';
import { SubmissionRow } from '../turnovers/schemas.js';
import { routesOf } from '../../http/define-route.js';

const write = { auth: { scopes: ['admin'], surface: 'production' }, idempotent: true } as const;

export async function reviewRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  routesOf(app).post(
    '/admin/submissions/:id/review',
    {
      config: write,
      schema: {
        operationId: 'reviewSubmission',
        summary: "Review a vendor's submission: accept it, or ask for changes",
        description: [
          "The submission's `status` becomes the decision and it carries `review: {decision, note, reviewed_by,",
          'reviewed_at}`, which the vendor reads on its own submissions. A later review replaces the earlier one',
          '(the activity feed keeps each). A key bound to a person reviews as that person only; a key bound to no',
          'one names a person of the production in `reviewed_by`, or no one and is recorded under its label.',
          'With `accept_delivery: true`, an accepting review also moves the delivery from `sent` to `accepted` in',
          'the same write (a delivery already accepted is left as it is); accepting a submission never accepts the',
          'delivery by itself. Refusals record nothing: 404 unknown submission (or one on a retired delivery);',
          '422 a blank note when asking for changes, `accept_delivery` with `changes_requested`, or a',
          '`reviewed_by` naming no person (or several: name one by id); 403 a person-bound key naming someone',
          'else; 409 `invalid_transition` when `accept_delivery` finds the delivery not `sent` (the detail names',
          'where it may move). Answers the submission as `GET /submissions` lists it. Recorded in the activity',
          'feed and the change feed (the `submission` updated; with `accept_delivery`, the `delivery` too).',
        ].join(' '),
        tags: ['admin'],
        params: SubmissionParams,
        body: ReviewBody,
        response: { 200: SubmissionRow, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      respondToWrite<SubmissionRow>(request, reply, { status: 200 }, (hooks) =>
        reviewSubmission(app.ctx, principalOf(request), request.params.id, request.body, hooks),
      ),
  );
}
