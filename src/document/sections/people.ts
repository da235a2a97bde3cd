import type { SyncContext } from '../sync/context.js';
import { diffKeyed, storedRows, type KeyedDiff } from '../sync/keyed.js';
import { orderPositions } from '../sync/order.js';
import { zip } from '../../util/zip.js';
import { keepReferenced } from '../sync/references.js';
import { PERSON_COLUMNS, personRow } from '../tables/people.js';
import type { ApprovalsSection } from './approvals.js';
import type { VersionsSection } from './versions.js';

/*
 * People: the production's crew. The API never writes them, so a sync takes the document's
 * values; one that left the document is deleted unless the API's data still names them (an
 * API key, a landed version, a decided approval, the activity feed): then they are kept.
 */

export class PeopleSection {
  people!: KeyedDiff<'people'>;

  async diff(ctx: SyncContext): Promise<void> {
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
      stored: storedRows(people, (r) => r.ref),
      wanted: zip(doc.people ?? [], peoplePositions).map(([x, position]) => ({
        key: x.ref,
        ref: x.ref,
        row: personRow(x, position, ctx),
      })),
    });
  }

  /** After the approvals and versions have settled. */
  async settle(
    ctx: SyncContext,
    deps: { approvals: ApprovalsSection; versions: VersionsSection },
  ): Promise<void> {
    await keepReferenced(ctx, 'people', this.people, [
      ['api_keys', 'person_id', {}, 'an API key'],
      ['versions', 'created_by_person_id', { exclude: deps.versions.rewrittenOrGone() }, 'a landed version'],
      [
        'approval_steps',
        'person_id',
        { exclude: deps.approvals.keptRows().stepsNotKept },
        'a decided approval',
      ],
      ['activity', 'person_id', {}, 'the activity feed'],
    ]);
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.people.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.people.write(ctx);
  }
}
