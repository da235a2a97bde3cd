import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createEnv, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { dbArgOf, startServer, type ServerProcess } from './support/server-process.js';

/*
 * On PostgreSQL every commit is announced by the database (NOTIFY in the writing transaction)
 * and every server listens on one connection of its own: a long-poll held by one server wakes
 * as soon as a write through another is acknowledged, not at the next poll. The servers here
 * poll once an hour, so a prompt wake-up can only come from the announcement.
 */

const PG = process.env.PRODGRAPH_TEST_PG;
const NO_POLL = { PRODGRAPH_CHANGE_POLL_MS: '3600000' };

describe(
  'commits announced through PostgreSQL',
  { skip: PG ? false : 'PostgreSQL only (PRODGRAPH_TEST_PG)' },
  () => {
    let env: TestEnv;
    let a: ServerProcess;
    let b: ServerProcess;
    let key: string;
    let metricsKey: string;
    let admin: pg.Client;

    const headers = () => ({ authorization: `Bearer ${key}` });

    const head = async (server: ServerProcess): Promise<string> => {
      const r = await fetch(`${server.url}/api/v1/changes?after=now`, { headers: headers() });
      return ((await r.json()) as { next_cursor: string }).next_cursor;
    };

    /** Until `server` holds `n` long-polls (its metrics say so). */
    const held = async (server: ServerProcess, n: number): Promise<void> => {
      for (;;) {
        const r = await fetch(`${server.url}/metrics`, {
          headers: { authorization: `Bearer ${metricsKey}` },
        });
        const m = /^prodgraph_change_feed_waiters (\d+)$/m.exec(await r.text());
        if (Number(m?.[1]) === n) return;
      }
    };

    const write = async (server: ServerProcess, label: string): Promise<void> => {
      const r = await fetch(`${server.url}/api/v1/assets`, {
        method: 'POST',
        headers: { ...headers(), 'content-type': 'application/json' },
        body: JSON.stringify({ label }),
      });
      const body = await r.text();
      assert.equal(r.status, 201, body);
    };

    /** A long-poll on `reader`, held, then a write through `writer`: how long after the write's acknowledgement the poll answered. */
    const wake = async (reader: ServerProcess, writer: ServerProcess, label: string): Promise<number> => {
      const cursor = await head(reader);
      let answered = 0;
      const poll = fetch(`${reader.url}/api/v1/changes?after=${cursor}&wait=30`, { headers: headers() }).then(
        async (r) => {
          answered = performance.now();
          return (await r.json()) as { changes: Array<{ kind: string }> };
        },
      );
      await held(reader, 1);
      await write(writer, label);
      const acknowledged = performance.now();
      const page = await poll;
      assert.ok(
        page.changes.some((c) => c.kind === 'asset'),
        'the long-poll answers with the write',
      );
      return answered - acknowledged;
    };

    /** The LISTEN connections of the server whose connections carry `name`. */
    const listeners = async (name: string): Promise<number[]> =>
      (
        await admin.query<{ pid: number }>(
          `select pid from pg_stat_activity where application_name = $1 and query like 'LISTEN %'`,
          [name],
        )
      ).rows.map((r) => r.pid);

    before(async () => {
      env = await createEnv('postgres');
      await env.import(smallProduction('film'));
      key = await env.mint({ production: 'film', scopes: ['read', 'write'] });
      metricsKey = await env.mint({ production: 'film', scopes: ['metrics'] });
      const named = (name: string) => {
        const url = new URL(dbArgOf(env));
        url.searchParams.set('application_name', name);
        return url.toString();
      };
      [a, b] = await Promise.all([
        startServer(env, NO_POLL, { db: named('notify-a') }),
        startServer(env, NO_POLL, { db: named('notify-b') }),
      ]);
      admin = new pg.Client({ connectionString: PG });
      await admin.connect();
    });

    after(async () => {
      for (const s of [a, b]) {
        if (s && s.child.exitCode === null) {
          s.child.kill('SIGTERM');
          await s.exited;
        }
      }
      await admin?.end();
      await env?.close();
    });

    it('a long-poll on one server wakes promptly after a write acknowledged through another', async () => {
      for (let i = 0; i < 3; i++) {
        const ms = await wake(b, a, `across ${i}`);
        // the servers poll once an hour: only the database's announcement wakes it this soon
        assert.ok(ms < 1000, `woken ${ms.toFixed(0)} ms after the write`);
      }
    });

    it('answers kept by one server are dropped as soon as a write through another commits', async () => {
      const entries = async (server: ServerProcess): Promise<number> => {
        const r = await fetch(`${server.url}/metrics`, {
          headers: { authorization: `Bearer ${metricsKey}` },
        });
        return Number(/^prodgraph_answer_cache_entries (\d+)$/m.exec(await r.text())?.[1]);
      };
      assert.equal((await fetch(`${b.url}/api/v1/production`, { headers: headers() })).status, 200);
      assert.ok((await entries(b)) > 0, 'b keeps the answer');
      await write(a, 'retires b’s answers');
      const deadline = performance.now() + 5000;
      while ((await entries(b)) > 0) assert.ok(performance.now() < deadline, 'b dropped its kept answers');
    });

    it('a lost listening connection is reopened, and wake-ups resume (commits made meanwhile included)', async () => {
      const [old] = await listeners('notify-b');
      assert.ok(old, 'server b listens on a connection of its own');
      const cursor = await head(b);
      const poll = fetch(`${b.url}/api/v1/changes?after=${cursor}&wait=30`, { headers: headers() });
      await held(b, 1);
      await admin.query('select pg_terminate_backend($1)', [old]);
      while ((await listeners('notify-b')).includes(old));
      // b may not listen yet: this commit is then found when it listens again
      await write(a, 'while b was deaf');
      const started = performance.now();
      const page = (await (await poll).json()) as { changes: unknown[] };
      assert.equal(page.changes.length, 1);
      assert.ok(performance.now() - started < 5000, 'found once b listens again, not at the next poll');
      while ((await listeners('notify-b')).length === 0);
      const ms = await wake(b, a, 'after the reconnection');
      assert.ok(ms < 1000, `woken ${ms.toFixed(0)} ms after the write`);
    });

    it('installs in other schemas of the database hear none of these commits', async () => {
      const other = await createEnv('postgres');
      try {
        await other.import(smallProduction('other'));
        const otherKey = await other.mint({ production: 'other', scopes: ['write'] });
        const url = new URL(PG!);
        url.searchParams.set('options', `-c search_path=${other.schema!}`);
        const listener = new pg.Client({ connectionString: url.toString() });
        await listener.connect();
        try {
          const { rows } = await listener.query<{ c: string }>(
            `select 'prodgraph_commits_' || md5(current_schema()) as c`,
          );
          await listener.query(`LISTEN "${rows[0]!.c}"`);
          const first = once(listener, 'notification') as Promise<[pg.Notification]>;
          // a commit in this file's schema, then one in the other's: the other's channel hears only its own
          await write(a, 'not for the other schema');
          const created = await other.app.inject({
            method: 'POST',
            url: '/api/v1/assets',
            headers: { authorization: `Bearer ${otherKey}` },
            payload: { label: 'for the other schema' },
          });
          assert.equal(created.statusCode, 201);
          const production = await other.handle.db
            .selectFrom('productions')
            .select(['id', 'revision'])
            .executeTakeFirstOrThrow();
          const [notification] = await first;
          assert.equal(notification.payload, `${production.id}:${production.revision}`);
        } finally {
          await listener.end();
        }
      } finally {
        await other.close();
      }
    });
  },
);
