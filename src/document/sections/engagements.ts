import { idOf, same, type Id } from '../sync/cells.js';
import { withOccurrenceKeys, type SyncContext } from '../sync/context.js';
import { diffKeyed, type KeyedDiff } from '../sync/keyed.js';
import { madeUpRef } from '../sync/made-up-refs.js';
import { referencedByAny } from '../sync/references.js';
import { insertRows } from '../sync/write.js';
import {
  ENGAGEMENT_COLUMNS,
  engagementRow,
  GRANT_COLUMNS,
  grantKey,
  grantRow,
} from '../tables/engagements.js';
import { isLiveRow } from './deliveries.js';

/*
 * Engagements (the vendors engaged on the production, with their departments) and their
 * grants: what vendors reach.
 * - An engagement that left the document is retired (archived) when anything refers to it
 *   (keys, submissions, uploads, an administrator's grants) and deleted otherwise. An archived
 *   engagement reaches nothing; its keys stay, reaching nothing, until revoked.
 * - Engagements and grants an administrator made (source `admin`) are never retired or
 *   revoked by a sync; an engagement an administrator archived, or a grant an administrator
 *   revoked, stays so even while the document still lists it (the plan says "kept").
 * - A grant is known by engagement, kind, target and access. One that left the document is
 *   revoked, never deleted (it is the record of what a vendor could reach), unless its
 *   engagement is deleted with it.
 */

export class EngagementsSection {
  engagements!: KeyedDiff<'engagements'>;
  grants!: KeyedDiff<'grants'>;
  private readonly retireEngagements: number[] = [];
  private readonly revokeGrants: number[] = [];
  private readonly departmentsWanted = new Map<string, Id[]>();
  private readonly departmentsStored = new Map<number, number[]>();
  private storedEngagementIds: number[] = [];

  async diff(ctx: SyncContext): Promise<void> {
    await this.diffEngagements(ctx);
    await this.diffGrants(ctx);
  }

  private async diffEngagements(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const doc = ctx.doc;
    const engagements =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('engagements')
            .where('production_id', '=', pid)
            .select(['id', 'ref', 'organisation_id', 'source', 'retired_at', 'retired_by'])
            .orderBy('id')
            .execute();
    this.storedEngagementIds = engagements.map((e) => e.id);
    if (engagements.length) {
      for (const d of await ctx.db
        .selectFrom('engagement_departments')
        .where(
          'engagement_id',
          'in',
          engagements.map((e) => e.id),
        )
        .select(['engagement_id', 'department_id'])
        .execute()) {
        const list = this.departmentsStored.get(d.engagement_id);
        if (list) list.push(d.department_id);
        else this.departmentsStored.set(d.engagement_id, [d.department_id]);
      }
    }
    for (const e of doc.engagements ?? []) {
      this.departmentsWanted.set(
        e.ref,
        [...new Set(e.departments ?? [])].map((d) => ctx.need(d)),
      );
    }
    this.engagements = diffKeyed(ctx, {
      kind: 'engagements',
      table: 'engagements',
      columns: ENGAGEMENT_COLUMNS,
      stored: engagements.flatMap((e) => (e.ref === null ? [] : [{ id: e.id, key: e.ref, values: e }])),
      wanted: (doc.engagements ?? []).map((e) => ({ key: e.ref, ref: e.ref, row: engagementRow(e, ctx) })),
      stands: (s) =>
        s.values.retired_at && s.values.retired_by !== 'document' ? ['retired_at', 'retired_by'] : [],
      keptReason: 'archived by an administrator',
      children: (s, w) => {
        const have = [...(this.departmentsStored.get(s.id) ?? [])].sort((a, b) => a - b);
        const want = this.departmentsWanted.get(w.key) ?? [];
        const sortedWant = want.every((x) => typeof x === 'number') ? [...want].sort((a, b) => a - b) : want;
        return have.length === sortedWant.length && have.every((x, i) => same(x, sortedWant[i]))
          ? []
          : ['departments'];
      },
    });
  }

  private async diffGrants(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const doc = ctx.doc;
    const grants =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('grants as g')
            .innerJoin('engagements as e', 'e.id', 'g.engagement_id')
            .leftJoin('nodes as n', 'n.id', 'g.node_id')
            .leftJoin('deliveries as d', 'd.id', 'g.delivery_id')
            .where('g.production_id', '=', pid)
            .select([
              'g.id',
              'g.kind',
              'g.access',
              'g.expires_at',
              'g.revoked_at',
              'g.revoked_by',
              'g.source',
              'g.node_id',
              'g.delivery_id',
              'e.ref as engagement_ref',
              'n.ref as node_ref',
              'd.ref as delivery_ref',
            ])
            .execute();
    // the document's own grants pair first; an administrator's grant the document also lists pairs after
    grants.sort((a, b) => (a.source === b.source ? a.id - b.id : a.source === 'document' ? -1 : 1));
    const storedGrants = withOccurrenceKeys(grants, (g) => {
      // a node the API created is named by the ref an export makes up for it
      const node = g.node_id === null ? null : (g.node_ref ?? madeUpRef('asset', g.node_id));
      const engagement = g.engagement_ref;
      // a grant on something the document cannot name never pairs with the document's
      return engagement === null || (g.delivery_id !== null && g.delivery_ref === null)
        ? `#${g.id}`
        : grantKey({
            engagement,
            kind: g.kind,
            target: node ?? g.delivery_ref ?? null,
            access: g.access,
          });
    });
    const storedByKey = new Map(storedGrants.map(([g, key]) => [key, g]));
    const docGrants = (doc.engagements ?? []).flatMap((e) => (e.grants ?? []).map((g) => ({ e, g })));
    const wantedGrants = withOccurrenceKeys(docGrants, ({ e, g }) =>
      grantKey({
        engagement: e.ref,
        kind: g.kind,
        target: (g.node ? ctx.canonical(g.node) : null) ?? g.delivery ?? null,
        access: g.access ?? null,
      }),
    );
    this.grants = diffKeyed(ctx, {
      kind: 'grants',
      table: 'grants',
      columns: GRANT_COLUMNS,
      stored: storedGrants.map(([g, key]) => ({ id: g.id, key, values: g })),
      // a grant the document already revoked keeps the time it was revoked
      wanted: wantedGrants.map(([{ e, g }, key]) => ({
        key,
        ref: null,
        row: grantRow(e, g, storedByKey.get(key), ctx),
      })),
      stands: (s) =>
        s.values.revoked_at && s.values.revoked_by !== 'document' ? ['revoked_at', 'revoked_by'] : [],
      keptReason: 'revoked by an administrator',
    });
    // only the document's own grants can leave it
    this.grants.removed = this.grants.removed.filter((r) => r.values.source === 'document');
  }

  /** Before the deliveries settle: whether an engagement is deleted decides its grants' fate. */
  async settle(ctx: SyncContext): Promise<void> {
    const engagements = this.engagements.removed.filter(
      (r) => r.values.source === 'document' && isLiveRow(r),
    );
    const engagementIds = engagements.map((r) => r.id);
    const heldEngagements = engagementIds.length
      ? await referencedByAny(ctx, engagementIds, [
          ['api_keys', 'engagement_id', {}, 'API keys'],
          ['work_items', 'engagement_id', {}, 'submissions'],
          ['media', 'uploader_engagement_id', {}, 'uploads'],
          [
            'grants',
            'engagement_id',
            { where: { column: 'source', op: '<>', value: 'document' } },
            "an administrator's grants",
          ],
        ])
      : new Map<number, string>();
    const deletedEngagements = new Set<number>();
    for (const r of engagements) {
      const by = heldEngagements.get(r.id);
      if (by) {
        this.retireEngagements.push(r.id);
        ctx.record('engagements', 'retired', r.key, r.id, { reason: `archived; referred to by ${by}` });
      } else {
        deletedEngagements.add(r.id);
        this.engagements.deletes.push(r.id);
        ctx.record('engagements', 'deleted', r.key, r.id);
      }
    }

    for (const r of this.grants.removed) {
      const engagement = r.values.engagement_id;
      if (engagement !== undefined && deletedEngagements.has(engagement)) {
        this.grants.deletes.push(r.id);
        ctx.record('grants', 'deleted', r.key, r.id);
      } else if (!r.values.revoked_at) {
        this.revokeGrants.push(r.id);
        ctx.record('grants', 'retired', r.key, r.id, { reason: 'revoked' });
      }
    }
  }

  /** Engagement rows whose organisation this sync rewrites or deletes (the others keep theirs). */
  engagementsKeepingTheirRows(): { rewrittenOrGone: Set<number> } {
    return { rewrittenOrGone: new Set([...this.engagements.matched.values(), ...this.engagements.deletes]) };
  }

  /** Departments covered by engagements this sync does not rewrite (an administrator's, or archived ones). */
  departmentsOfAdminEngagements(): Set<number> {
    const rewritten = this.engagementsKeepingTheirRows().rewrittenOrGone;
    const out = new Set<number>();
    for (const id of this.storedEngagementIds) {
      if (rewritten.has(id)) continue;
      for (const d of this.departmentsStored.get(id) ?? []) out.add(d);
    }
    return out;
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.grants.deleteRemoved(ctx);
    for (let i = 0; i < this.revokeGrants.length; i += 1000) {
      await ctx.db
        .updateTable('grants')
        .set({ revoked_at: ctx.now, revoked_by: 'document' })
        .where('id', 'in', this.revokeGrants.slice(i, i + 1000))
        .execute();
    }
    await this.engagements.deleteRemoved(ctx);
    for (let i = 0; i < this.retireEngagements.length; i += 1000) {
      await ctx.db
        .updateTable('engagements')
        .set({ retired_at: ctx.now, retired_by: 'document' })
        .where('id', 'in', this.retireEngagements.slice(i, i + 1000))
        .execute();
    }
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.engagements.write(ctx);
    const rewrite = this.engagements.updates.filter((u) => u.children.length).map((u) => u.id);
    if (rewrite.length) {
      await ctx.db.deleteFrom('engagement_departments').where('engagement_id', 'in', rewrite).execute();
    }
    const rows: Array<{ id: Id; key: string }> = [
      ...this.engagements.creates.map((c) => ({ id: c.pending, key: c.key })),
      ...this.engagements.updates.filter((u) => u.children.length).map((u) => ({ id: u.id, key: u.key })),
    ];
    await insertRows(
      ctx.db,
      'engagement_departments',
      rows.flatMap(({ id, key }) =>
        (this.departmentsWanted.get(key) ?? []).map((d) => ({
          engagement_id: idOf(id),
          department_id: idOf(d),
        })),
      ),
    );
    await this.grants.write(ctx);
  }
}
