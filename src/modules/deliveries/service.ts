import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { laterStamp } from '../../db/updated-at.js';
import { parseJson, toInt } from '../../db/values.js';
import { MAX_PAGE, openPage, type Page, type PagedList, type PageQuery } from '../../domain/page.js';
import { errors } from '../../errors.js';
import { groupBy } from '../../util/group-by.js';
import { packageFiles, submittedFiles } from '../turnovers/repository.js';
import { toDeliveryFile, toSubmissionRow } from '../turnovers/submission-list.js';
import * as repo from './repository.js';
import { SUBMISSIONS_PER_DELIVERY, type Delivery } from './schemas.js';

type DeliveryRow = repo.DeliveryRow;

/** The approval that gates a delivery: every column of the joined row, or none when it has none. */
function gatingApprovalOf(d: DeliveryRow): Delivery['gating_approval'] {
  const { approval_id: id, approval_title: title, approval_status: status } = d;
  return id == null || title == null || status == null ? null : { id, title, status };
}

const DELIVERIES: PagedList = { name: 'deliveries', key: ['int', 'int'], maxLimit: MAX_PAGE };

/**
 * The rows with their packages and their newest submissions (with files and reviews): three
 * queries whatever the number of rows, files or submissions.
 */
async function withContents(db: Db, productionId: number, rows: readonly DeliveryRow[]): Promise<Delivery[]> {
  const ids = rows.map((d) => d.id);
  const [files, items] = await Promise.all([
    packageFiles(db, productionId, ids),
    repo.latestSubmissions(db, productionId, ids, SUBMISSIONS_PER_DELIVERY),
  ]);
  const submitted = await submittedFiles(
    db,
    productionId,
    items.map((w) => w.id),
  );
  const packageOf = groupBy(files, (m) => m.delivery_id);
  const itemsOf = groupBy(items, (w) => w.delivery_id);
  const filesOf = groupBy(submitted, (m) => m.work_item_id);
  return rows.map((d) => {
    const own = itemsOf.get(d.id) ?? [];
    return {
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
      package: (packageOf.get(d.id) ?? []).map(toDeliveryFile),
      submissions: own.map((w) => toSubmissionRow(w, filesOf.get(w.id) ?? [])),
      submissions_total: own[0] ? toInt(own[0].total) : 0,
      updated_at: laterStamp(laterStamp(d.updated_at, d.approval_updated_at), d.submissions_updated_at),
      ...(d.retired_at ? { retired_at: d.retired_at } : {}),
    };
  });
}

export async function listDeliveries(
  ctx: AppContext,
  principal: Principal,
  query: PageQuery = {},
): Promise<Page<Delivery>> {
  const { window, close } = openPage(DELIVERIES, principal.productionId, { ...query });
  const rows = await repo.listDeliveries(ctx.db, principal.productionId, window);
  const page = close(
    rows,
    (d) => [d.position, d.id],
    (d) => d,
  );
  return { items: await withContents(ctx.db, principal.productionId, page.items), next: page.next };
}

/** One delivery as GET /deliveries shows it (a write's answer); 404 when the production has none. */
export async function oneDelivery(db: Db, productionId: number, id: number): Promise<Delivery> {
  const row = await repo.deliveryById(db, productionId, id);
  if (!row) throw errors.notFound('delivery');
  const [delivery] = await withContents(db, productionId, [row]);
  return delivery!;
}

/** Every delivery, unpaged: for callers that need the whole list (MCP prompts). */
export const allDeliveries = async (ctx: AppContext, principal: Principal): Promise<Delivery[]> =>
  (await listDeliveries(ctx, principal)).items;
