import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { laterStamp } from '../../db/updated-at.js';
import { parseJson } from '../../db/values.js';
import { MAX_PAGE, openPage, type Page, type PagedList, type PageQuery } from '../../domain/page.js';
import * as repo from './repository.js';
import type { Delivery } from './schemas.js';

type DeliveryRow = Awaited<ReturnType<typeof repo.listDeliveries>>[number];

/** The approval that gates a delivery: every column of the joined row, or none when it has none. */
function gatingApprovalOf(d: DeliveryRow): Delivery['gating_approval'] {
  const { approval_id: id, approval_title: title, approval_status: status } = d;
  return id == null || title == null || status == null ? null : { id, title, status };
}

const DELIVERIES: PagedList = { name: 'deliveries', key: ['int', 'int'], maxLimit: MAX_PAGE };

export async function listDeliveries(
  ctx: AppContext,
  principal: Principal,
  query: PageQuery = {},
): Promise<Page<Delivery>> {
  const { window, close } = openPage(DELIVERIES, principal.productionId, { ...query });
  const rows = await repo.listDeliveries(ctx.db, principal.productionId, window);
  return close(
    rows,
    (d) => [d.position, d.id],
    (d): Delivery => ({
      id: d.id,
      title: d.title,
      kind: d.kind,
      status: d.status,
      due: d.due,
      from_department: d.from_department ?? null,
      to_department: d.to_department ?? null,
      external_to: d.external_to,
      spec: parseJson<Record<string, unknown>[]>(d.spec, []),
      sent_at: d.sent_at,
      gating_approval: gatingApprovalOf(d),
      updated_at: laterStamp(d.updated_at, d.approval_updated_at),
      ...(d.retired_at ? { retired_at: d.retired_at } : {}),
    }),
  );
}

/** Every delivery, unpaged: for callers that need the whole list (MCP prompts). */
export const allDeliveries = async (ctx: AppContext, principal: Principal): Promise<Delivery[]> =>
  (await listDeliveries(ctx, principal)).items;
