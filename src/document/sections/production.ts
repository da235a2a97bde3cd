import type { Insertable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { ProductionsTable } from '../../db/schema.js';
import { changedColumns, idOf, Pending } from '../sync/cells.js';
import type { SyncContext } from '../sync/context.js';
import type { ColumnTypes } from '../sync/write.js';
import { DocumentError } from '../parse.js';
import type { ProductionDocument } from '../schema.js';
import type { ExportContext } from '../tables/export-context.js';
import { productionRow } from '../tables/production.js';

/** The production row itself: created by the first import, updated in place by a sync. */

const COLUMNS = {
  title: 'text',
  logline: 'text',
  status: 'text',
  phase: 'text',
  accent: 'text',
  format: 'text',
  season_number: 'integer',
  filespace: 'text',
} satisfies ColumnTypes<'productions'>;

type Row = Omit<Insertable<ProductionsTable>, 'current_episode_id' | 'created_at'>;

export class ProductionSection {
  private row!: Row;
  private stored: (Row & { id: number; current_episode_id: number | null }) | undefined;
  private fields: string[] = [];

  async diff(ctx: SyncContext): Promise<void> {
    const p = ctx.doc.production;
    this.row = productionRow(p);
    this.stored = await ctx.db
      .selectFrom('productions')
      .where('code', '=', p.code)
      .selectAll()
      .executeTakeFirst();
    if (!this.stored) {
      ctx.productionId = new Pending('production');
      ctx.countsOf('production').created++;
      return;
    }
    if (!ctx.options.replace && !ctx.options.planOnly) {
      throw new DocumentError(
        `production.code: a production "${p.code}" exists already; import with --replace to update it, or with --plan to see what that would change.`,
      );
    }
    ctx.productionId = this.stored.id;
    ctx.productionExists = true;
    this.fields = changedColumns(this.stored, this.row, Object.keys(COLUMNS) as Array<keyof Row>);
  }

  /** Runs once the episodes are known: the current episode is a field of the production. */
  settle(ctx: SyncContext): void {
    const current = ctx.id(ctx.doc.production.current_episode);
    if (
      this.stored &&
      !(current === null
        ? this.stored.current_episode_id === null
        : current === this.stored.current_episode_id)
    ) {
      this.fields.push('current_episode');
    }
    if (!this.stored) return;
    if (this.fields.length)
      ctx.record('production', 'updated', this.row.code, this.stored.id, { fields: this.fields });
    else ctx.unchanged('production');
  }

  async write(ctx: SyncContext): Promise<void> {
    if (!this.stored) {
      const out = await ctx.db
        .insertInto('productions')
        .values({ ...this.row, created_at: ctx.now })
        .returning('id')
        .executeTakeFirstOrThrow();
      (ctx.productionId as Pending).id = out.id;
      return;
    }
    const set: Partial<Row> = {};
    for (const f of this.fields)
      if (f in COLUMNS) (set as Record<string, unknown>)[f] = this.row[f as keyof Row];
    if (Object.keys(set).length)
      await ctx.db.updateTable('productions').set(set).where('id', '=', this.stored.id).execute();
  }

  /** After the episodes are written. */
  async writeCurrentEpisode(ctx: SyncContext): Promise<void> {
    const current = ctx.id(ctx.doc.production.current_episode);
    if (this.stored && !this.fields.includes('current_episode')) return;
    if (!this.stored && current === null) return;
    await ctx.db
      .updateTable('productions')
      .set({ current_episode_id: current === null ? null : idOf(current) })
      .where('id', '=', idOf(ctx.productionId))
      .execute();
  }
}

/** The production row an export starts from, or undefined when there is none by that code. */
export const readProduction = (db: Db, code: string) =>
  db.selectFrom('productions').where('code', '=', code).selectAll().executeTakeFirst();
export type StoredProduction = NonNullable<Awaited<ReturnType<typeof readProduction>>>;

export const productionDoc = (p: StoredProduction, ex: ExportContext): ProductionDocument['production'] => ({
  code: p.code,
  title: p.title,
  logline: p.logline,
  status: p.status,
  phase: p.phase,
  accent: p.accent,
  format: p.format,
  ...(ex.episodic && p.season_number !== null ? { season_number: p.season_number } : {}),
  ...(p.current_episode_id !== null ? { current_episode: ex.episode.get(p.current_episode_id) } : {}),
  ...(p.filespace !== null ? { filespace: p.filespace } : {}),
});
