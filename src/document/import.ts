import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { Transaction } from 'kysely';
import type { Db } from '../db/index.js';
import type { Database } from '../db/schema.js';
import { fromBool, nowIso } from '../db/values.js';
import { EDGE_USES, EDGE_WEARS } from '../domain/vocabulary.js';
import { commitAll, discardAll, mediaKindOf, type MediaStore, type StagedObject } from '../media/store.js';
import { pathOf } from '../validation.js';
import { checkDocument } from './check.js';
import { DocumentError } from './parse.js';
import type { ProductionDocument } from './schema.js';

export interface ImportOptions {
  store: MediaStore;
  /** Media paths in the document are relative to this folder. */
  baseDir: string;
  replace?: boolean;
}

export interface ImportResult {
  production: { id: number; code: string };
  refs: Record<string, number>;
}

type Trx = Transaction<Database>;
type Row = Record<string, unknown>;

// Stays under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters per statement.
const MAX_PARAMS = 30_000;

/**
 * Inserts rows in chunks and returns their ids in row order. Within one INSERT both dialects
 * number rows in the order given, so sorting the returned ids restores that order.
 */
async function insertIds(trx: Trx, table: keyof Database, rows: Row[]): Promise<number[]> {
  if (rows.length === 0) return [];
  const per = Math.max(1, Math.floor(MAX_PARAMS / Object.keys(rows[0]!).length));
  const ids: number[] = [];
  for (let i = 0; i < rows.length; i += per) {
    const out = await trx
      .insertInto(table)
      .values(rows.slice(i, i + per) as never)
      .returning('id' as never)
      .execute();
    ids.push(...(out as unknown as Array<{ id: number }>).map((r) => Number(r.id)).sort((a, b) => a - b));
  }
  return ids;
}

async function insertAll(trx: Trx, table: keyof Database, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const per = Math.max(1, Math.floor(MAX_PARAMS / Object.keys(rows[0]!).length));
  for (let i = 0; i < rows.length; i += per) {
    await trx
      .insertInto(table)
      .values(rows.slice(i, i + per) as never)
      .execute();
  }
}

const iso = (ts: string | null | undefined): string | null => (ts ? new Date(ts).toISOString() : null);
const json = (v: unknown): string => JSON.stringify(v);

/** Children of a production, deleted in this order on --replace (dependents first). */
const CHILD_TABLES = [
  'vision_look_briefs',
  'storage_tasks',
  'storage_events',
  'library_files',
  'generation_jobs',
  'activity',
  'script_changes',
  'cost_report_lines',
  'cost_reports',
  'purchase_orders',
  'work_items',
  'grants',
  'department_notes',
  'approval_steps',
  'shoot_strips',
  'shoot_days',
  'version_notes',
  'ingredients',
  'deliveries',
  'approvals',
  'versions',
  'media',
  'edges',
  'nodes',
  'people',
  'department_accounts',
  'engagements',
  'departments',
  'organisations',
  'episodes',
] as const;

interface KeyLink {
  id: number;
  engagementRef: string | null;
  personRef: string | null;
}

async function clearProduction(
  trx: Trx,
  productionId: number,
): Promise<{ keys: KeyLink[]; oldMedia: string[] }> {
  const keys = await trx
    .selectFrom('api_keys')
    .leftJoin('engagements', 'engagements.id', 'api_keys.engagement_id')
    .leftJoin('people', 'people.id', 'api_keys.person_id')
    .where('api_keys.production_id', '=', productionId)
    .select(['api_keys.id', 'engagements.ref as engagementRef', 'people.ref as personRef'])
    .execute();
  const oldMedia = await trx
    .selectFrom('media')
    .where('production_id', '=', productionId)
    .select('storage_key')
    .execute();
  await trx
    .updateTable('api_keys')
    .set({ engagement_id: null, person_id: null })
    .where('production_id', '=', productionId)
    .execute();
  await trx
    .updateTable('productions')
    .set({ current_episode_id: null })
    .where('id', '=', productionId)
    .execute();
  await trx
    .deleteFrom('engagement_departments')
    .where(
      'engagement_id',
      'in',
      trx.selectFrom('engagements').select('id').where('production_id', '=', productionId),
    )
    .execute();
  for (const table of CHILD_TABLES) {
    await trx.deleteFrom(table).where('production_id', '=', productionId).execute();
  }
  return {
    keys: keys.map((k) => ({
      id: k.id,
      engagementRef: k.engagementRef ?? null,
      personRef: k.personRef ?? null,
    })),
    oldMedia: oldMedia.map((m) => m.storage_key),
  };
}

/** Every media file the document names, resolved and checked before anything is written. */
async function collectMedia(doc: ProductionDocument, baseDir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const add = async (rel: string | null | undefined, path: Array<string | number>) => {
    if (!rel) return;
    const full = resolve(baseDir, rel);
    if (files.has(rel)) return;
    const s = await stat(full).catch(() => null);
    if (!s?.isFile()) throw new DocumentError(`${pathOf(path)}: file not found "${rel}"`);
    files.set(rel, full);
  };
  for (const [i, a] of (doc.assets ?? []).entries()) {
    for (const [j, v] of (a.versions ?? []).entries()) {
      await add(v.media, ['assets', i, 'versions', j, 'media']);
      for (const [k, g] of (v.ingredients ?? []).entries()) {
        await add(g.media, ['assets', i, 'versions', j, 'ingredients', k, 'media']);
      }
    }
  }
  return files;
}

export async function importDocument(
  db: Db,
  doc: ProductionDocument,
  options: ImportOptions,
): Promise<ImportResult> {
  checkDocument(doc);
  const mediaFiles = await collectMedia(doc, options.baseDir);
  const staged: StagedObject[] = [];
  let oldMedia: string[] = [];
  try {
    const result = await db.transaction().execute(async (trx) => {
      const out = await writeDocument(trx, doc, options, mediaFiles, staged);
      oldMedia = out.oldMedia;
      return out.result;
    });
    await commitAll(staged);
    await Promise.allSettled(oldMedia.map((key) => options.store.delete(key)));
    return result;
  } catch (err) {
    await discardAll(staged);
    throw err;
  }
}

async function writeDocument(
  trx: Trx,
  doc: ProductionDocument,
  options: ImportOptions,
  mediaFiles: Map<string, string>,
  staged: StagedObject[],
): Promise<{ result: ImportResult; oldMedia: string[] }> {
  const now = nowIso();
  const p = doc.production;
  const refs: Record<string, number> = {};
  const id = (ref: string | null | undefined): number | null => (ref ? (refs[ref] ?? null) : null);
  const need = (ref: string): number => refs[ref]!;

  const productionRow = {
    code: p.code,
    title: p.title,
    logline: p.logline ?? '',
    status: p.status ?? 'active',
    phase: p.phase ?? 'development',
    accent: p.accent ?? 'slate',
    format: p.format ?? 'single',
    season_number: p.format === 'episodic' ? (p.season_number ?? null) : null,
    filespace: p.filespace ?? null,
  };
  const existing = await trx
    .selectFrom('productions')
    .where('code', '=', p.code)
    .select('id')
    .executeTakeFirst();
  let productionId: number;
  let relink: KeyLink[] = [];
  let oldMedia: string[] = [];
  if (existing) {
    if (!options.replace) {
      throw new DocumentError(
        `production.code: a production "${p.code}" exists already (import with --replace to rebuild it)`,
      );
    }
    productionId = existing.id;
    ({ keys: relink, oldMedia } = await clearProduction(trx, productionId));
    await trx.updateTable('productions').set(productionRow).where('id', '=', productionId).execute();
  } else {
    const row = await trx
      .insertInto('productions')
      .values({ ...productionRow, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    productionId = row.id;
  }
  const pid = productionId;
  const assign = (items: Array<{ ref?: string | null }>, ids: number[]) =>
    items.forEach((item, i) => {
      if (item.ref) refs[item.ref] = ids[i]!;
    });

  const episodes = doc.episodes ?? [];
  assign(
    episodes,
    await insertIds(
      trx,
      'episodes',
      episodes.map((e, i) => ({
        production_id: pid,
        ref: e.ref,
        code: e.code,
        title: e.title ?? '',
        position: i,
      })),
    ),
  );
  if (p.current_episode) {
    await trx
      .updateTable('productions')
      .set({ current_episode_id: need(p.current_episode) })
      .where('id', '=', pid)
      .execute();
  }

  const orgs = doc.organisations ?? [];
  assign(
    orgs,
    await insertIds(
      trx,
      'organisations',
      orgs.map((o) => ({ production_id: pid, ref: o.ref, name: o.name })),
    ),
  );

  const depts = doc.departments ?? [];
  const deptIds = await insertIds(
    trx,
    'departments',
    depts.map((d, i) => ({
      production_id: pid,
      slug: d.slug,
      name: d.name,
      cluster: d.cluster ?? '',
      phases: json(d.phases ?? []),
      mission: d.mission ?? '',
      key_roles: json(d.key_roles ?? []),
      privacy: d.privacy ?? 'open',
      unveiled: fromBool(d.unveiled ?? true),
      registry: json(d.registry ?? {}),
      position: i,
    })),
  );
  depts.forEach((d, i) => (refs[d.slug] = deptIds[i]!));
  await insertAll(
    trx,
    'department_accounts',
    depts.flatMap((d, i) =>
      [...new Set(d.accounts ?? [])].map((account) => ({
        production_id: pid,
        department_id: deptIds[i]!,
        account,
      })),
    ),
  );

  const people = doc.people ?? [];
  assign(
    people,
    await insertIds(
      trx,
      'people',
      people.map((x, i) => ({
        production_id: pid,
        ref: x.ref,
        name: x.name,
        role: x.role ?? '',
        department_id: id(x.department),
        is_hod: fromBool(x.is_hod),
        is_admin: fromBool(x.is_admin),
        email: x.email ?? null,
        phone: x.phone ?? null,
        position: i,
      })),
    ),
  );
  const personName = new Map(people.map((x) => [x.ref, x.name]));

  const scenes = doc.scenes ?? [];
  const assets = doc.assets ?? [];
  const nodeRows: Row[] = [
    ...scenes.map((s, i) => ({
      production_id: pid,
      ref: s.ref,
      kind: 'scene',
      label: `${s.number} ${s.slugline}`,
      status: s.status ?? 'planned',
      department_id: null,
      position: i,
      number: s.number,
      slugline: s.slugline,
      synopsis: s.synopsis ?? '',
      revision_color: s.revision_color ?? 'white',
      elements: json(s.elements ?? {}),
      episode_id: id(s.episode),
      created_at: now,
      updated_at: now,
    })),
    ...assets.map((a, i) => ({
      production_id: pid,
      ref: a.ref,
      kind: a.kind ?? 'asset',
      label: a.label,
      status: a.status ?? 'planned',
      department_id: id(a.department),
      position: i,
      number: null,
      slugline: null,
      synopsis: null,
      revision_color: null,
      elements: null,
      episode_id: null,
      created_at: now,
      updated_at: now,
    })),
  ];
  assign([...scenes, ...assets], await insertIds(trx, 'nodes', nodeRows));

  await insertAll(trx, 'edges', [
    ...scenes.flatMap((s) =>
      (s.assets ?? []).map((a, j) => ({
        production_id: pid,
        from_node_id: need(s.ref),
        to_node_id: need(a),
        kind: EDGE_USES,
        position: j,
      })),
    ),
    ...assets.flatMap((a) =>
      (a.costumes ?? []).map((c, j) => ({
        production_id: pid,
        from_node_id: need(a.ref),
        to_node_id: need(c),
        kind: EDGE_WEARS,
        position: j,
      })),
    ),
  ]);

  // One media object per distinct file; its node is the first asset that shows it.
  const mediaOwner = new Map<string, { node: string; label: string }>();
  for (const a of assets) {
    for (const v of a.versions ?? []) {
      if (v.media && !mediaOwner.has(v.media))
        mediaOwner.set(v.media, { node: a.ref, label: `${a.label} v${v.version}` });
      for (const g of v.ingredients ?? []) {
        if (g.media && !mediaOwner.has(g.media)) mediaOwner.set(g.media, { node: a.ref, label: g.label });
      }
    }
  }
  const mediaRows: Row[] = [];
  const mediaRels: string[] = [];
  for (const [rel, full] of mediaFiles) {
    const obj = await options.store.stage(pid, createReadStream(full), { filename: basename(full) });
    staged.push(obj);
    const owner = mediaOwner.get(rel)!;
    mediaRels.push(rel);
    mediaRows.push({
      production_id: pid,
      ref: null,
      storage_key: obj.key,
      kind: mediaKindOf(obj.contentType),
      label: owner.label,
      content_type: obj.contentType,
      size: obj.size,
      sha256: obj.sha256,
      node_id: need(owner.node),
      delivery_id: null,
      work_item_id: null,
      uploader_engagement_id: null,
      created_by: null,
      created_at: now,
    });
  }
  const mediaIds = await insertIds(trx, 'media', mediaRows);
  const mediaId = new Map(mediaRels.map((rel, i) => [rel, mediaIds[i]!]));
  const mediaOf = (rel: string | null | undefined) => (rel ? (mediaId.get(rel) ?? null) : null);

  const versions = assets.flatMap((a) => (a.versions ?? []).map((v) => ({ a, v })));
  const versionIds = await insertIds(
    trx,
    'versions',
    versions.map(({ a, v }) => {
      const byPerson = v.created_by && personName.has(v.created_by);
      return {
        production_id: pid,
        ref: v.ref ?? null,
        node_id: need(a.ref),
        version: v.version,
        variant: v.variant ?? 'Main',
        status: v.status ?? (v.released ? 'approved' : 'wip'),
        released: fromBool(v.released),
        archived: fromBool(v.archived),
        note: v.note ?? null,
        media_id: mediaOf(v.media),
        created_by: byPerson ? personName.get(v.created_by!)! : (v.created_by ?? null),
        created_by_person_id: byPerson ? need(v.created_by!) : null,
        created_at: iso(v.created_at),
      };
    }),
  );
  assign(
    versions.map(({ v }) => v),
    versionIds,
  );
  const ingredients = versions.flatMap(({ v }, i) =>
    (v.ingredients ?? []).map((g, k) => ({ g, versionId: versionIds[i]!, position: k })),
  );
  assign(
    ingredients.map(({ g }) => g),
    await insertIds(
      trx,
      'ingredients',
      ingredients.map(({ g, versionId, position }) => ({
        production_id: pid,
        ref: g.ref ?? null,
        version_id: versionId,
        kind: g.kind,
        label: g.label,
        relation: g.relation ?? null,
        media_id: mediaOf(g.media),
        position,
      })),
    ),
  );

  const days = doc.shoot_days ?? [];
  const dayIds = await insertIds(
    trx,
    'shoot_days',
    days.map((d) => ({
      production_id: pid,
      ref: d.ref ?? null,
      day_number: d.day_number,
      date: d.date,
      general_call: d.general_call ?? null,
      status: d.status ?? 'scheduled',
    })),
  );
  assign(days, dayIds);
  await insertAll(
    trx,
    'shoot_strips',
    days.flatMap((d, i) =>
      (d.scenes ?? []).map((s, j) => ({
        production_id: pid,
        shoot_day_id: dayIds[i]!,
        scene_node_id: need(s),
        position: j,
      })),
    ),
  );

  const approvals = doc.approvals ?? [];
  const approvalIds = await insertIds(
    trx,
    'approvals',
    approvals.map((a) => ({
      production_id: pid,
      ref: a.ref ?? null,
      title: a.title,
      mode: a.mode,
      status: a.status ?? 'pending',
      due: a.due ?? null,
      department_id: id(a.department),
      subject_node_id: id(a.subject?.node),
      subject_version_id: id(a.subject?.version),
      current_step: a.current_step ?? 0,
      created_at: now,
      updated_at: now,
    })),
  );
  assign(approvals, approvalIds);
  await insertAll(
    trx,
    'approval_steps',
    approvals.flatMap((a, i) =>
      a.steps.map((person, j) => {
        // steps before the current one were decided in the app before the document was written
        const decided = j < (a.current_step ?? 0) || (a.status === 'approved' && j <= (a.current_step ?? 0));
        return {
          production_id: pid,
          approval_id: approvalIds[i]!,
          position: j,
          person_id: need(person),
          decision: decided ? 'approved' : null,
          decided_by: decided ? personName.get(person)! : null,
          note: null,
          decided_at: null,
        };
      }),
    ),
  );

  const notes = doc.department_notes ?? [];
  assign(
    notes,
    await insertIds(
      trx,
      'department_notes',
      notes.map((n) => ({
        production_id: pid,
        ref: n.ref ?? null,
        department_id: id(n.department),
        node_id: id(n.node),
        summary: n.summary,
        created_at: iso(n.created_at),
      })),
    ),
  );

  const deliveries = doc.deliveries ?? [];
  assign(
    deliveries,
    await insertIds(
      trx,
      'deliveries',
      deliveries.map((d, i) => ({
        production_id: pid,
        ref: d.ref,
        title: d.title,
        kind: d.kind,
        status: d.status ?? 'draft',
        due: d.due ?? null,
        from_department_id: id(d.from_department),
        to_department_id: id(d.to_department),
        external_to: d.external_to ?? null,
        spec: json(d.spec ?? []),
        sent_at: iso(d.sent_at),
        gating_approval_id: id(d.gating_approval),
        position: i,
      })),
    ),
  );

  const engagements = doc.engagements ?? [];
  const engagementIds = await insertIds(
    trx,
    'engagements',
    engagements.map((e) => ({
      production_id: pid,
      ref: e.ref,
      organisation_id: need(e.organisation),
      created_at: now,
    })),
  );
  assign(engagements, engagementIds);
  await insertAll(
    trx,
    'engagement_departments',
    engagements.flatMap((e, i) =>
      [...new Set(e.departments ?? [])].map((d) => ({
        engagement_id: engagementIds[i]!,
        department_id: need(d),
      })),
    ),
  );
  await insertAll(
    trx,
    'grants',
    engagements.flatMap((e, i) =>
      (e.grants ?? []).map((g) => ({
        production_id: pid,
        engagement_id: engagementIds[i]!,
        kind: g.kind,
        node_id: id(g.node),
        delivery_id: id(g.delivery),
        access: g.access ?? null,
        expires_at: iso(g.expires_at),
        revoked_at: g.revoked ? now : null,
        created_at: now,
      })),
    ),
  );

  const pos = doc.purchase_orders ?? [];
  assign(
    pos,
    await insertIds(
      trx,
      'purchase_orders',
      pos.map((o) => ({
        production_id: pid,
        ref: o.ref ?? null,
        vendor_organisation_id: need(o.vendor),
        department_id: id(o.department),
        account: o.account,
        description: o.description ?? '',
        amount: o.amount,
        status: o.status,
        date: o.date,
      })),
    ),
  );

  const reports = doc.cost_reports ?? [];
  const reportIds = await insertIds(
    trx,
    'cost_reports',
    reports.map((r) => ({ production_id: pid, week_of: r.week_of, active: fromBool(r.active) })),
  );
  await insertAll(
    trx,
    'cost_report_lines',
    reports.flatMap((r, i) =>
      (r.lines ?? []).map((l, j) => ({
        production_id: pid,
        cost_report_id: reportIds[i]!,
        account: l.account,
        description: l.description ?? null,
        budget: l.budget ?? null,
        actual: l.actual ?? null,
        committed: l.committed ?? null,
        position: j,
      })),
    ),
  );

  const sceneEpisode = new Map(scenes.map((s) => [s.ref, s.episode ?? null]));
  const changes = doc.script_changes ?? [];
  assign(
    changes,
    await insertIds(
      trx,
      'script_changes',
      changes.map((c) => ({
        production_id: pid,
        ref: c.ref ?? null,
        scene_node_id: need(c.scene),
        episode_id: id(sceneEpisode.get(c.scene)),
        change: c.change,
        summary: c.summary ?? '',
        status: c.status ?? 'pending',
        detected_at: iso(c.detected_at)!,
      })),
    ),
  );

  await insertAll(
    trx,
    'activity',
    (doc.activity ?? []).map((a) => ({
      production_id: pid,
      at: iso(a.at)!,
      actor: a.actor,
      verb: a.verb,
      summary: a.summary ?? '',
      node_id: id(a.node),
      api_key_id: null,
      person_id: null,
    })),
  );

  const jobs = doc.jobs ?? [];
  assign(
    jobs,
    await insertIds(
      trx,
      'generation_jobs',
      jobs.map((j) => ({
        production_id: pid,
        ref: j.ref ?? null,
        kind: j.kind,
        model: j.model,
        prompt: j.prompt ?? '',
        status: j.status ?? 'queued',
        media_id: null,
        created_at: iso(j.created_at)!,
        finished_at: iso(j.finished_at),
      })),
    ),
  );

  await insertAll(
    trx,
    'library_files',
    (doc.library ?? []).map((f) => ({
      production_id: pid,
      path: f.path,
      size: f.size ?? null,
      detected_at: iso(f.detected_at)!,
      updated_at: iso(f.detected_at)!,
      retired_at: null,
      proxy_media_id: null,
    })),
  );

  for (const key of relink) {
    const engagementId = key.engagementRef ? id(key.engagementRef) : null;
    // a key whose engagement is gone must never widen into a production-wide key
    const orphaned = key.engagementRef !== null && engagementId === null;
    await trx
      .updateTable('api_keys')
      .set({
        engagement_id: engagementId,
        person_id: key.personRef ? id(key.personRef) : null,
        ...(orphaned ? { revoked_at: now } : {}),
      })
      .where('id', '=', key.id)
      .execute();
  }

  return { result: { production: { id: pid, code: p.code }, refs }, oldMedia };
}
