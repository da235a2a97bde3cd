import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parse } from 'yaml';
import type { App } from '../../src/app.js';
import { importDocument, planDocument, type ImportResult } from '../../src/document/import.js';
import { parseDocument } from '../../src/document/parse.js';
import type { ProductionDocument } from '../../src/document/schema.js';
import type { Plan } from '../../src/document/sync/plan.js';
import type { TestEnv } from './env.js';
import { get } from './http.js';
import { DEMOS } from './read.js';

export type Demo = keyof typeof DEMOS;

/** A fresh copy of a shipped demo document under another code, so one database holds many. */
export function demoDoc(which: Demo, code: string): ProductionDocument {
  const doc = parse(readFileSync(DEMOS[which].path, 'utf8')) as ProductionDocument;
  doc.production.code = code;
  return doc;
}

export const demoDir = (which: Demo) => dirname(DEMOS[which].path);

export function importDoc(
  env: TestEnv,
  doc: ProductionDocument,
  baseDir: string,
  replace = true,
): Promise<ImportResult> {
  return importDocument(env.handle.db, parseDocument(JSON.stringify(doc)), {
    store: env.store,
    baseDir,
    replace,
  });
}

export function planDoc(env: TestEnv, doc: ProductionDocument, baseDir: string): Promise<Plan> {
  return planDocument(env.handle.db, parseDocument(JSON.stringify(doc)), {
    store: env.store,
    baseDir,
    replace: true,
  });
}

export interface Answer {
  status: number;
  body: unknown;
  etag?: string;
}

/**
 * What a production-wide key sees on every read route, and what a vendor key sees on the
 * round-trip ones: url → answer. Scene, character and asset records are fetched for every
 * live one, so a retired object shows as missing.
 */
export async function readState(
  app: App,
  token: string,
  vendors: Record<string, string> = {},
): Promise<Map<string, Answer>> {
  const out = new Map<string, Answer>();
  const fetch = async (url: string, key = token, as = url) => {
    const r = await get(app, url, key);
    const etag = r.headers.etag;
    out.set(as, { status: r.status, body: r.body, ...(typeof etag === 'string' ? { etag } : {}) });
    return r;
  };
  const production = await fetch('/api/v1/production');
  const episodic = (production.body as { format: string }).format === 'episodic';
  const departments = await fetch('/api/v1/departments');
  for (const d of departments.body as Array<{ slug: string }>) await fetch(`/api/v1/departments/${d.slug}`);
  const scenes = await fetch('/api/v1/scenes');
  const assets = await fetch('/api/v1/assets');
  for (const url of [
    '/api/v1/schedule',
    '/api/v1/deliveries',
    '/api/v1/approvals',
    `/api/v1/script-changes?status=all${episodic ? '&all_episodes=true' : ''}`,
    '/api/v1/activity?limit=200',
    '/api/v1/people',
    '/api/v1/jobs?limit=200',
    '/api/v1/submissions',
  ]) {
    await fetch(url);
  }
  // records and bundles are named by their place in the lists, so two databases compare
  const sceneList = scenes.body as Array<{ node_id: number }>;
  for (const [i, s] of sceneList.entries()) {
    await fetch(`/api/v1/bundles/scene/${s.node_id}`, token, `scene bundle #${i}`);
  }
  for (const [i, a] of (assets.body as Array<{ node_id: number; kind: string }>).entries()) {
    await fetch(`/api/v1/assets/${a.node_id}`, token, `asset #${i}`);
    if (a.kind === 'character')
      await fetch(`/api/v1/bundles/character/${a.node_id}`, token, `character bundle #${i}`);
  }
  for (const [name, key] of Object.entries(vendors)) {
    await fetch('/api/v1/turnovers', key, `${name} /api/v1/turnovers`);
    await fetch('/api/v1/purchase-orders', key, `${name} /api/v1/purchase-orders`);
    for (const [i, s] of sceneList.entries()) {
      await fetch(`/api/v1/bundles/scene/${s.node_id}`, key, `${name} scene bundle #${i}`);
    }
  }
  return out;
}

/** Counts of a plan without the unchanged column, for compact assertions. */
export function moved(plan: Plan): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [kind, c] of Object.entries(plan.counts)) {
    const m = Object.fromEntries(Object.entries(c).filter(([k, v]) => k !== 'unchanged' && v > 0));
    if (Object.keys(m).length) out[kind] = m;
  }
  return out;
}

/** Drops every reference the document makes to a ref (scene lists, costumes, grants, notes …). */
export function forget(doc: ProductionDocument, ref: string): void {
  for (const s of doc.scenes ?? []) s.assets = s.assets?.filter((r) => r !== ref);
  for (const a of doc.assets ?? []) a.costumes = a.costumes?.filter((r) => r !== ref);
  for (const d of doc.shoot_days ?? []) d.scenes = d.scenes?.filter((r) => r !== ref);
  doc.approvals = doc.approvals?.filter((a) => a.subject?.node !== ref);
  doc.department_notes = doc.department_notes?.filter((n) => n.node !== ref);
  doc.script_changes = doc.script_changes?.filter((c) => c.scene !== ref);
  for (const e of doc.engagements ?? [])
    e.grants = e.grants?.filter((g) => g.node !== ref && g.delivery !== ref);
  // history is never rewritten: the feed keeps its entries, the document just stops naming them
  doc.activity = doc.activity?.filter((a) => a.node !== ref);
  const gating = new Set((doc.approvals ?? []).map((a) => a.ref));
  for (const d of doc.deliveries ?? [])
    if (d.gating_approval && !gating.has(d.gating_approval)) d.gating_approval = null;
}
