import type { SyncContext } from '../sync/context.js';
import { diffKeyed, storedRows, type KeyedDiff } from '../sync/keyed.js';
import { keepReferenced } from '../sync/references.js';
import { ORGANISATION_COLUMNS, organisationRow } from '../tables/organisations.js';
import type { EngagementsSection } from './engagements.js';

/*
 * Organisations: vendors and the companies engagements and purchase orders name. The API never
 * writes them, so a sync takes the document's values; one that left the document is deleted
 * unless an engagement the sync does not rewrite (an administrator's) still belongs to it.
 */

export class OrganisationsSection {
  organisations!: KeyedDiff<'organisations'>;

  async diff(ctx: SyncContext): Promise<void> {
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
      stored: storedRows(orgs, (r) => r.ref),
      wanted: (doc.organisations ?? []).map((o) => ({
        key: o.ref,
        ref: o.ref,
        row: organisationRow(o, ctx),
      })),
    });
  }

  /** After the engagements have settled. */
  async settle(ctx: SyncContext, engagements: EngagementsSection): Promise<void> {
    const staying = engagements.engagementsKeepingTheirRows();
    await keepReferenced(ctx, 'organisations', this.organisations, [
      ['engagements', 'organisation_id', { exclude: staying.rewrittenOrGone }, 'an engagement'],
    ]);
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.organisations.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.organisations.write(ctx);
  }
}
