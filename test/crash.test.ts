import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { multipart } from './support/multipart.js';
import { ALL_SCOPES, png, roundTripDocument } from './support/round-trip.js';
import { startServer, type ServerProcess } from './support/server-process.js';

/**
 * Crash durability: a stream of acknowledged writes, the server SIGKILLed in the middle of it,
 * restarted, and everything checked. PRODGRAPH_CRASH_ITERATIONS runs more kills (default 3 per
 * database).
 */
const ITERATIONS = Number(process.env.PRODGRAPH_CRASH_ITERATIONS ?? 3);
/** Approvals to decide, one per decision in the stream (then decisions give way to notes). */
const APPROVALS = 40 * ITERATIONS;

type Kind = 'note' | 'asset' | 'version' | 'submission' | 'event' | 'decision';

interface Write {
  kind: Kind;
  key: string;
  marker: string;
  send: (base: string) => Promise<Response>;
  acked?: { status: number; body: unknown };
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

/** Runs `fn` over `items`, at most `width` at a time; the first failure fails the whole. */
async function inParallel<T>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: width }, lane));
}

for (const dialect of DIALECTS) {
  describe(`crash durability: SIGKILL during acknowledged writes [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Record<string, number>;
    let key: string;
    let vendor: string;
    let image: Buffer;
    let server: ServerProcess | undefined;
    const tally = { iterations: 0, acked: 0, inFlight: 0, replayed: 0 };
    let decided = 0;
    const byKind: Partial<Record<Kind, number>> = {};

    before(async () => {
      env = await createEnv(dialect);
      // pending single-step approvals for the decisions in the stream
      const doc = await roundTripDocument('film', env.dir);
      doc.approvals = [
        ...(doc.approvals ?? []),
        ...Array.from({ length: APPROVALS }, (_, i) => ({
          ref: `ap-crash-${i}`,
          title: `crash approval ${i}`,
          mode: 'decision' as const,
          status: 'pending' as const,
          department: 'vfx',
          steps: ['p-ben'],
        })),
      ];
      refs = (await env.import(doc, env.dir)).refs;
      key = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      vendor = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
      image = await png('#345', 64);
    });
    after(async () => {
      if (server) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      await env.close();
    });

    const json = (token: string, idem: string, body: unknown): RequestInit => ({
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': idem,
      },
      body: JSON.stringify(body),
    });
    const form = (token: string, idem: string, entries: Parameters<typeof multipart>[0]): RequestInit => {
      const { payload, headers } = multipart(entries);
      return {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': idem, ...headers },
        body: payload,
      };
    };

    function nextWrite(n: number): Write {
      const marker = `crash-${randomUUID()}`;
      const idem = randomUUID();
      const at = new Date().toISOString();
      const kinds: Kind[] = ['note', 'asset', 'version', 'submission', 'event', 'decision'];
      let kind = kinds[n % kinds.length]!;
      if (kind === 'decision' && decided >= APPROVALS) kind = 'note';
      const approval = kind === 'decision' ? refs[`ap-crash-${decided++}`]! : 0;
      const coat = refs['co-coat']!;
      const requests: Record<Kind, (base: string) => Promise<Response>> = {
        note: (b) => fetch(`${b}/api/v1/assets/${coat}/notes`, json(key, idem, { text: marker })),
        asset: (b) => fetch(`${b}/api/v1/assets`, json(key, idem, { label: marker })),
        version: (b) =>
          fetch(
            `${b}/api/v1/assets/${coat}/versions`,
            form(key, idem, [
              { name: 'note', value: marker },
              { name: 'file', filename: 'v.png', content: image },
            ]),
          ),
        submission: (b) =>
          fetch(
            `${b}/api/v1/turnovers/${refs['dl-plates']}/submissions`,
            form(vendor, idem, [
              { name: 'title', value: marker },
              { name: 'files', filename: 'a.png', content: image },
              { name: 'files', filename: 'b.png', content: image },
            ]),
          ),
        event: (b) =>
          fetch(
            `${b}/api/v1/storage/events`,
            json(key, idem, {
              filespace: 'film-fs',
              events: [
                {
                  event_type: 'create',
                  path: `crash/${marker}.exr`,
                  source: 'scan',
                  dedupe_key: marker,
                  detected_at: at,
                },
              ],
            }),
          ),
        decision: (b) =>
          fetch(
            `${b}/api/v1/approvals/${approval}/decide`,
            json(key, idem, { decision: 'approved', decided_by: 'Ben Okafor', note: marker }),
          ),
      };
      return { kind, key: idem, marker, send: requests[kind] };
    }

    /** How many times a write's marker is in the database. */
    async function countOf(w: Write): Promise<number> {
      const db = env.handle.db;
      const one = async (q: Promise<{ n: number | string }>) => Number((await q).n);
      switch (w.kind) {
        case 'note':
          return one(
            db
              .selectFrom('version_notes')
              .where('text', '=', w.marker)
              .select((e) => e.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow(),
          );
        case 'asset':
          return one(
            db
              .selectFrom('nodes')
              .where('label', '=', w.marker)
              .select((e) => e.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow(),
          );
        case 'version':
          return one(
            db
              .selectFrom('versions')
              .where('note', '=', w.marker)
              .select((e) => e.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow(),
          );
        case 'submission':
          return one(
            db
              .selectFrom('work_items')
              .where('title', '=', w.marker)
              .select((e) => e.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow(),
          );
        case 'event':
          return one(
            db
              .selectFrom('storage_events')
              .where('dedupe_key', '=', w.marker)
              .select((e) => e.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow(),
          );
        case 'decision':
          return one(
            db
              .selectFrom('activity')
              .where('summary', 'like', `%${w.marker}%`)
              .select((e) => e.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow(),
          );
      }
    }

    async function checkStoreMatchesRows(): Promise<void> {
      const rows = await env.handle.db.selectFrom('media').select('storage_key').execute();
      const keys = new Set(rows.map((r) => r.storage_key));
      const files = await filesUnder(env.config.mediaDir);
      const stored = new Set(files.filter((f) => !f.startsWith('.staging')));
      for (const k of keys) assert.ok(stored.has(k), `media row without its file: ${k}`);
      for (const f of stored) assert.ok(keys.has(f), `file without its row: ${f}`);
      const staged = files.filter((f) => f.startsWith('.staging'));
      assert.deepEqual(staged, [], 'no orphaned temporary upload');
    }

    // Durability, not rate limits, is what this asks: the stream runs as fast as the server
    // writes, and a fast database writes more than a key's default 1,200 a minute.
    const unlimited = { PRODGRAPH_RATE_LIMIT: 'off' };

    it('every acknowledged write survives exactly once; nothing half-written remains; keys replay', async () => {
      let n = 0;
      server = await startServer(env, unlimited);
      for (let i = 0; i < ITERATIONS; i++) {
        tally.iterations++;
        const writes: Write[] = [];
        let killed = false;
        const worker = async () => {
          while (!killed) {
            const w = nextWrite(n++);
            writes.push(w);
            try {
              const r = await w.send(server!.url);
              const body = await r.json();
              if (r.status >= 200 && r.status < 300) w.acked = { status: r.status, body };
              else assert.fail(`${w.kind} answered ${r.status}: ${JSON.stringify(body)}`);
            } catch (err) {
              if (!killed) throw err;
            }
          }
        };
        const workers = [worker(), worker(), worker()];
        // kill somewhere in the middle of the stream
        await new Promise((r) => setTimeout(r, 800 + Math.random() * 1200));
        killed = true;
        server.child.kill('SIGKILL');
        await server.exited;
        await Promise.all(workers);
        server = undefined;

        // the store is settled by the next start, before it listens
        server = await startServer(env, unlimited);
        await checkStoreMatchesRows();
        for (const w of writes) {
          const count = await countOf(w);
          if (w.acked) {
            tally.acked++;
            byKind[w.kind] = (byKind[w.kind] ?? 0) + 1;
            assert.equal(count, 1, `acknowledged ${w.kind} ${w.marker} is there exactly once`);
          } else {
            tally.inFlight++;
            assert.ok(count <= 1, `unacknowledged ${w.kind} at most once`);
          }
        }
        // every key replays (acknowledged: the original answer; in flight: applied now, once),
        // three at a time as they were sent: each key is its own write, so order does not matter
        const restarted = server;
        await inParallel(writes, 3, async (w) => {
          const r = await w.send(restarted.url);
          const body = await r.json();
          assert.ok(
            r.status >= 200 && r.status < 300,
            `${w.kind} retry: ${r.status} ${JSON.stringify(body)}`,
          );
          if (w.acked) {
            assert.equal(r.headers.get('idempotent-replayed'), 'true', `${w.kind} replayed`);
            assert.deepEqual(body, w.acked.body, `${w.kind} replays its original answer`);
            tally.replayed++;
          }
          assert.equal(await countOf(w), 1, `${w.kind} ${w.marker} exactly once after its retry`);
        });
        await checkStoreMatchesRows();
        if (env.config.db.dialect === 'sqlite') {
          const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(env.handle.db);
          assert.deepEqual(check.rows, [{ integrity_check: 'ok' }]);
        }
        // the restarted server takes the next round's writes
      }
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0, 'a clean shutdown exits 0');
      server = undefined;
      assert.ok(tally.acked > ITERATIONS * 3, `enough writes were acknowledged (${tally.acked})`);
      console.log(
        `# crash [${dialect}]: ${tally.iterations} SIGKILLs, ${tally.acked} acknowledged writes checked, ` +
          `${tally.inFlight} in flight at the kill, ${tally.replayed} replays; acknowledged ${JSON.stringify(byKind)}`,
      );
    });
  });
}
