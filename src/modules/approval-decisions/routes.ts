import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { respondToWrite } from '../../http/idempotency.js';
import { errorResponses } from '../../http/schemas.js';
import { ApprovalParams, DecideBody } from './schemas.js';
import { ApprovalChain } from '../approvals/schemas.js';
import { decideApproval } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function approvalDecideRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).post(
    '/approvals/:approval_id/decide',
    {
      config: { auth: { scopes: ['write'], surface: 'production' }, idempotent: true },
      schema: {
        operationId: 'decideApproval',
        summary: 'Decide the current step of an approval',
        description:
          'Acts on the current step only. `approved` on the last step → status `approved` (and, when the ' +
          'subject is a version, that version is released: status `approved`, `released: true`, so it ' +
          'appears in bundles); on an earlier step → stays `pending` and `current_step` moves to the next ' +
          'step. `changes` → `changes_requested`. Refusals record nothing: 403 when `decided_by` is not the ' +
          "current step's person, and when a key bound to a person names anyone but that person or decides a " +
          "step that is not its person's (such a key decides as its person; no `decided_by` means its person); " +
          '422 when a `decision`-mode approval gets no `decided_by` from a key bound to no one; 409 when the ' +
          'approval is not pending, or another decision on the same step won (or `step` no longer matches). ' +
          'Order of checks: 404, 409 (settled), 409 (`step`), 422, 403. Answers 200 with the approval chain ' +
          'after the decision. Appends an activity entry and a change that name the key the decision came ' +
          "through (`Ana Ruiz via Nuke publish`, or an integration key's label) and bumps the subject node's " +
          'updated_at, in the same transaction.',
        tags: ['approvals'],
        params: ApprovalParams,
        body: DecideBody,
        response: { 200: ApprovalChain, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      return respondToWrite(request, reply, { status: 200 }, (hooks) =>
        decideApproval(app.ctx, principal, request.params.approval_id, request.body, hooks),
      );
    },
  );
}
