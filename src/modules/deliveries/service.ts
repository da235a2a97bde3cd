import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { parseJson } from '../../db/values.js';
import * as repo from './repository.js';
import type { Delivery } from './schemas.js';

type GatingStatus = NonNullable<Delivery['gating_approval']>['status'];

export async function listDeliveries(ctx: AppContext, principal: Principal): Promise<Delivery[]> {
  const rows = await repo.listDeliveries(ctx.db, principal.productionId);
  return rows.map((d) => ({
    id: d.id,
    title: d.title,
    kind: d.kind as Delivery['kind'],
    status: d.status as Delivery['status'],
    due: d.due,
    from_department: d.from_department ?? null,
    to_department: d.to_department ?? null,
    external_to: d.external_to,
    spec: parseJson<Record<string, unknown>[]>(d.spec, []),
    sent_at: d.sent_at,
    gating_approval:
      d.approval_id === null || d.approval_id === undefined
        ? null
        : { id: d.approval_id, title: d.approval_title!, status: d.approval_status as GatingStatus },
  }));
}
