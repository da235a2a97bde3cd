import { idOf, type Id } from '../sync/cells.js';
import type { SyncContext } from '../sync/context.js';
import { diffKeyed, storedRows, type KeyedDiff } from '../sync/keyed.js';
import { orderPositions } from '../sync/order.js';
import { zip } from '../../util/zip.js';
import { keepReferenced } from '../sync/references.js';
import { insertRows } from '../sync/write.js';
import { accountsOf, DEPARTMENT_COLUMNS, departmentRow } from '../tables/departments.js';
import type { ApprovalsSection } from './approvals.js';
import type { EngagementsSection } from './engagements.js';

/*
 * Departments, with the cost accounts they cover. The API never writes them, so a sync takes
 * the document's values; one that left the document is deleted unless the API's data still
 * names it (an asset created through the API, a decided approval, an administrator's
 * engagement): then it is kept.
 */

const json = (v: unknown): string => JSON.stringify(v);

export class DepartmentsSection {
  departments!: KeyedDiff<'departments'>;
  private readonly accountsWanted = new Map<string, string[]>();

  async diff(ctx: SyncContext): Promise<void> {
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
      stored: storedRows(depts, (r) => r.slug),
      wanted: zip(doc.departments ?? [], departmentPositions).map(([d, position]) => ({
        key: d.slug,
        ref: d.slug,
        row: departmentRow(d, position, ctx),
      })),
      children: (s, w) =>
        canon(storedAccounts.get(s.id) ?? []) === canon(this.accountsWanted.get(w.key) ?? [])
          ? []
          : ['accounts'],
    });
  }

  /** After the approvals and engagements have settled. */
  async settle(
    ctx: SyncContext,
    deps: { engagements: EngagementsSection; approvals: ApprovalsSection },
  ): Promise<void> {
    const admin = new Map(
      [...deps.engagements.departmentsOfAdminEngagements()].map((id) => [
        id,
        "an administrator's engagement",
      ]),
    );
    await keepReferenced(
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
        [
          'approvals',
          'department_id',
          { exclude: deps.approvals.keptRows().departmentNotKept },
          'a decided approval',
        ],
      ],
      admin,
    );
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.departments.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext): Promise<void> {
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
  }
}
