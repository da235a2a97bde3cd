import type { Insertable } from 'kysely';
import type { ActivityTable, LibraryFilesTable } from '../../db/schema.js';
import { idOf, resolved, type Wanted } from '../sync/cells.js';
import { occurrenceKeys, withOccurrenceKeys, type SyncContext } from '../sync/context.js';
import { zip } from '../../util/zip.js';
import { diffKeyed, madeUpKeys, type KeyedDiff } from '../sync/keyed.js';
import { madeUpRef } from '../sync/made-up-refs.js';
import { insertRows } from '../sync/write.js';
import {
  activityKey,
  activityRow,
  JOB_COLUMNS,
  jobKey,
  jobRow,
  libraryRow,
  SCRIPT_CHANGE_COLUMNS,
  scriptChangeKey,
  scriptChangeRow,
} from '../tables/feed.js';
import { iso } from '../tables/row-context.js';

/*
 * What happened and what is on disk: script changes and generation jobs (by ref, or by their
 * content), the activity feed and the library the storage agent reports.
 * - Activity is history: the document's entries the production does not have yet are
 *   appended (an entry is known by its time, actor, verb, summary and node); none is ever
 *   changed or removed.
 * - The library belongs to the storage agent: a path the production does not have yet is
 *   added; a row the agent (or an earlier import) wrote is never changed or retired by a sync.
 */

export class FeedSection {
  scriptChanges!: KeyedDiff<'script_changes'>;
  jobs!: KeyedDiff<'generation_jobs'>;
  private activity: Array<Wanted<Insertable<ActivityTable>>> = [];
  private library: Array<Insertable<LibraryFilesTable>> = [];

  async diff(ctx: SyncContext): Promise<void> {
    await this.diffScriptChanges(ctx);
    await this.diffJobs(ctx);
    await this.diffActivity(ctx);
    await this.diffLibrary(ctx);
  }

  private async diffScriptChanges(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const changes =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('script_changes as c')
            .leftJoin('nodes as s', 's.id', 'c.scene_node_id')
            .where('c.production_id', '=', pid)
            .select([
              'c.id',
              'c.ref',
              'c.scene_node_id',
              'c.episode_id',
              'c.change',
              'c.summary',
              'c.status',
              'c.detected_at',
              's.ref as scene_ref',
            ])
            .orderBy('c.id')
            .execute();
    const storedChanges = withOccurrenceKeys(changes, (c) => scriptChangeKey(c.ref, c.scene_ref, c)).map(
      ([c, key]) => ({ id: c.id, key, values: c }),
    );
    const docChanges = ctx.doc.script_changes ?? [];
    const wantedKeys = madeUpKeys(
      'change',
      storedChanges,
      docChanges.map((c) => c.ref),
      occurrenceKeys(docChanges, (c) =>
        scriptChangeKey(c.ref, c.scene, { ...c, detected_at: iso(c.detected_at) }),
      ),
    );
    const sceneEpisode = new Map((ctx.doc.scenes ?? []).map((s) => [s.ref, s.episode ?? null]));
    this.scriptChanges = diffKeyed(ctx, {
      kind: 'script_changes',
      table: 'script_changes',
      columns: SCRIPT_CHANGE_COLUMNS,
      stored: storedChanges,
      wanted: zip(docChanges, wantedKeys).map(([c, key]) => ({
        key,
        ref: c.ref ?? null,
        row: scriptChangeRow(c, sceneEpisode.get(c.scene), ctx),
      })),
    });
  }

  private async diffJobs(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const jobs =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('generation_jobs')
            .where('production_id', '=', pid)
            .select(['id', 'ref', 'kind', 'model', 'prompt', 'status', 'created_at', 'finished_at'])
            .orderBy('id')
            .execute();
    const storedJobs = withOccurrenceKeys(jobs, (j) => jobKey(j.ref, j)).map(([j, key]) => ({
      id: j.id,
      key,
      values: j,
    }));
    const docJobs = ctx.doc.jobs ?? [];
    const wantedJobKeys = madeUpKeys(
      'job',
      storedJobs,
      docJobs.map((j) => j.ref),
      occurrenceKeys(docJobs, (j) =>
        jobKey(j.ref, { kind: j.kind, created_at: iso(j.created_at), prompt: j.prompt ?? '' }),
      ),
    );
    this.jobs = diffKeyed(ctx, {
      kind: 'jobs',
      table: 'generation_jobs',
      columns: JOB_COLUMNS,
      stored: storedJobs,
      wanted: zip(docJobs, wantedJobKeys).map(([j, key]) => ({
        key,
        ref: j.ref ?? null,
        row: jobRow(j, ctx),
      })),
    });
  }

  private async diffActivity(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const have = new Map<string, number>();
    if (pid !== null) {
      for (const a of await ctx.db
        .selectFrom('activity as a')
        .leftJoin('nodes as n', 'n.id', 'a.node_id')
        .where('a.production_id', '=', pid)
        .select(['a.at', 'a.actor', 'a.verb', 'a.summary', 'a.node_id', 'n.ref', 'n.retired_at'])
        .execute()) {
        // the node as an export names it: none for a retired one, a made-up ref for one the API made
        const node =
          a.node_id === null || a.retired_at !== null ? null : (a.ref ?? madeUpRef('asset', a.node_id));
        const k = activityKey(a.at, a.actor, a.verb, a.summary, node);
        have.set(k, (have.get(k) ?? 0) + 1);
      }
    }
    let present = 0;
    for (const a of ctx.doc.activity ?? []) {
      const at = iso(a.at);
      const k = activityKey(at, a.actor, a.verb, a.summary ?? '', a.node ? ctx.canonical(a.node) : null);
      const n = have.get(k) ?? 0;
      if (n > 0) {
        have.set(k, n - 1);
        present++;
        continue;
      }
      this.activity.push(activityRow(a, ctx));
    }
    ctx.countsOf('activity').created += this.activity.length;
    ctx.unchanged('activity', present);
  }

  private async diffLibrary(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const live = new Set<string>();
    if (pid !== null) {
      for (const f of await ctx.db
        .selectFrom('library_files')
        .where('production_id', '=', pid)
        .where('retired_at', 'is', null)
        .select('path')
        .execute()) {
        live.add(f.path);
      }
    }
    let present = 0;
    for (const f of ctx.doc.library ?? []) {
      if (live.has(f.path)) {
        present++;
        continue;
      }
      live.add(f.path);
      // the production's id is filled in as the rows are written (a new one has none yet)
      this.library.push(libraryRow(f, -1));
      if (ctx.productionExists) ctx.record('library', 'created', f.path, null);
      else ctx.countsOf('library').created++;
    }
    ctx.unchanged('library', present);
  }

  settle(ctx: SyncContext): void {
    for (const r of this.scriptChanges.removed) {
      this.scriptChanges.deletes.push(r.id);
      ctx.record('script_changes', 'deleted', r.key, r.id);
    }
    for (const r of this.jobs.removed) {
      this.jobs.deletes.push(r.id);
      ctx.record('jobs', 'deleted', r.key, r.id);
    }
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.scriptChanges.deleteRemoved(ctx);
    await this.jobs.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.scriptChanges.write(ctx);
    await this.jobs.write(ctx);
    await insertRows(
      ctx.db,
      'activity',
      this.activity.map((a) => resolved(a)),
    );
    const pid = idOf(ctx.productionId);
    await insertRows(
      ctx.db,
      'library_files',
      this.library.map((f) => ({ ...f, production_id: pid })),
    );
  }
}
