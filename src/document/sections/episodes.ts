import type { SyncContext } from '../sync/context.js';
import { diffKeyed, storedRows, type KeyedDiff } from '../sync/keyed.js';
import { orderPositions } from '../sync/order.js';
import { zip } from '../../util/zip.js';
import { EPISODE_COLUMNS, episodeRow } from '../tables/episodes.js';

/*
 * Episodes of an episodic production. The API never writes them, so a sync takes the
 * document's values; only document rows (scenes, script changes) name an episode, so one that
 * left the document is deleted (a retired scene loses the link).
 */

export class EpisodesSection {
  episodes!: KeyedDiff<'episodes'>;

  async diff(ctx: SyncContext): Promise<void> {
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
      stored: storedRows(episodes, (r) => r.ref),
      wanted: zip(doc.episodes ?? [], episodePositions).map(([e, position]) => ({
        key: e.ref,
        ref: e.ref,
        row: episodeRow(e, position, ctx),
      })),
    });
  }

  settle(ctx: SyncContext): void {
    for (const r of this.episodes.removed) {
      this.episodes.deletes.push(r.id);
      ctx.record('episodes', 'deleted', r.key, r.id);
    }
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.episodes.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.episodes.write(ctx);
  }
}
