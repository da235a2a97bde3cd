import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Insertable } from 'kysely';
import type { Database } from '../../db/schema.js';

export function engagementRows(db: Db, productionId: number, ids?: readonly number[]) {
  let q = db
    .selectFrom('engagements as e')
    .innerJoin('organisations as o', 'o.id', 'e.organisation_id')
    .where('e.production_id', '=', productionId)
    .select((eb) => [
      'e.id',
      'e.ref',
      'e.source',
      'e.created_at',
      'e.retired_at',
      'o.id as organisation_id',
      'o.ref as organisation_ref',
      'o.name as organisation_name',
      eb
        .selectFrom('api_keys as k')
        .whereRef('k.engagement_id', '=', 'e.id')
        .where('k.revoked_at', 'is', null)
        .select(eb.fn.countAll().as('n'))
        .as('keys'),
    ]);
  if (ids) q = q.where('e.id', 'in', ids.length ? [...ids] : [-1]);
  return q.orderBy('e.id').execute();
}

export function engagementDepartments(db: Db, productionId: number) {
  return db
    .selectFrom('engagement_departments as ed')
    .innerJoin('engagements as e', 'e.id', 'ed.engagement_id')
    .innerJoin('departments as d', 'd.id', 'ed.department_id')
    .where('e.production_id', '=', productionId)
    .select(['ed.engagement_id', 'd.slug'])
    .orderBy('d.position')
    .orderBy('d.id')
    .execute();
}

/** Every grant of the production with what it names, in one query. */
export function grantRows(
  db: Db,
  productionId: number,
  filter: { engagementId?: number; ids?: number[] } = {},
) {
  let q = db
    .selectFrom('grants as g')
    .innerJoin('engagements as e', 'e.id', 'g.engagement_id')
    .leftJoin('nodes as n', 'n.id', 'g.node_id')
    .leftJoin('episodes as ep', 'ep.id', 'n.episode_id')
    .leftJoin('deliveries as d', 'd.id', 'g.delivery_id')
    .where('g.production_id', '=', productionId)
    .select([
      'g.id',
      'g.engagement_id',
      'e.ref as engagement_ref',
      'e.retired_at as engagement_retired_at',
      'g.kind',
      'g.node_id',
      'n.label as node_label',
      'n.retired_at as node_retired_at',
      'ep.code as episode_code',
      'g.delivery_id',
      'd.title as delivery_title',
      'd.retired_at as delivery_retired_at',
      'g.access',
      'g.expires_at',
      'g.revoked_at',
      'g.source',
      'g.created_at',
    ]);
  if (filter.engagementId !== undefined) q = q.where('g.engagement_id', '=', filter.engagementId);
  if (filter.ids) q = q.where('g.id', 'in', filter.ids.length ? filter.ids : [-1]);
  return q.orderBy('g.engagement_id').orderBy('g.id').execute();
}

export type GrantRow = Awaited<ReturnType<typeof grantRows>>[number];

/**
 * What a ref already names in the production, if anything: refs are unique across the whole
 * production document, so an engagement made here must not take one (an export would then
 * carry two objects with one ref).
 */
export async function refOwner(db: Db, productionId: number, ref: string): Promise<string | null> {
  const kinds: Array<[string, string, string]> = [
    ['episodes', 'ref', 'an episode'],
    ['organisations', 'ref', 'an organisation'],
    ['departments', 'slug', 'a department'],
    ['people', 'ref', 'a person'],
    ['nodes', 'ref', 'a scene or asset'],
    ['versions', 'ref', 'a version'],
    ['ingredients', 'ref', 'an ingredient'],
    ['shoot_days', 'ref', 'a shoot day'],
    ['approvals', 'ref', 'an approval'],
    ['department_notes', 'ref', 'a department note'],
    ['deliveries', 'ref', 'a delivery'],
    ['engagements', 'ref', 'an engagement'],
    ['purchase_orders', 'ref', 'a purchase order'],
    ['script_changes', 'ref', 'a script change'],
    ['generation_jobs', 'ref', 'a generation job'],
  ];
  const parts = kinds.map(
    ([table, column, what]) =>
      sql`select ${what} as what from ${sql.table(table)} where production_id = ${productionId} and ${sql.ref(column)} = ${ref}`,
  );
  const { rows } = await sql<{ what: string }>`${sql.join(parts, sql` union all `)}`.execute(db);
  return rows[0]?.what ?? null;
}

export function keyRows(
  db: Db,
  productionId: number,
  filter: { engagementId?: number; ids?: readonly number[] } = {},
) {
  let q = db
    .selectFrom('api_keys as k')
    .leftJoin('engagements as e', 'e.id', 'k.engagement_id')
    .leftJoin('people as p', 'p.id', 'k.person_id')
    .where('k.production_id', '=', productionId)
    // a console session's own key is the session's, listed and ended with it (admin/sessions)
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('console_sessions as cs').whereRef('cs.key_id', '=', 'k.id').select('cs.id')),
      ),
    )
    .select([
      'k.id',
      'k.prefix',
      'k.label',
      'k.scopes',
      'k.engagement_id',
      'e.ref as engagement_ref',
      'k.person_id',
      'p.name as person_name',
      'k.created_at',
      'k.last_used_at',
      'k.revoked_at',
      'k.expires_at',
    ]);
  if (filter.engagementId !== undefined) q = q.where('k.engagement_id', '=', filter.engagementId);
  if (filter.ids) q = q.where('k.id', 'in', filter.ids.length ? [...filter.ids] : [-1]);
  return q.orderBy('k.id').execute();
}

// ---- what a new engagement, grant or key names

export function organisationById(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('organisations')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .select(['id', 'name'])
    .executeTakeFirst();
}

export function departmentsBySlug(db: Db, productionId: number, slugs: readonly string[]) {
  return db
    .selectFrom('departments')
    .where('production_id', '=', productionId)
    .where('slug', 'in', [...slugs])
    .select(['id', 'slug'])
    .execute();
}

/** An engagement, archived or not. */
export function engagementById(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('engagements')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .select(['id', 'ref', 'retired_at'])
    .executeTakeFirst();
}

export function liveNode(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('nodes')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('retired_at', 'is', null)
    .select(['kind'])
    .executeTakeFirst();
}

export function liveDelivery(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('deliveries')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('retired_at', 'is', null)
    .select(['id', 'title', 'kind'])
    .executeTakeFirst();
}

export function personById(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('people')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .select('id')
    .executeTakeFirst();
}

// ---- writes

export async function insertEngagement(db: Db, row: Insertable<Database['engagements']>): Promise<number> {
  const { id } = await db.insertInto('engagements').values(row).returning('id').executeTakeFirstOrThrow();
  return id;
}

export async function insertEngagementDepartments(
  db: Db,
  engagementId: number,
  departmentIds: readonly number[],
): Promise<void> {
  if (!departmentIds.length) return;
  await db
    .insertInto('engagement_departments')
    .values(departmentIds.map((id) => ({ engagement_id: engagementId, department_id: id })))
    .execute();
}

/** Archives a live engagement; undefined when there is none by that id or it is archived already. */
export function retireEngagement(db: Db, productionId: number, id: number, by: { at: string; by: string }) {
  return db
    .updateTable('engagements')
    .set({ retired_at: by.at, retired_by: by.by })
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('retired_at', 'is', null)
    .returning(['ref'])
    .executeTakeFirst();
}

export async function insertGrant(db: Db, row: Insertable<Database['grants']>): Promise<number> {
  const { id } = await db.insertInto('grants').values(row).returning('id').executeTakeFirstOrThrow();
  return id;
}

/** Revokes a grant not yet revoked; false when there was none to revoke. */
export async function revokeGrantRow(
  db: Db,
  productionId: number,
  id: number,
  by: { at: string; by: string },
): Promise<boolean> {
  const moved = await db
    .updateTable('grants')
    .set({ revoked_at: by.at, revoked_by: by.by })
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(moved.numUpdatedRows) > 0;
}

/** Revokes a key not yet revoked; false when there was none to revoke. */
export async function revokeKeyRow(db: Db, productionId: number, id: number, at: string): Promise<boolean> {
  const moved = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(moved.numUpdatedRows) > 0;
}
