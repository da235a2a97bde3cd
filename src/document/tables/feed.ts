import type { Db } from '../../db/index.js';
import type { ProductionDocument } from '../schema.js';
import type { Id } from '../sync/cells.js';
import type { ColumnTypes } from '../sync/write.js';
import type { ExportContext } from './export-context.js';
import { iso, type RowContext } from './row-context.js';

/**
 * Script changes, generation jobs, the activity feed and the library: the rows each document
 * object becomes, and (for an export) the document objects the stored rows become.
 */

type Doc = Required<ProductionDocument>;
export type DocScriptChange = Doc['script_changes'][number];
export type DocJob = Doc['jobs'][number];
export type DocActivity = Doc['activity'][number];
export type DocLibraryFile = Doc['library'][number];

export const SCRIPT_CHANGE_COLUMNS = {
  scene_node_id: 'integer',
  episode_id: 'integer',
  change: 'text',
  summary: 'text',
  status: 'text',
  detected_at: 'text',
} satisfies ColumnTypes<'script_changes'>;

/** A change without a ref is known by what changed, in which scene, when. */
export const scriptChangeKey = (
  ref: string | null | undefined,
  scene: string | null,
  c: { change: string; detected_at: string },
): string => ref ?? `${c.change} ${scene ?? '?'} at ${c.detected_at}`;

/** `episode`: the ref of the scene's episode (a change belongs to its scene's episode). */
export const scriptChangeRow = <I extends Id>(
  c: DocScriptChange,
  episode: string | null | undefined,
  ctx: RowContext<I>,
) => ({
  production_id: ctx.productionId,
  ref: c.ref ?? null,
  scene_node_id: ctx.need(c.scene),
  episode_id: ctx.id(episode),
  change: c.change,
  summary: c.summary ?? '',
  status: c.status ?? 'pending',
  detected_at: iso(c.detected_at),
});

export const JOB_COLUMNS = {
  kind: 'text',
  model: 'text',
  prompt: 'text',
  status: 'text',
  created_at: 'text',
  finished_at: 'text',
} satisfies ColumnTypes<'generation_jobs'>;

/** A job without a ref is known by its kind, creation time and prompt. */
export const jobKey = (
  ref: string | null | undefined,
  j: { kind: string; created_at: string; prompt: string },
) => ref ?? `${j.kind} job at ${j.created_at} "${j.prompt}"`;

export const jobRow = <I extends Id>(j: DocJob, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: j.ref ?? null,
  kind: j.kind,
  // the format marks no model required: a job from a system that did not name one has none
  model: j.model ?? '',
  prompt: j.prompt ?? '',
  status: j.status ?? 'queued',
  media_id: null,
  created_at: iso(j.created_at),
  finished_at: iso(j.finished_at),
});

/** An entry is known by its time, actor, verb, summary and node (history is only appended). */
export const activityKey = (at: string, actor: string, verb: string, summary: string, node: string | null) =>
  JSON.stringify([at, actor, verb, summary, node]);

export const activityRow = <I extends Id>(a: DocActivity, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  at: iso(a.at),
  actor: a.actor,
  verb: a.verb,
  summary: a.summary ?? '',
  node_id: ctx.id(a.node),
  api_key_id: null,
  person_id: null,
});

export function libraryRow(f: DocLibraryFile, productionId: number) {
  const at = iso(f.detected_at);
  return {
    production_id: productionId,
    path: f.path,
    size: f.size ?? null,
    detected_at: at,
    updated_at: at,
    retired_at: null,
    proxy_media_id: null,
  };
}

/** Every script change, activity entry and job, and the live library paths, in the document's order. */
export async function readFeed(db: Db, pid: number) {
  const [changes, activity, jobs, library] = await Promise.all([
    db.selectFrom('script_changes').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    db
      .selectFrom('activity')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('at')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('generation_jobs')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('library_files')
      .where('production_id', '=', pid)
      .where('retired_at', 'is', null)
      .select(['path', 'size', 'detected_at'])
      .orderBy('path')
      .execute(),
  ]);
  return { changes, activity, jobs, library };
}
export type StoredFeed = Awaited<ReturnType<typeof readFeed>>;

export const feedRefs = (f: StoredFeed): Array<string | null> => [...f.changes, ...f.jobs].map((r) => r.ref);

export function feedDoc(f: StoredFeed, ex: ExportContext) {
  return {
    // a change on a retired scene names nothing the document has
    script_changes: f.changes.flatMap((c): DocScriptChange[] => {
      const scene = ex.nodeOf(c.scene_node_id);
      if (scene === null) return [];
      const { change, summary, status, detected_at } = c;
      return [{ ref: ex.refFor(c, 'change'), scene, change, summary, status, detected_at }];
    }),
    activity: f.activity.map((a): DocActivity => ({
      at: a.at,
      actor: a.actor,
      verb: a.verb,
      summary: a.summary,
      node: ex.nodeOf(a.node_id),
    })),
    jobs: f.jobs.map((j): DocJob => ({
      ref: ex.refFor(j, 'job'),
      kind: j.kind,
      ...(j.model !== '' ? { model: j.model } : {}),
      prompt: j.prompt,
      status: j.status,
      created_at: j.created_at,
      finished_at: j.finished_at,
    })),
    library: f.library.map((x): DocLibraryFile => ({
      path: x.path,
      size: x.size === null ? null : Number(x.size),
      detected_at: x.detected_at,
    })),
  };
}
