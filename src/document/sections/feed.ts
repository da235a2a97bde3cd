import type { Insertable } from 'kysely';
import type { ActivityTable, LibraryFilesTable } from '../../db/schema.js';
import { idOf, resolved, type Wanted } from '../sync/cells.js';
import { occurrenceKeys, type SyncContext } from '../sync/context.js';
import { diffKeyed, madeUpKeys, type KeyedDiff } from '../sync/keyed.js';
import { madeUpRef } from '../sync/made-up-refs.js';
import { insertRows } from '../sync/write.js';

/*
 * What happened and what is on disk: script changes and generation jobs (by ref, or by their
 * content), the activity feed and the library the storage agent reports.
 * - Activity is history: the document's entries the production does not have yet are
 *   appended (an entry is known by its time, actor, verb, summary and node); none is ever
 *   changed or removed.
 * - The library belongs to the storage agent: a path the production does not have yet is
 *   added; a row the agent (or an earlier import) wrote is never changed or retired by a sync.
 */

const iso = (ts: string | null | undefined): string | null => (ts ? new Date(ts).toISOString() : null);

export class FeedSection {
  scriptChanges!: KeyedDiff<'script_changes'>;
  jobs!: KeyedDiff<'generation_jobs'>;
  private activity: Array<Wanted<Insertable<ActivityTable>>> = [];
  private library: Array<Insertable<LibraryFilesTable>> = [];

  async diff(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const p = ctx.productionId;
    const doc = ctx.doc;

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
    const natural = (scene: string | null, c: { change: string; detected_at: string }) =>
      `${c.change} ${scene ?? '?'} at ${c.detected_at}`;
    const storedKeys = occurrenceKeys(changes, (c) => c.ref ?? natural(c.scene_ref, c));
    const storedChanges = changes.map((c, i) => ({ id: c.id, key: storedKeys[i]!, values: c }));
    const docChanges = doc.script_changes ?? [];
    const wantedKeys = madeUpKeys(
      'change',
      storedChanges,
      docChanges.map((c) => c.ref),
      occurrenceKeys(
        docChanges,
        (c) => c.ref ?? natural(c.scene, { ...c, detected_at: iso(c.detected_at)! }),
      ),
    );
    const sceneEpisode = new Map((doc.scenes ?? []).map((s) => [s.ref, s.episode ?? null]));
    this.scriptChanges = diffKeyed(ctx, {
      kind: 'script_changes',
      table: 'script_changes',
      columns: {
        scene_node_id: 'integer',
        episode_id: 'integer',
        change: 'text',
        summary: 'text',
        status: 'text',
        detected_at: 'text',
      },
      stored: storedChanges,
      wanted: docChanges.map((c, i) => ({
        key: wantedKeys[i]!,
        ref: c.ref ?? null,
        row: {
          production_id: p,
          ref: c.ref ?? null,
          scene_node_id: ctx.need(c.scene),
          episode_id: ctx.id(sceneEpisode.get(c.scene)),
          change: c.change,
          summary: c.summary ?? '',
          status: c.status ?? 'pending',
          detected_at: iso(c.detected_at)!,
        },
      })),
    });

    const jobs =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('generation_jobs')
            .where('production_id', '=', pid)
            .select(['id', 'ref', 'kind', 'model', 'prompt', 'status', 'created_at', 'finished_at'])
            .orderBy('id')
            .execute();
    const jobKey = (j: { kind: string; created_at: string; prompt: string }) =>
      `${j.kind} job at ${j.created_at} "${j.prompt}"`;
    const storedJobKeys = occurrenceKeys(jobs, (j) => j.ref ?? jobKey(j));
    const storedJobs = jobs.map((j, i) => ({ id: j.id, key: storedJobKeys[i]!, values: j }));
    const docJobs = doc.jobs ?? [];
    const wantedJobKeys = madeUpKeys(
      'job',
      storedJobs,
      docJobs.map((j) => j.ref),
      occurrenceKeys(
        docJobs,
        (j) => j.ref ?? jobKey({ kind: j.kind, created_at: iso(j.created_at)!, prompt: j.prompt ?? '' }),
      ),
    );
    this.jobs = diffKeyed(ctx, {
      kind: 'jobs',
      table: 'generation_jobs',
      columns: {
        kind: 'text',
        model: 'text',
        prompt: 'text',
        status: 'text',
        created_at: 'text',
        finished_at: 'text',
      },
      stored: storedJobs,
      wanted: docJobs.map((j, i) => ({
        key: wantedJobKeys[i]!,
        ref: j.ref ?? null,
        row: {
          production_id: p,
          ref: j.ref ?? null,
          kind: j.kind,
          // the format marks no model required: a job from a system that did not name one has none
          model: j.model ?? '',
          prompt: j.prompt ?? '',
          status: j.status ?? 'queued',
          media_id: null,
          created_at: iso(j.created_at)!,
          finished_at: iso(j.finished_at),
        },
      })),
    });

    await this.diffActivity(ctx);
    await this.diffLibrary(ctx);
  }

  private async diffActivity(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const key = (at: string, actor: string, verb: string, summary: string, node: string | null) =>
      JSON.stringify([at, actor, verb, summary, node]);
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
        const k = key(a.at, a.actor, a.verb, a.summary, node);
        have.set(k, (have.get(k) ?? 0) + 1);
      }
    }
    let present = 0;
    for (const a of ctx.doc.activity ?? []) {
      const at = iso(a.at)!;
      const k = key(at, a.actor, a.verb, a.summary ?? '', a.node ? ctx.canonical(a.node) : null);
      const n = have.get(k) ?? 0;
      if (n > 0) {
        have.set(k, n - 1);
        present++;
        continue;
      }
      this.activity.push({
        production_id: ctx.productionId,
        at,
        actor: a.actor,
        verb: a.verb,
        summary: a.summary ?? '',
        node_id: ctx.id(a.node),
        api_key_id: null,
        person_id: null,
      });
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
      const at = iso(f.detected_at)!;
      this.library.push({
        production_id: -1,
        path: f.path,
        size: f.size ?? null,
        detected_at: at,
        updated_at: at,
        retired_at: null,
        proxy_media_id: null,
      });
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
