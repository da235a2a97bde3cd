import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openAndMigrate, openDatabase, type DbHandle } from '../src/db/index.js';
import { mintKey } from '../src/auth/key-service.js';
import { importDocument } from '../src/document/import.js';
import { parseDocument } from '../src/document/parse.js';
import { FileMediaStore } from '../src/media/store.js';
import { createEnv, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call, get, type Reply } from './support/http.js';

/*
 * A database that refuses the service is the server's trouble, never the client's: every class
 * of refusal answers 503 {detail, code: "unavailable"} with Retry-After, never 500. On a real
 * PostgreSQL: a database of the test's own closed to connections (ALTER DATABASE … ALLOW_CONNECTIONS
 * false, SQLSTATE 55000), a backend terminated under a request (pg_terminate_backend, 57P01), a
 * role over its connection limit (53300). The classes PostgreSQL sends only while it crashes,
 * starts or stops (57P02, 57P03) and the connection failures (08xxx) come from a listener that
 * answers the driver's startup message exactly as PostgreSQL refuses one (an ErrorResponse with
 * that SQLSTATE), since the shared PostgreSQL cannot be crashed or restarted under the suite.
 * On SQLite: a write held past the busy wait by another connection's write lock.
 */

const PG_URL = process.env.PRODGRAPH_TEST_PG;

function assertUnavailable(r: Reply, what: string): void {
  assert.equal(r.status, 503, `${what}: ${r.text}`);
  assert.equal(r.body.code, 'unavailable', what);
  assert.match(r.body.detail, /database is not available/, what);
  assert.ok(Number(r.headers['retry-after']) > 0, `${what}: Retry-After`);
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>, database?: string): Promise<T> {
  const url = new URL(PG_URL!);
  if (database) url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** What PostgreSQL sends when it refuses a connection: an ErrorResponse (FATAL, the SQLSTATE), then it hangs up. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.concat(
    [
      ['S', 'FATAL'],
      ['V', 'FATAL'],
      ['C', code],
      ['M', message],
    ].map(([k, v]) => Buffer.from(`${k}${v}\0`)),
  );
  const length = Buffer.alloc(4);
  length.writeInt32BE(4 + fields.length + 1);
  return Buffer.concat([Buffer.from('E'), length, fields, Buffer.from('\0')]);
}

/** A listener that refuses every login the way PostgreSQL does, with `code` for now. */
class RefusingPostgres {
  code = '57P03';
  message = 'the database system is starting up';
  private readonly server: Server = createServer((socket: Socket) => {
    socket.on('error', () => undefined);
    // the startup message (its length first): answered with the refusal
    socket.once('data', () => socket.end(errorResponse(this.code, this.message)));
  });

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('a PostgreSQL that refuses the service answers 503, never 500 [postgres]', { skip: !PG_URL }, () => {
  const suffix = randomBytes(5).toString('hex');
  const database = `pgu_${suffix}`;
  const limited = `pgu_role_${suffix}`;
  let url: URL;
  let handle: DbHandle;
  let app: App;
  let key: string;
  const dir = join(tmpdir(), `prodgraph-pgu-${suffix}`);
  const config = () =>
    loadConfig({ db: url.toString(), media: join(dir, 'media') }, { PRODGRAPH_RATE_LIMIT: 'off' });

  before(async () => {
    await admin((c) => c.query(`create database ${database}`));
    await admin((c) => c.query(`create role ${limited} login connection limit 0`));
    url = new URL(PG_URL!);
    url.pathname = `/${database}`;
    handle = await openAndMigrate({ dialect: 'postgres', url: url.toString() }, { connectTimeoutMs: 2000 });
    await importDocument(handle.db, parseDocument(JSON.stringify(smallProduction('refused'))), {
      store: new FileMediaStore(join(dir, 'media')),
      baseDir: dir,
    });
    key = (await mintKey(handle.db, { production: 'refused', label: 'pipeline', scopes: ['read', 'write'] }))
      .token;
    app = await buildApp({ config: config(), database: handle, logger: false });
    await app.ready();
  });

  after(async () => {
    await app?.close();
    await handle?.close();
    await admin(async (c) => {
      await c.query(`alter database ${database} allow_connections true`).catch(() => undefined);
      await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [database]);
      await c.query(`drop database if exists ${database}`);
      await c.query(`drop role if exists ${limited}`);
    });
    await rm(dir, { recursive: true, force: true });
  });

  /** Every connection to the test's database ended, and the app's pool empty (it saw them go). */
  async function endConnections(): Promise<void> {
    await admin((c) =>
      c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [database]),
    );
    for (let i = 0; i < 200 && (handle.poolStats()?.total ?? 0) > 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.equal(handle.poolStats()?.total, 0, 'the pool still holds a connection');
  }

  it('55000: a database closed to connections (ALLOW_CONNECTIONS false) is 503 for reads and writes; open again, 200', async () => {
    assert.equal((await get(app, '/api/v1/production', key)).status, 200);
    await admin((c) => c.query(`alter database ${database} allow_connections false`));
    try {
      await endConnections();
      assertUnavailable(await get(app, '/api/v1/production', key), 'a read');
      assertUnavailable(
        await call(app, 'POST', '/api/v1/assets', { token: key, body: { label: 'Closed' } }),
        'a write',
      );
    } finally {
      await admin((c) => c.query(`alter database ${database} allow_connections true`));
    }
    assert.equal((await get(app, '/api/v1/production', key)).status, 200);
    const labels = await handle.db.selectFrom('nodes').where('label', '=', 'Closed').select('id').execute();
    assert.equal(labels.length, 0, 'the refused write wrote nothing');
  });

  it('57P01: the backend serving a request terminated under it (pg_terminate_backend) is 503', async () => {
    await admin(async (holder) => {
      // the request's first query (its key and production) waits on this lock until it is cut
      await holder.query('begin');
      await holder.query('lock table productions in access exclusive mode');
      const answer = get(app, '/api/v1/production', key);
      let waiting: number | undefined;
      for (let i = 0; i < 500 && waiting === undefined; i++) {
        const rows = await admin((c) =>
          c.query<{ pid: number }>(
            "select pid from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and pid <> $2",
            [database, (holder as unknown as { processID: number }).processID],
          ),
        );
        waiting = rows.rows[0]?.pid;
        if (waiting === undefined) await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(waiting, 'the request never waited on the lock');
      await admin((c) => c.query('select pg_terminate_backend($1)', [waiting]));
      assertUnavailable(await answer, 'the terminated request');
      await holder.query('rollback');
    }, database);
    assert.equal((await get(app, '/api/v1/production', key)).status, 200, 'a new connection serves the next');
  });

  it('53300: a role over its connection limit is 503', async () => {
    const refused = new URL(url);
    refused.username = limited;
    const other = openDatabase({ dialect: 'postgres', url: refused.toString() }, { connectTimeoutMs: 2000 });
    const second = await buildApp({ config: config(), database: other, logger: false });
    try {
      await second.ready();
      assertUnavailable(await get(second, '/api/v1/production', key), 'too many connections');
    } finally {
      await second.close();
      await other.close();
    }
  });

  it('40P01: a write chosen as the victim of a deadlock is 503 and leaves nothing; the next one is written', async () => {
    const { rows } = await admin(
      (c) =>
        c.query(
          `select n.id, n.production_id from nodes n join productions p on p.id = n.production_id
           where p.code = 'refused' and n.kind <> 'scene' and n.retired_at is null order by n.id limit 1`,
        ),
      database,
    );
    const { id: nodeId, production_id: productionId } = rows[0] as { id: number; production_id: number };
    const revision = async () =>
      (
        await admin(
          (c) => c.query('select revision from productions where id = $1', [productionId]),
          database,
        )
      ).rows[0].revision as number;
    const before = await revision();
    // Another session holds the production's row (every write's last statement moves its
    // revision) and waits long before looking for deadlocks, so the request's own backend is the
    // one that finds the cycle and is rolled back.
    const other = new pg.Client({ connectionString: new URL(`/${database}`, PG_URL).toString() });
    await other.connect();
    try {
      await other.query("begin; set local deadlock_timeout = '30s'");
      await other.query('update productions set revision = revision where id = $1', [productionId]);
      const answer = call(app, 'POST', `/api/v1/assets/${nodeId}/notes`, {
        token: key,
        body: { text: 'caught in a deadlock' },
      });
      // the request holds the asset's row and waits for the production's
      await admin(async (c) => {
        for (;;) {
          const waiting = await c.query(
            `select 1 from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and pid <> $2`,
            [database, (other as unknown as { processID: number }).processID],
          );
          if (waiting.rowCount) return;
          await new Promise((r) => setTimeout(r, 20));
        }
      });
      const blocked = other.query('update nodes set updated_at = updated_at where id = $1', [nodeId]);
      assertUnavailable(await answer, '40P01 deadlock');
      await blocked;
      await other.query('rollback');
    } finally {
      await other.end();
    }
    assert.equal(await revision(), before, 'the victim wrote nothing');
    const again = await call(app, 'POST', `/api/v1/assets/${nodeId}/notes`, {
      token: key,
      body: { text: 'written once the way is clear' },
    });
    assert.equal(again.status, 201, again.text);
  });

  it('57P02, 57P03 and the connection failures (08xxx) are 503, as is no server at all', async () => {
    const refusing = new RefusingPostgres();
    const port = await refusing.start();
    const at = new URL(url);
    at.host = `127.0.0.1:${port}`;
    const other = openDatabase({ dialect: 'postgres', url: at.toString() }, { connectTimeoutMs: 2000 });
    const second = await buildApp({ config: config(), database: other, logger: false });
    try {
      await second.ready();
      const classes: Array<[string, string]> = [
        ['57P02', 'terminating connection because of crash of another server process'],
        ['57P03', 'the database system is starting up'],
        ['57P03', 'the database system is shutting down'],
        ['08006', 'connection failure'],
        ['08001', 'could not establish connection'],
        ['08004', 'server rejected the connection'],
        ['08P01', 'invalid startup packet layout'],
      ];
      for (const [code, message] of classes) {
        refusing.code = code;
        refusing.message = message;
        assertUnavailable(await get(second, '/api/v1/production', key), `${code} ${message}`);
        assertUnavailable(
          await call(second, 'POST', '/api/v1/assets', { token: key, body: { label: 'x' } }),
          `${code} on a write`,
        );
      }
    } finally {
      await second.close();
      await other.close();
      await refusing.close();
    }
    // nobody listening at all: ECONNREFUSED
    const gone = new URL(url);
    gone.host = `127.0.0.1:${port}`;
    const none = openDatabase({ dialect: 'postgres', url: gone.toString() }, { connectTimeoutMs: 2000 });
    const third = await buildApp({ config: config(), database: none, logger: false });
    try {
      await third.ready();
      assertUnavailable(await get(third, '/api/v1/production', key), 'connection refused');
    } finally {
      await third.close();
      await none.close();
    }
  });
});

describe('a SQLite database held past the busy wait answers 503, never 500 [sqlite]', () => {
  let env: TestEnv;
  let key: string;

  before(async () => {
    env = await createEnv('sqlite');
    await env.import(smallProduction('busy'));
    key = await env.mint({ production: 'busy', scopes: ['read', 'write'] });
  });
  after(() => env.close());

  it('a write that waits out the busy timeout behind another process’s write lock is 503; reads go on; released, writes go on', async () => {
    if (env.config.db.dialect !== 'sqlite') return;
    const other = new Database(env.config.db.path);
    other.exec('begin immediate');
    try {
      assertUnavailable(
        await call(env.app, 'POST', '/api/v1/assets', { token: key, body: { label: 'Held' } }),
        'a write behind the lock',
      );
      assert.equal((await get(env.app, '/api/v1/production', key)).status, 200, 'reads go on');
    } finally {
      other.exec('rollback');
      other.close();
    }
    const after = await call(env.app, 'POST', '/api/v1/assets', { token: key, body: { label: 'Held' } });
    assert.equal(after.status, 201, after.text);
  });
});
