#!/usr/bin/env node
/*
 * A local JSON copy of what one prodgraph key may read, kept in sync through the change feed.
 *
 *   PRODGRAPH_URL=http://127.0.0.1:8080 PRODGRAPH_KEY=pgk_… node examples/mirror.mjs mirror.json
 *   … node examples/mirror.mjs mirror.json --once     # catch up, then exit
 *
 * Needs Node.js 20.19+ and nothing else. The file holds the feed cursor next to the copy, so
 * a restarted mirror picks up exactly where it stopped (the cursor never expires).
 *
 * How it stays correct:
 *  1. On first start it takes the feed's head (`GET /changes?after=now`) BEFORE reading the
 *     lists, so a write that lands while it reads is still in the feed after that cursor.
 *  2. It then long-polls `GET /changes?after=CURSOR&wait=25`: an idle production costs one
 *     request every 25 s, and a change arrives within about a second.
 *  3. The long lists (scenes, assets, approvals, deliveries) are read page by page
 *     (`limit`, then the `Link: <…>; rel="next"` header), never as one multi-megabyte answer.
 *  4. For each batch of changes it brings each list the changes touch up to date, once per
 *     batch (KIND_TO_LISTS below): a long list asks only for the rows changed since the
 *     batch's first change (`updated_since`; a row's `updated_at` is the time of the change that
 *     touched it), merges them by id and drops rows that come back retired; the short ones are
 *     read whole. It then saves the copy and the batch's `next_cursor` together (written to a
 *     temporary file and renamed, so a crash never leaves half a file).
 * Re-reading a changed object twice is harmless: the copy only ever converges on the API.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

/** What the mirror keeps: each list exactly as the API answers it. */
export const LISTS = {
  production: '/production',
  departments: '/departments',
  people: '/people',
  scenes: '/scenes',
  assets: '/assets',
  schedule: '/schedule',
  approvals: '/approvals',
  deliveries: '/deliveries',
};

/** Which lists show an object of each change kind (the production's stats count many of them). */
const KIND_TO_LISTS = {
  production: ['production'],
  episode: ['production', 'scenes', 'schedule'],
  organisation: ['people', 'deliveries'],
  department: ['departments'],
  department_note: ['departments'],
  person: ['people', 'departments'],
  scene: ['scenes', 'schedule'],
  shoot_day: ['schedule'],
  asset: ['assets', 'scenes'],
  version: ['assets'],
  ingredient: ['assets'],
  note: ['assets'],
  media: ['assets'],
  approval: ['approvals', 'assets'],
  delivery: ['deliveries'],
};

/** The lists that page and take `updated_since`, with the field that identifies a row. */
const PAGED = { scenes: 'node_id', assets: 'node_id', approvals: 'id', deliveries: 'id' };
const PAGE_SIZE = 500;

async function request(base, key, path, signal) {
  const res = await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` }, signal });
  if (!res.ok) {
    const body = await res.text();
    throw new Error(`GET ${path}: ${res.status} ${body.slice(0, 300)}`);
  }
  return res;
}

async function api(base, key, path, signal) {
  return (await request(base, key, path, signal)).json();
}

/** Every row of a list that pages, following `Link: <…>; rel="next"` (its URL is under /api/v1). */
async function allPages(base, key, path, signal) {
  const rows = [];
  let next = `${path}${path.includes('?') ? '&' : '?'}limit=${PAGE_SIZE}`;
  while (next) {
    const res = await request(base, key, next, signal);
    rows.push(...(await res.json()));
    const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '');
    next = link ? link[1].replace(/^\/api\/v1/, '') : null;
  }
  return rows;
}

async function load(file) {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw err;
  }
}

async function save(file, state) {
  const tmp = `${file}.tmp`;
  await writeFile(tmp, JSON.stringify(state, null, 2));
  await rename(tmp, file);
}

async function readLists(base, key, names, signal) {
  const read = (n) => (n in PAGED ? allPages(base, key, LISTS[n], signal) : api(base, key, LISTS[n], signal));
  const entries = await Promise.all(names.map(async (n) => [n, await read(n)]));
  return Object.fromEntries(entries);
}

/**
 * A paged list brought up to date with the rows changed since `since`: changed rows replace
 * theirs (in the API's order, which the rows' positions give), retired rows leave the copy.
 */
async function refreshList(base, key, name, rows, since, signal) {
  const id = PAGED[name];
  const changed = await allPages(
    base,
    key,
    `${LISTS[name]}?updated_since=${encodeURIComponent(since)}`,
    signal,
  );
  const byId = new Map(rows.map((r) => [r[id], r]));
  for (const r of changed) {
    if (r.retired_at) byId.delete(r[id]);
    else byId.set(r[id], r);
  }
  if (changed.every((r) => r.retired_at || rows.some((old) => old[id] === r[id]))) {
    return rows.filter((r) => byId.has(r[id])).map((r) => byId.get(r[id]));
  }
  // a row the copy did not hold: its place in the list is the API's to say
  return allPages(base, key, LISTS[name], signal);
}

/**
 * Brings the copy in `file` up to date and answers it. With `follow`, keeps it up to date until
 * `signal` aborts; otherwise returns once the feed has nothing more.
 */
export async function mirror({ base, key, file, follow = false, wait = 25, signal, onSync }) {
  let state = await load(file);
  if (!state || state.base !== base) {
    const { next_cursor } = await api(base, key, '/changes?after=now', signal);
    state = { base, cursor: next_cursor, synced_at: new Date().toISOString(), lists: {} };
    state.lists = await readLists(base, key, Object.keys(LISTS), signal);
    await save(file, state);
    onSync?.(state, []);
  }
  while (!signal?.aborted) {
    let page;
    try {
      const held = follow ? wait : 0;
      page = await api(
        base,
        key,
        `/changes?after=${encodeURIComponent(state.cursor)}&limit=500&wait=${held}`,
        signal,
      );
    } catch (err) {
      if (signal?.aborted) break;
      throw err;
    }
    if (page.changes.length > 0) {
      const touched = new Set(['production']);
      for (const c of page.changes) for (const l of KIND_TO_LISTS[c.kind] ?? []) touched.add(l);
      // a write stamps its rows at or after its change's `at`: a millisecond before the batch's
      // first change finds every row the batch touched
      const first = page.changes.reduce((a, c) => (c.at < a ? c.at : a), page.changes[0].at);
      const since = new Date(Date.parse(first) - 1).toISOString();
      // built aside and applied whole: a stop midway leaves the copy and its cursor as they were
      const lists = { ...state.lists };
      try {
        Object.assign(
          lists,
          await readLists(
            base,
            key,
            [...touched].filter((n) => !(n in PAGED)),
            signal,
          ),
        );
        for (const n of [...touched].filter((n) => n in PAGED)) {
          lists[n] = await refreshList(base, key, n, lists[n] ?? [], since, signal);
        }
      } catch (err) {
        if (signal?.aborted) break;
        throw err;
      }
      state.lists = lists;
      state.cursor = page.next_cursor;
      state.synced_at = new Date().toISOString();
      await save(file, state);
      onSync?.(state, page.changes);
    }
    if (!page.more && !follow) break;
  }
  return state;
}

async function main() {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  const base = (process.env.PRODGRAPH_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const key = process.env.PRODGRAPH_KEY;
  if (!file || !key) {
    console.error('usage: PRODGRAPH_URL=… PRODGRAPH_KEY=pgk_… node examples/mirror.mjs FILE.json [--once]');
    process.exit(2);
  }
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  const state = await mirror({
    base,
    key,
    file,
    follow: !args.includes('--once'),
    signal: stop.signal,
    onSync: (s, changes) =>
      console.log(`${s.synced_at} ${changes.length ? `${changes.length} change(s)` : 'snapshot'} → ${file}`),
  });
  console.log(`up to date at ${state.cursor}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error(`mirror: ${err.message}`);
    process.exit(1);
  });
}
