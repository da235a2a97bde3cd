import {
  accountsOf,
  departmentRow,
  DEPARTMENT_COLUMNS,
  EPISODE_COLUMNS,
  episodeRow,
  ORGANISATION_COLUMNS,
  organisationRow,
  PERSON_COLUMNS,
  personRow,
} from '../tables/crew.js';
import { idOf, type Id } from '../sync/cells.js';
import type { SyncContext } from '../sync/context.js';
import { diffKeyed, type KeyedDiff } from '../sync/keyed.js';
import { referencedByAny, type Reference } from '../sync/references.js';
import { orderPositions } from '../sync/order.js';
import { insertRows } from '../sync/write.js';
import type { ApprovalsSection } from './approvals.js';
import type { VendorsSection } from './vendors.js';
import type { VersionsSection } from './versions.js';

/*
 * Who and what the production is organised by: episodes, organisations, departments (with
 * the cost accounts they cover) and people. The API never writes these, so a sync takes the
 * document's values; one that left the document is deleted unless the API's data still
 * names it (a person a key or a landed version is bound to, an organisation an administrator's
 * engagement belongs to, a department an API-created asset is in): then it is kept.
 */

const json = (v: unknown): string => JSON.stringify(v);
const stored = <R extends { id: number }>(rows: R[], key: (r: R) => string | null) =>
  rows.flatMap((r) => {
    const k = key(r);
    return k === null ? [] : [{ id: r.id, key: k, values: r }];
  });

export class CrewSection {
  episodes!: KeyedDiff<'episodes'>;
  organisations!: KeyedDiff<'organisations'>;
  departments!: KeyedDiff<'departments'>;
  people!: KeyedDiff<'people'>;
  private accountsWanted = new Map<string, string[]>();

  async diff(ctx: SyncContext): Promise<void> {
    await this.diffEpisodes(ctx);
    await this.diffOrganisations(ctx);
    await this.diffDepartments(ctx);
    await this.diffPeople(ctx);
  }

  private async diffEpisodes(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const doc = ctx.doc;
    const read = pid !== null;
    const episodes = read
      ? await ctx.db
          .selectFrom('episodes')
          .where('production_id', '=', pid)
          .select(['id', 'ref', 'code', 'title', 'position'])
          .execute()
      : [];
    const episodePositions = orderPositions(
      (doc.episodes ?? []).map((e) => e.ref),
      new Map(episodes.flatMap((e) => (e.ref ? [[e.ref, e.position] as const] : []))),
    );
    this.episodes = diffKeyed(ctx, {
      kind: 'episodes',
      table: 'episodes',
      columns: EPISODE_COLUMNS,
      stored: stored(episodes, (r) => r.ref),
      wanted: (doc.episodes ?? []).map((e, i) => ({
        key: e.ref,
        ref: e.ref,
        row: episodeRow(e, episodePositions[i]!, ctx),
      })),
    });
  }

  private async diffOrganisations(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const doc = ctx.doc;
    const read = pid !== null;
    const orgs = read
      ? await ctx.db
          .selectFrom('organisations')
          .where('production_id', '=', pid)
          .select(['id', 'ref', 'name'])
          .execute()
      : [];
    this.organisations = diffKeyed(ctx, {
      kind: 'organisations',
      table: 'organisations',
      columns: ORGANISATION_COLUMNS,
      stored: stored(orgs, (r) => r.ref),
      wanted: (doc.organisations ?? []).map((o) => ({
        key: o.ref,
        ref: o.ref,
        row: organisationRow(o, ctx),
      })),
    });
  }

  private async diffDepartments(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const doc = ctx.doc;
    const read = pid !== null;
    const depts = read
      ? await ctx.db
          .selectFrom('departments')
          .where('production_id', '=', pid)
          .select([
            'id',
            'slug',
            'name',
            'cluster',
            'phases',
            'mission',
            'key_roles',
            'privacy',
            'unveiled',
            'registry',
            'position',
          ])
          .execute()
      : [];
    const accounts = read
      ? await ctx.db
          .selectFrom('department_accounts')
          .where('production_id', '=', pid)
          .select(['department_id', 'account'])
          .execute()
      : [];
    const storedAccounts = new Map<number, string[]>();
    for (const a of accounts) {
      const list = storedAccounts.get(a.department_id);
      if (list) list.push(a.account);
      else storedAccounts.set(a.department_id, [a.account]);
    }
    for (const d of doc.departments ?? []) this.accountsWanted.set(d.slug, accountsOf(d));
    const canon = (list: readonly string[]) => json([...list].sort());
    const departmentPositions = orderPositions(
      (doc.departments ?? []).map((d) => d.slug),
      new Map(depts.map((d) => [d.slug, d.position] as const)),
    );
    this.departments = diffKeyed(ctx, {
      kind: 'departments',
      table: 'departments',
      columns: DEPARTMENT_COLUMNS,
      stored: stored(depts, (r) => r.slug),
      wanted: (doc.departments ?? []).map((d, i) => ({
        key: d.slug,
        ref: d.slug,
        row: departmentRow(d, departmentPositions[i]!, ctx),
      })),
      children: (s, w) =>
        canon(storedAccounts.get(s.id) ?? []) === canon(this.accountsWanted.get(w.key) ?? [])
          ? []
          : ['accounts'],
    });
  }

  private async diffPeople(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const doc = ctx.doc;
    const read = pid !== null;
    const people = read
      ? await ctx.db
          .selectFrom('people')
          .where('production_id', '=', pid)
          .select([
            'id',
            'ref',
            'name',
            'role',
            'department_id',
            'is_hod',
            'is_admin',
            'email',
            'phone',
            'position',
          ])
          .execute()
      : [];
    const peoplePositions = orderPositions(
      (doc.people ?? []).map((x) => x.ref),
      new Map(people.flatMap((x) => (x.ref ? [[x.ref, x.position] as const] : []))),
    );
    this.people = diffKeyed(ctx, {
      kind: 'people',
      table: 'people',
      columns: PERSON_COLUMNS,
      stored: stored(people, (r) => r.ref),
      wanted: (doc.people ?? []).map((x, i) => ({
        key: x.ref,
        ref: x.ref,
        row: personRow(x, peoplePositions[i]!, ctx),
      })),
    });
  }

  /** Runs after every section that can still refer to these objects has settled. */
  async settle(
    ctx: SyncContext,
    deps: { vendors: VendorsSection; approvals: ApprovalsSection; versions: VersionsSection },
  ): Promise<void> {
    const { vendors, approvals, versions } = deps;
    // Episodes: only document rows (scenes, script changes) name them; a retired scene loses the link.
    this.deleteAll(ctx, 'episodes', this.episodes);

    const staysWithEngagement = vendors.engagementsKeepingTheirRows();
    await this.keepReferenced(ctx, 'organisations', this.organisations, [
      ['engagements', 'organisation_id', { exclude: staysWithEngagement.rewrittenOrGone }, 'an engagement'],
    ]);

    const keptApprovals = approvals.keptRows();
    const admin = new Map(
      [...vendors.departmentsOfAdminEngagements()].map((id) => [id, "an administrator's engagement"]),
    );
    await this.keepReferenced(
      ctx,
      'departments',
      this.departments,
      [
        [
          'nodes',
          'department_id',
          { where: { column: 'ref', op: 'is', value: null } },
          'an asset created through the API',
        ],
        ['approvals', 'department_id', { exclude: keptApprovals.departmentNotKept }, 'a decided approval'],
      ],
      admin,
    );

    await this.keepReferenced(ctx, 'people', this.people, [
      ['api_keys', 'person_id', {}, 'an API key'],
      ['versions', 'created_by_person_id', { exclude: versions.rewrittenOrGone() }, 'a landed version'],
      ['approval_steps', 'person_id', { exclude: keptApprovals.stepsNotKept }, 'a decided approval'],
      ['activity', 'person_id', {}, 'the activity feed'],
    ]);
  }

  private deleteAll(ctx: SyncContext, kind: 'episodes', diff: KeyedDiff<'episodes'>) {
    for (const r of diff.removed) {
      diff.deletes.push(r.id);
      ctx.record(kind, 'deleted', r.key, r.id);
    }
  }

  /** What something that stays still refers to is kept (the plan says what); the rest is deleted. */
  private async keepReferenced<T extends 'organisations' | 'departments' | 'people'>(
    ctx: SyncContext,
    kind: T,
    diff: KeyedDiff<T>,
    refs: Reference[],
    also: ReadonlyMap<number, string> = new Map(),
  ): Promise<void> {
    const ids = diff.removed.map((r) => r.id);
    const held = ids.length ? await referencedByAny(ctx, ids, refs) : new Map<number, string>();
    for (const r of diff.removed) {
      const by = held.get(r.id) ?? also.get(r.id);
      if (by) {
        ctx.record(kind, 'kept', r.key, r.id, { reason: `referred to by ${by}` });
      } else {
        diff.deletes.push(r.id);
        ctx.record(kind, 'deleted', r.key, r.id);
      }
    }
    diff.removed = [];
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.people.deleteRemoved(ctx);
    await this.departments.deleteRemoved(ctx);
    await this.organisations.deleteRemoved(ctx);
    await this.episodes.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext, afterEpisodes: () => Promise<void>): Promise<void> {
    await this.episodes.write(ctx);
    await afterEpisodes();
    await this.organisations.write(ctx);
    await this.departments.write(ctx);
    // accounts of new departments, and of departments whose accounts changed, are written anew
    const replace: Array<{ id: Id; slug: string }> = [
      ...this.departments.creates.map((c) => ({ id: c.pending, slug: c.key })),
      ...this.departments.updates
        .filter((u) => u.children.includes('accounts'))
        .map((u) => ({ id: u.id, slug: u.key })),
    ];
    const replaced = this.departments.updates.filter((u) => u.children.includes('accounts')).map((u) => u.id);
    if (replaced.length)
      await ctx.db.deleteFrom('department_accounts').where('department_id', 'in', replaced).execute();
    await insertRows(
      ctx.db,
      'department_accounts',
      replace.flatMap(({ id, slug }) =>
        (this.accountsWanted.get(slug) ?? []).map((account) => ({
          production_id: idOf(ctx.productionId),
          department_id: idOf(id),
          account,
        })),
      ),
    );
    await this.people.write(ctx);
  }
}
