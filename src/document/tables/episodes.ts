import type { Db } from '../../db/index.js';
import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { type ExportContext, nameOf } from './export-context.js';
import type { RowContext } from './row-context.js';

/** Episodes: the row each document object becomes, and (for an export) the objects the rows become. */

export type DocEpisode = Required<ProductionDocument>['episodes'][number];

export const EPISODE_COLUMNS = {
  code: 'text',
  title: 'text',
  position: 'integer',
} satisfies ColumnTypes<'episodes'>;

export const episodeRow = <I extends Id>(e: DocEpisode, position: number, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: e.ref,
  code: e.code,
  title: e.title ?? '',
  position,
});

export const readEpisodes = (db: Db, pid: number) =>
  db
    .selectFrom('episodes')
    .where('production_id', '=', pid)
    .selectAll()
    .orderBy('position')
    .orderBy('id')
    .execute();
export type StoredEpisode = Awaited<ReturnType<typeof readEpisodes>>[number];

/** A single production's document lists no episodes. */
export const episodesDoc = (episodes: readonly StoredEpisode[], ex: ExportContext) =>
  ex.episodic
    ? {
        episodes: episodes.map((e): DocEpisode => ({
          ref: nameOf(ex.episode, e.id),
          code: e.code,
          title: e.title,
        })),
      }
    : {};
