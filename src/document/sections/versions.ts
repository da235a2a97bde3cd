import { sql } from 'kysely';
import { DocumentError } from '../parse.js';
import { pathOf } from '../../validation.js';
import { idOf, Pending, type Id } from '../sync/cells.js';
import { withOccurrenceKeys, type SyncContext } from '../sync/context.js';
import { diffKeyed, type KeyedDiff, type WantedRow } from '../sync/keyed.js';
import { referencedByAny } from '../sync/references.js';
import { apiKey, madeUpId } from '../sync/made-up-refs.js';
import { insertRows } from '../sync/write.js';
import {
  INGREDIENT_COLUMNS,
  ingredientRow,
  notesOf,
  VERSION_COLUMNS,
  versionRow,
  type WantedNote,
} from '../tables/versions.js';
import type { ApprovalsSection } from './approvals.js';
import type { GraphSection } from './graph.js';
import type { MediaSection } from './media.js';

/*
 * Versions of the document's assets, their ingredients and the notes an export carries.
 * A version is keyed by its ref, or by `<asset ref>#v<number>` when it has none. Versions
 * landed through the API (source `api`) are never touched, and the document may not take
 * their numbers. A version an API decision released keeps its status and release. A version
 * that left the document is deleted unless notes were written on it or a decision names it
 * (then it is kept); the versions of a retired asset stay with it.
 */

const noteKey = (n: { text: string; author: string | null; created_at: string | null }) =>
  JSON.stringify([n.text, n.author, n.created_at]);

const readStoredVersions = async (ctx: SyncContext, pid: number | null) =>
  pid === null
    ? []
    : ctx.db
        .selectFrom('versions as v')
        .innerJoin('nodes as n', 'n.id', 'v.node_id')
        .where('v.production_id', '=', pid)
        .select([
          'v.id',
          'v.ref',
          'v.node_id',
          'v.version',
          'v.variant',
          'v.status',
          'v.released',
          'v.archived',
          'v.note',
          'v.media_id',
          'v.created_by',
          'v.created_by_person_id',
          'v.created_at',
          'v.source',
          'n.ref as node_ref',
        ])
        .orderBy('v.id')
        .execute();

/** Versions an approval decided through the API released. */
async function readApiReleased(ctx: SyncContext, pid: number | null): Promise<Set<number>> {
  if (pid === null) return new Set();
  const rows = await ctx.db
    .selectFrom('approvals as a')
    .where('a.production_id', '=', pid)
    .where('a.status', '=', 'approved')
    .where('a.subject_version_id', 'is not', null)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('approval_steps as s')
          .whereRef('s.approval_id', '=', 'a.id')
          .where('s.decided_at', 'is not', null)
          .select(sql`1`.as('one')),
      ),
    )
    .select('a.subject_version_id')
    .execute();
  return new Set(rows.flatMap((r) => (r.subject_version_id === null ? [] : [r.subject_version_id])));
}

/** The notes stored on each version, by their key. */
async function readStoredNotes(ctx: SyncContext, pid: number | null): Promise<Map<number, Set<string>>> {
  const notesStored = new Map<number, Set<string>>();
  if (pid === null) return notesStored;
  for (const n of await ctx.db
    .selectFrom('version_notes')
    .where('production_id', '=', pid)
    .select(['version_id', 'text', 'author', 'created_at'])
    .execute()) {
    const set = notesStored.get(n.version_id) ?? new Set<string>();
    set.add(noteKey(n));
    notesStored.set(n.version_id, set);
  }
  return notesStored;
}

export class VersionsSection {
  versions!: KeyedDiff<'versions'>;
  ingredients!: KeyedDiff<'ingredients'>;
  private readonly versionIds = new Map<string, Id>();
  private readonly storedVersionMedia = new Map<number, number | null>();
  private readonly storedIngredientMedia = new Map<number, { version: number; media: number | null }>();
  private readonly notesWanted = new Map<string, WantedNote[]>();
  private readonly notesToAdd = new Map<string, WantedNote[]>();
  private apiReleased = new Set<number>();
  /** Stored versions that left the document but stay (kept, or part of a retired asset). */
  private readonly untouched = new Set<number>();
  /** Stored versions landed through the API, by "node:number". */
  private readonly occupied = new Map<string, number>();
  /** Their keys (see made-up-refs): the document may name them, never change them. */
  private readonly landed = new Set<string>();

  /**
   * A version is known by its ref, or by `<asset ref>#v<number>` without one; a version landed
   * through the API by `api:<id>`. A made-up ref an export gave a stored version without a ref
   * (see made-up-refs) names that version, when it is one of the same asset.
   */
  private keyOf(assetRef: string, v: { ref?: string; version: number }, node: Id): string {
    const id = madeUpId('version', v.ref);
    const named = id === null ? undefined : this.refless.get(id);
    if (named && named.node === node) {
      if (named.landed) this.landed.add(named.key);
      return named.key;
    }
    return v.ref ?? `${assetRef}#v${v.version}`;
  }

  /** Stored versions without a ref: their node, key and whether they were landed through the API. */
  private readonly refless = new Map<number, { node: number; key: string; landed: boolean }>();

  async diff(ctx: SyncContext, media: MediaSection): Promise<void> {
    const pid = ctx.existingProductionId;
    const stored = await readStoredVersions(ctx, pid);
    for (const v of stored) if (v.source !== 'document') this.occupied.set(`${v.node_id}:${v.version}`, v.id);
    this.apiReleased = await readApiReleased(ctx, pid);
    const versionKeyOf = new Map<number, string>();
    const storedRows = stored.map((v) => {
      const key = v.source === 'document' ? (v.ref ?? `${v.node_ref}#v${v.version}`) : apiKey(v.id);
      if (v.ref === null) this.refless.set(v.id, { node: v.node_id, key, landed: v.source !== 'document' });
      versionKeyOf.set(v.id, key);
      this.storedVersionMedia.set(v.id, v.media_id);
      return { id: v.id, key, values: v };
    });

    const wanted = this.wantedVersions(ctx, media);

    // only a document that carries notes needs to know which are there
    const notesStored =
      this.notesWanted.size > 0 ? await readStoredNotes(ctx, pid) : new Map<number, Set<string>>();

    this.versions = diffKeyed(ctx, {
      kind: 'versions',
      table: 'versions',
      columns: VERSION_COLUMNS,
      stored: storedRows,
      wanted,
      stands: (s) =>
        s.values.source !== 'document'
          ? [...Object.keys(VERSION_COLUMNS), 'notes']
          : this.apiReleased.has(s.id)
            ? ['status', 'released']
            : [],
      keptReason: (s) =>
        s.values.source !== 'document'
          ? 'landed through the API'
          : 'an approval decided through the API released it',
      children: (s, w) => {
        // a landed version's notes are the API's: those an export carries are there already
        if (s.values.source !== 'document') return [];
        const have = notesStored.get(s.id) ?? new Set<string>();
        const add = (this.notesWanted.get(w.key) ?? []).filter((n) => !have.has(noteKey(n)));
        if (add.length) this.notesToAdd.set(w.key, add);
        return add.length ? ['notes'] : [];
      },
    });
    // a landed version the document names is the API's alone: never a sync's to delete either
    this.versions.removed = this.versions.removed.filter((r) => r.values.source === 'document');
    for (const [key, id] of this.versions.matched) this.versionIds.set(key, id);
    for (const c of this.versions.creates) {
      this.versionIds.set(c.key, c.pending);
      const notes = this.notesWanted.get(c.key) ?? [];
      if (notes.length) this.notesToAdd.set(c.key, notes);
    }

    await this.diffIngredients(ctx, media, versionKeyOf);
  }

  /** The document's versions as rows; a version that takes a landed version's number is refused. */
  private wantedVersions(ctx: SyncContext, media: MediaSection): WantedRow<'versions'>[] {
    const people = new Map((ctx.doc.people ?? []).map((x) => [x.ref, x.name]));
    const wanted: WantedRow<'versions'>[] = [];
    for (const [i, a] of (ctx.doc.assets ?? []).entries()) {
      const node = ctx.need(a.ref);
      for (const [j, v] of (a.versions ?? []).entries()) {
        const key = this.keyOf(a.ref, v, node);
        const path = ['assets', i, 'versions', j];
        if (!this.landed.has(key) && typeof node === 'number' && this.occupied.has(`${node}:${v.version}`)) {
          throw new DocumentError(
            `${pathOf([...path, 'version'])}: version ${v.version} of "${a.ref}" was landed through the API; number the document's versions past the asset's highest.`,
          );
        }
        if (v.notes?.length) this.notesWanted.set(key, notesOf(v));
        wanted.push({
          key,
          ref: v.ref ?? null,
          row: versionRow(v, node, media.of(v.media), (ref) => people.get(ref), ctx),
        });
      }
    }
    return wanted;
  }

  private async diffIngredients(
    ctx: SyncContext,
    media: MediaSection,
    versionKeyOf: ReadonlyMap<number, string>,
  ): Promise<void> {
    const pid = ctx.existingProductionId;
    const storedIngredients =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('ingredients')
            .where('production_id', '=', pid)
            .select(['id', 'ref', 'version_id', 'kind', 'label', 'relation', 'media_id', 'position'])
            .orderBy('id')
            .execute();
    const wantedIngredients: WantedRow<'ingredients'>[] = [];
    for (const a of ctx.doc.assets ?? []) {
      const node = ctx.need(a.ref);
      for (const v of a.versions ?? []) {
        const vkey = this.keyOf(a.ref, v, node);
        // the ingredients of a landed version are the API's
        if (this.landed.has(vkey)) continue;
        const version = this.versionIds.get(vkey);
        if (version === undefined)
          throw new Error(`internal: version "${vkey}" has no id before its ingredients`);
        (v.ingredients ?? []).forEach((g, k) =>
          wantedIngredients.push({
            key: g.ref ?? `${vkey}#i${k}`,
            ref: g.ref ?? null,
            row: ingredientRow(g, k, version, media.of(g.media), ctx),
          }),
        );
      }
    }
    this.ingredients = diffKeyed(ctx, {
      kind: 'ingredients',
      table: 'ingredients',
      columns: INGREDIENT_COLUMNS,
      stored: storedIngredients.map((g) => {
        this.storedIngredientMedia.set(g.id, { version: g.version_id, media: g.media_id });
        return {
          id: g.id,
          key: g.ref ?? `${versionKeyOf.get(g.version_id) ?? `#${g.version_id}`}#i${g.position}`,
          values: g,
        };
      }),
      wanted: withOccurrenceKeys(wantedIngredients, (w) => w.key).map(([w, key]) => ({ ...w, key })),
    });
  }

  async settle(ctx: SyncContext, deps: { graph: GraphSection; approvals: ApprovalsSection }): Promise<void> {
    const candidates = this.versions.removed.filter((r) => {
      const node = r.values.node_id;
      if (node !== undefined && deps.graph.removedIds.has(node)) {
        this.untouched.add(r.id); // it stays with its retired asset
        return false;
      }
      return true;
    });
    const ids = candidates.map((r) => r.id);
    const referenced = ids.length
      ? await referencedByAny(ctx, ids, [
          ['version_notes', 'version_id', {}, 'notes written through the API'],
          [
            'approvals',
            'subject_version_id',
            { exclude: deps.approvals.keptRows().subjectNotKept },
            'a decided approval',
          ],
        ])
      : new Map<number, string>();
    const kept: typeof candidates = [];
    for (const r of candidates) {
      const by =
        referenced.get(r.id) ?? (this.apiReleased.has(r.id) ? 'a decision made through the API' : undefined);
      if (by) {
        this.untouched.add(r.id);
        kept.push(r);
        ctx.record('versions', 'kept', r.key, r.id, { reason: `referred to by ${by}` });
      } else {
        this.versions.deletes.push(r.id);
        ctx.record('versions', 'deleted', r.key, r.id);
      }
    }
    // a kept version holds its number: the document may not give it to another version
    const held = new Map(kept.map((r) => [`${r.values.node_id}:${r.values.version}`, r.key]));
    for (const w of [
      ...this.versions.creates.map((c) => ({ key: c.key, row: c.row })),
      ...this.versions.updates.map((u) => ({ key: u.key, row: u.wanted.row })),
    ]) {
      const node = w.row.node_id;
      const other = typeof node === 'number' ? held.get(`${node}:${String(w.row.version)}`) : undefined;
      if (other) {
        throw new DocumentError(
          `${pathOf([...this.pathOf(ctx, w.key), 'version'])}: version ${String(w.row.version)} is still held by "${other}", which notes or a decision made through the API keep; give this version another number.`,
        );
      }
    }
    for (const r of this.ingredients.removed) {
      // the ingredients of a version that stays without the document stay with it
      const version = r.values.version_id;
      if (version !== undefined && this.untouched.has(version)) continue;
      this.ingredients.deletes.push(r.id);
      ctx.record('ingredients', 'deleted', r.key, r.id);
    }
  }

  /** Where a version is in the document; looked up only for an error, so nothing is kept per version. */
  private pathOf(ctx: SyncContext, key: string): Array<string | number> {
    for (const [i, a] of (ctx.doc.assets ?? []).entries()) {
      for (const [j, v] of (a.versions ?? []).entries()) {
        if ((v.ref ?? `${a.ref}#v${v.version}`) === key) return ['assets', i, 'versions', j];
      }
    }
    return ['assets'];
  }

  /** Stored versions whose people and media columns this sync rewrites or deletes. */
  rewrittenOrGone(): Set<number> {
    const rewritten = [...this.versions.matched].filter(([key]) => !this.landed.has(key)).map(([, id]) => id);
    return new Set([...rewritten, ...this.versions.deletes]);
  }

  /** The document media rows still show once this sync is done. */
  mediaAfter(): Set<number> {
    const out = new Set<number>();
    const add = (id: unknown) => {
      if (typeof id === 'number') out.add(id);
    };
    const matched = new Map<number, unknown>();
    for (const u of this.versions.updates) matched.set(u.id, u.wanted.row.media_id);
    const gone = new Set(this.versions.deletes);
    for (const [id, media] of this.storedVersionMedia) {
      if (gone.has(id)) continue;
      add(matched.has(id) ? matched.get(id) : media);
    }
    for (const c of this.versions.creates) add(c.row.media_id);
    const matchedIngredients = new Map<number, unknown>();
    for (const u of this.ingredients.updates) matchedIngredients.set(u.id, u.wanted.row.media_id);
    const goneIngredients = new Set(this.ingredients.deletes);
    for (const [id, g] of this.storedIngredientMedia) {
      if (goneIngredients.has(id) || gone.has(g.version)) continue;
      add(matchedIngredients.has(id) ? matchedIngredients.get(id) : g.media);
    }
    for (const c of this.ingredients.creates) add(c.row.media_id);
    return out;
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.ingredients.deleteRemoved(ctx);
    await this.versions.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext): Promise<void> {
    // Numbers move in two steps, so versions that swap numbers never collide half-way, and a
    // version about to be deleted (after the writes) frees its number for the one replacing it.
    const renumbered = [
      ...this.versions.updates.filter((u) => 'version' in u.set).map((u) => u.id),
      ...this.versions.deletes,
    ];
    for (let i = 0; i < renumbered.length; i += 1000) {
      await ctx.db
        .updateTable('versions')
        .set({ version: sql<number>`-id` })
        .where('id', 'in', renumbered.slice(i, i + 1000))
        .execute();
    }
    await this.versions.write(ctx);
    await this.ingredients.write(ctx);
    const pid = idOf(ctx.productionId);
    await insertRows(
      ctx.db,
      'version_notes',
      [...this.notesToAdd].flatMap(([key, notes]) =>
        notes.map((n) => ({
          production_id: pid,
          version_id: idOf(this.versionIds.get(key) ?? new Pending(key)),
          text: n.text,
          author: n.author,
          created_at: n.created_at,
        })),
      ),
    );
  }
}
