import { extname } from 'node:path';
import type { Db } from '../db/index.js';
import { parseJson, toBool } from '../db/values.js';
import { EDGE_USES, EDGE_WEARS } from '../domain/vocabulary.js';
import { groupBy } from '../util/group-by.js';
import type { DocStep, ProductionDocument } from './schema.js';
import { madeUpRef } from './sync/made-up-refs.js';

/*
 * The production as a document in the import format, including what arrived through the API
 * as far as the format can express it: assets created through the API, landed versions with
 * their notes and media, decisions (as decided steps), grants made by an administrator,
 * activity. Importing it into an empty database gives the same answer on every read route,
 * ids aside — the way to back up a production and to move it between databases.
 *
 * The format cannot carry (and the export leaves out): retired objects; turnover submissions
 * and their files; storage events, tasks and library history (only live library paths);
 * API keys and idempotency records; who uploaded a media file and when; whether an engagement
 * or grant came from the document or an administrator.
 *
 * Queries: a fixed number (one or two per section), whatever the production's size.
 */

export interface ExportedFile {
  /** Path in the document, relative to it (`media/…`). */
  rel: string;
  storageKey: string;
}

export interface Exported {
  doc: ProductionDocument;
  files: ExportedFile[];
  /** Every exported ref to the id it has in this database (refs the export made up included). */
  refs: Record<string, number>;
}

const opt = <T>(v: T | null | undefined): T | undefined => (v === null || v === undefined ? undefined : v);

export async function exportDocument(db: Db, code: string): Promise<Exported | null> {
  const p = await db.selectFrom('productions').where('code', '=', code).selectAll().executeTakeFirst();
  if (!p) return null;
  const pid = p.id;
  const q = <T extends Parameters<Db['selectFrom']>[0]>(t: T) => db.selectFrom(t);

  const [episodes, orgs, depts, accounts, people, nodes, edges] = await Promise.all([
    q('episodes').where('production_id', '=', pid).selectAll().orderBy('position').orderBy('id').execute(),
    q('organisations').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    q('departments').where('production_id', '=', pid).selectAll().orderBy('position').orderBy('id').execute(),
    q('department_accounts').where('production_id', '=', pid).selectAll().orderBy('account').execute(),
    q('people').where('production_id', '=', pid).selectAll().orderBy('position').orderBy('id').execute(),
    q('nodes')
      .where('production_id', '=', pid)
      .where('retired_at', 'is', null)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
    q('edges').where('production_id', '=', pid).selectAll().orderBy('position').orderBy('id').execute(),
  ]);
  const [versions, ingredients, notes, media] = await Promise.all([
    q('versions').where('production_id', '=', pid).selectAll().orderBy('version').orderBy('id').execute(),
    q('ingredients').where('production_id', '=', pid).selectAll().orderBy('position').orderBy('id').execute(),
    q('version_notes')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute(),
    q('media').where('production_id', '=', pid).select(['id', 'storage_key', 'sha256']).execute(),
  ]);
  const [days, strips, approvals, steps, deptNotes, deliveries, engagements, engDepts, grants] =
    await Promise.all([
      q('shoot_days')
        .where('production_id', '=', pid)
        .selectAll()
        .orderBy('day_number')
        .orderBy('date')
        .orderBy('id')
        .execute(),
      q('shoot_strips')
        .where('production_id', '=', pid)
        .selectAll()
        .orderBy('position')
        .orderBy('id')
        .execute(),
      q('approvals').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
      q('approval_steps').where('production_id', '=', pid).selectAll().orderBy('position').execute(),
      q('department_notes').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
      q('deliveries')
        .where('production_id', '=', pid)
        .where('retired_at', 'is', null)
        .selectAll()
        .orderBy('position')
        .orderBy('id')
        .execute(),
      q('engagements')
        .where('production_id', '=', pid)
        .where('retired_at', 'is', null)
        .selectAll()
        .orderBy('id')
        .execute(),
      db
        .selectFrom('engagement_departments as ed')
        .innerJoin('engagements as e', 'e.id', 'ed.engagement_id')
        .where('e.production_id', '=', pid)
        .select(['ed.engagement_id', 'ed.department_id'])
        .execute(),
      q('grants').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    ]);
  const [orders, reports, lines, changes, activity, jobs, library] = await Promise.all([
    q('purchase_orders').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    q('cost_reports').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    q('cost_report_lines')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
    q('script_changes').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    q('activity').where('production_id', '=', pid).selectAll().orderBy('at').orderBy('id').execute(),
    q('generation_jobs')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute(),
    q('library_files')
      .where('production_id', '=', pid)
      .where('retired_at', 'is', null)
      .select(['path', 'size', 'detected_at'])
      .orderBy('path')
      .execute(),
  ]);

  // Refs: the document's own where there is one, a made-up one (never taken) where the API made the object.
  const taken = new Set<string>();
  for (const list of [
    episodes,
    orgs,
    people,
    nodes,
    versions,
    ingredients,
    days,
    approvals,
    deptNotes,
    deliveries,
    engagements,
    orders,
    changes,
    jobs,
  ] as Array<Array<{ ref: string | null }>>) {
    for (const r of list) if (r.ref) taken.add(r.ref);
  }
  for (const d of depts) taken.add(d.slug);
  const exportedRefs: Record<string, number> = {};
  const refFor = <R extends { id: number; ref: string | null }>(row: R, prefix: string): string => {
    if (row.ref) {
      exportedRefs[row.ref] = row.id;
      return row.ref;
    }
    let ref = madeUpRef(prefix, row.id);
    while (taken.has(ref)) ref = `${ref}-x`;
    taken.add(ref);
    exportedRefs[ref] = row.id;
    return ref;
  };

  const episodeRef = new Map(episodes.map((e) => [e.id, refFor(e, 'episode')]));
  const orgRef = new Map(orgs.map((o) => [o.id, refFor(o, 'org')]));
  const deptSlug = new Map(depts.map((d) => [d.id, d.slug]));
  const personRef = new Map(people.map((x) => [x.id, refFor(x, 'person')]));
  const live = new Map(nodes.map((n) => [n.id, n]));
  const nodeRef = new Map(nodes.map((n) => [n.id, refFor(n, n.kind === 'scene' ? 'scene' : 'asset')]));
  const subjectVersions = new Set(approvals.map((a) => a.subject_version_id).filter((v) => v !== null));
  const versionRef = new Map<number, string>();
  for (const v of versions) {
    if (!live.has(v.node_id)) continue;
    // a landed version gets a ref too: an edited export (or a later document) may open an approval on it
    if (v.ref || v.source !== 'document' || subjectVersions.has(v.id))
      versionRef.set(v.id, refFor(v, 'version'));
  }

  // media files, one per content, written beside the document
  const files = new Map<string, ExportedFile>();
  const mediaById = new Map(media.map((m) => [m.id, m]));
  const fileOf = (mediaId: number | null): string | undefined => {
    if (mediaId === null) return undefined;
    const m = mediaById.get(mediaId);
    if (!m) return undefined;
    const ext = extname(m.storage_key) || '.bin';
    const rel = `media/${m.sha256.slice(0, 24)}${ext}`;
    if (!files.has(rel)) files.set(rel, { rel, storageKey: m.storage_key });
    return rel;
  };

  const out = (from: number, kind: string) =>
    (edgesFrom.get(from) ?? [])
      .filter((e) => e.kind === kind && live.has(e.to_node_id))
      .map((e) => nodeRef.get(e.to_node_id)!);
  const edgesFrom = groupBy(edges, (e) => e.from_node_id);
  const accountsOf = groupBy(accounts, (a) => a.department_id);
  const versionsOf = groupBy(versions, (v) => v.node_id);
  const ingredientsOf = groupBy(ingredients, (g) => g.version_id);
  const notesOf = groupBy(notes, (n) => n.version_id);
  const stripsOf = groupBy(strips, (s) => s.shoot_day_id);
  const stepsOf = groupBy(steps, (s) => s.approval_id);
  const linesOf = groupBy(lines, (l) => l.cost_report_id);
  const deptsOf = groupBy(engDepts, (d) => d.engagement_id);
  const grantsOf = groupBy(grants, (g) => g.engagement_id);
  const liveDelivery = new Map(deliveries.map((d) => [d.id, d]));
  const approvalRef = new Map(
    approvals
      .filter((a) => a.ref || deliveries.some((d) => d.gating_approval_id === a.id))
      .map((a) => [a.id, refFor(a, 'approval')]),
  );
  const episodic = p.format === 'episodic';

  const doc: ProductionDocument = {
    production: {
      code: p.code,
      title: p.title,
      logline: p.logline,
      status: p.status,
      phase: p.phase,
      accent: p.accent,
      format: p.format,
      ...(episodic && p.season_number !== null ? { season_number: p.season_number } : {}),
      ...(p.current_episode_id !== null ? { current_episode: episodeRef.get(p.current_episode_id) } : {}),
      ...(p.filespace !== null ? { filespace: p.filespace } : {}),
    },
    ...(episodic
      ? { episodes: episodes.map((e) => ({ ref: episodeRef.get(e.id)!, code: e.code, title: e.title })) }
      : {}),
    organisations: orgs.map((o) => ({ ref: orgRef.get(o.id)!, name: o.name })),
    departments: depts.map((d) => ({
      slug: d.slug,
      name: d.name,
      cluster: d.cluster,
      phases: parseJson<string[]>(d.phases, []),
      mission: d.mission,
      key_roles: parseJson<string[]>(d.key_roles, []),
      privacy: d.privacy,
      unveiled: toBool(d.unveiled),
      accounts: (accountsOf.get(d.id) ?? []).map((a) => a.account),
      registry: parseJson<Record<string, unknown>>(d.registry, {}),
    })),
    people: people.map((x) => ({
      ref: personRef.get(x.id)!,
      name: x.name,
      role: x.role,
      department: x.department_id === null ? null : (deptSlug.get(x.department_id) ?? null),
      is_hod: toBool(x.is_hod),
      is_admin: toBool(x.is_admin),
      email: x.email,
      phone: x.phone,
    })),
    scenes: nodes
      .filter((n) => n.kind === 'scene')
      .map((n) => ({
        ref: nodeRef.get(n.id)!,
        number: n.number ?? '',
        slugline: n.slugline ?? '',
        synopsis: n.synopsis ?? '',
        status: n.status as 'planned',
        revision_color: n.revision_color ?? 'white',
        ...(episodic && n.episode_id !== null ? { episode: episodeRef.get(n.episode_id) } : {}),
        elements: parseJson<Record<string, string[]>>(n.elements, {}),
        assets: out(n.id, EDGE_USES),
      })),
    assets: nodes
      .filter((n) => n.kind !== 'scene')
      .map((n) => {
        const costumes = out(n.id, EDGE_WEARS);
        return {
          ref: nodeRef.get(n.id)!,
          label: n.label,
          kind: n.kind,
          department: n.department_id === null ? null : (deptSlug.get(n.department_id) ?? null),
          status: n.status as 'planned',
          ...(costumes.length ? { costumes } : {}),
          created_at: n.created_at,
          updated_at: n.updated_at,
          versions: (versionsOf.get(n.id) ?? []).map((v) => {
            const byPerson =
              v.created_by_person_id !== null ? personRef.get(v.created_by_person_id) : undefined;
            const own = ingredientsOf.get(v.id) ?? [];
            const said = notesOf.get(v.id) ?? [];
            return {
              ...(versionRef.has(v.id) ? { ref: versionRef.get(v.id) } : {}),
              version: v.version,
              variant: v.variant,
              status: v.status,
              released: toBool(v.released),
              note: v.note,
              media: fileOf(v.media_id) ?? null,
              created_by: byPerson ?? v.created_by,
              created_at: v.created_at,
              archived: toBool(v.archived),
              ...(own.length
                ? {
                    ingredients: own.map((g) => ({
                      ...(g.ref ? { ref: refFor(g, 'ingredient') } : {}),
                      kind: g.kind,
                      label: g.label,
                      relation: g.relation,
                      media: fileOf(g.media_id) ?? null,
                    })),
                  }
                : {}),
              ...(said.length
                ? { notes: said.map((x) => ({ text: x.text, author: x.author, created_at: x.created_at })) }
                : {}),
            };
          }),
        };
      }),
    shoot_days: days.map((d) => ({
      ref: refFor(d, 'day'),
      day_number: d.day_number,
      date: d.date,
      general_call: d.general_call,
      status: d.status,
      scenes: (stripsOf.get(d.id) ?? [])
        .filter((s) => live.has(s.scene_node_id))
        .map((s) => nodeRef.get(s.scene_node_id)!),
    })),
    approvals: approvals.flatMap((a) => {
      const chain = (stepsOf.get(a.id) ?? []).filter(
        (s) => s.person_id !== null && personRef.has(s.person_id),
      );
      if (chain.length === 0) return [];
      const subjectLive = a.subject_node_id !== null && live.has(a.subject_node_id);
      return [
        {
          ...(approvalRef.has(a.id) ? { ref: approvalRef.get(a.id) } : {}),
          title: a.title,
          mode: a.mode as 'chain',
          status: a.status as 'pending',
          due: a.due,
          department: a.department_id === null ? null : (deptSlug.get(a.department_id) ?? null),
          ...(subjectLive
            ? {
                subject: {
                  node: nodeRef.get(a.subject_node_id!)!,
                  ...(a.subject_version_id !== null && versionRef.has(a.subject_version_id)
                    ? { version: versionRef.get(a.subject_version_id) }
                    : {}),
                },
              }
            : {}),
          steps: chain.map((s): DocStep => {
            const person = personRef.get(s.person_id!)!;
            if (s.decision === null && s.decided_at === null) return person;
            return {
              person,
              decision: opt(s.decision),
              decided_by: opt(s.decided_by),
              note: opt(s.note),
              decided_at: opt(s.decided_at),
            };
          }),
          current_step: a.current_step,
          created_at: a.created_at,
          updated_at: a.updated_at,
        },
      ];
    }),
    department_notes: deptNotes.map((n) => ({
      ref: refFor(n, 'note'),
      department: n.department_id === null ? null : (deptSlug.get(n.department_id) ?? null),
      node: n.node_id !== null && live.has(n.node_id) ? nodeRef.get(n.node_id)! : null,
      summary: n.summary,
      created_at: n.created_at,
    })),
    deliveries: deliveries.map((d) => ({
      ref: refFor(d, 'delivery'),
      title: d.title,
      kind: d.kind as 'external',
      status: d.status as 'draft',
      due: d.due,
      from_department: d.from_department_id === null ? null : (deptSlug.get(d.from_department_id) ?? null),
      to_department: d.to_department_id === null ? null : (deptSlug.get(d.to_department_id) ?? null),
      external_to: d.external_to,
      spec: parseJson<Array<Record<string, unknown>>>(d.spec, []),
      sent_at: d.sent_at,
      gating_approval: d.gating_approval_id === null ? null : (approvalRef.get(d.gating_approval_id) ?? null),
    })),
    engagements: engagements.map((e) => ({
      ref: refFor(e, 'engagement'),
      organisation: orgRef.get(e.organisation_id)!,
      departments: (deptsOf.get(e.id) ?? []).map((d) => deptSlug.get(d.department_id)!).filter(Boolean),
      grants: (grantsOf.get(e.id) ?? []).flatMap((g) => {
        // a grant on a retired scene, character or delivery names nothing the document has
        if (g.node_id !== null && !live.has(g.node_id)) return [];
        if (g.delivery_id !== null && !liveDelivery.has(g.delivery_id)) return [];
        return [
          {
            kind: g.kind as 'scene',
            ...(g.node_id !== null ? { node: nodeRef.get(g.node_id) } : {}),
            ...(g.delivery_id !== null
              ? { delivery: refFor(liveDelivery.get(g.delivery_id)!, 'delivery') }
              : {}),
            ...(g.access !== null ? { access: g.access as 'read' } : {}),
            ...(g.expires_at !== null ? { expires_at: g.expires_at } : {}),
            ...(g.revoked_at !== null ? { revoked: true } : {}),
          },
        ];
      }),
    })),
    purchase_orders: orders.flatMap((o) =>
      o.vendor_organisation_id === null
        ? []
        : [
            {
              ref: refFor(o, 'po'),
              vendor: orgRef.get(o.vendor_organisation_id)!,
              department: o.department_id === null ? null : (deptSlug.get(o.department_id) ?? null),
              account: o.account,
              description: o.description,
              amount: Number(o.amount),
              status: o.status as 'open',
              date: o.date,
            },
          ],
    ),
    cost_reports: reports.map((r) => ({
      week_of: r.week_of,
      active: toBool(r.active),
      lines: (linesOf.get(r.id) ?? []).map((l) => ({
        account: l.account,
        description: l.description,
        budget: l.budget === null ? null : Number(l.budget),
        actual: l.actual === null ? null : Number(l.actual),
        committed: l.committed === null ? null : Number(l.committed),
      })),
    })),
    script_changes: changes.flatMap((c) =>
      c.scene_node_id === null || !live.has(c.scene_node_id)
        ? []
        : [
            {
              ref: refFor(c, 'change'),
              scene: nodeRef.get(c.scene_node_id)!,
              change: c.change,
              summary: c.summary,
              status: c.status as 'pending',
              detected_at: c.detected_at,
            },
          ],
    ),
    activity: activity.map((a) => ({
      at: a.at,
      actor: a.actor,
      verb: a.verb,
      summary: a.summary,
      node: a.node_id !== null && live.has(a.node_id) ? nodeRef.get(a.node_id)! : null,
    })),
    jobs: jobs.map((j) => ({
      ref: refFor(j, 'job'),
      kind: j.kind as 'image',
      ...(j.model !== '' ? { model: j.model } : {}),
      prompt: j.prompt,
      status: j.status,
      created_at: j.created_at,
      finished_at: j.finished_at,
    })),
    library: library.map((f) => ({
      path: f.path,
      size: f.size === null ? null : Number(f.size),
      detected_at: f.detected_at,
    })),
  };
  return { doc, files: [...files.values()], refs: exportedRefs };
}
