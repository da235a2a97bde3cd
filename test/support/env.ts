import { rmSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openAndMigrate, type DbHandle, type Dialect } from '../../src/db/index.js';
import { importDocument, type ImportResult } from '../../src/document/import.js';
import { parseDocument } from '../../src/document/parse.js';
import type { ProductionDocument } from '../../src/document/schema.js';
import { mintKey, type MintInput } from '../../src/auth/key-service.js';
import { FileMediaStore, type MediaStore } from '../../src/media/store.js';
import type { WaitClock } from '../../src/util/wait-clock.js';

/** SQLite always; PostgreSQL as well when PRODGRAPH_TEST_PG holds a URL (CI sets it). */
export const DIALECTS: Dialect[] = process.env.PRODGRAPH_TEST_PG ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestEnv {
  dialect: Dialect;
  /** PostgreSQL: the schema this env works in (another process reaches it through the URL's options). */
  schema?: string;
  handle: DbHandle;
  store: FileMediaStore;
  config: Config;
  dir: string;
  /** Queries executed since the counter was last reset (`parameters[i]` belongs to `sql[i]`). */
  queries: { count: number; sql: string[]; parameters: Array<readonly unknown[]> };
  app: App;
  import(doc: ProductionDocument | string, baseDir?: string): Promise<ImportResult>;
  mint(input: Partial<MintInput> & { production: string }): Promise<string>;
  close(): Promise<void>;
}

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.PRODGRAPH_TEST_PG });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

let sqliteTemplate: Promise<string> | undefined;

/**
 * A SQLite database migrated once per test process; each env starts from a copy of it. Migrating
 * is most of what a new SQLite env costs (about 0.6 s of CPU), and a copy of the migrated file is
 * byte for byte what migrating a new file gives. Removed when the process exits.
 */
function migratedSqliteFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prodgraph-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'migrated.db');
    const handle = await openAndMigrate({ dialect: 'sqlite', path });
    // closing checkpoints the write-ahead log into the file, so the file alone is the database
    await handle.close();
    return path;
  })();
  return sqliteTemplate;
}

/**
 * A fresh, migrated database (a temp SQLite file, or a PostgreSQL schema of its own), a temp
 * media folder and an app on top. Every test builds its own fixture into it.
 */
export interface EnvOptions {
  /** Wraps the file store the app uses (e.g. to inject failures); `env.store` stays the inner store. */
  wrapStore?: (store: FileMediaStore) => MediaStore;
  /** Receives the app's log lines (at PRODGRAPH_LOG_LEVEL) instead of silencing them. */
  logStream?: { write(line: string): void };
  /** An empty folder to hold the database file and media folder instead of a new temporary one (removed on close). */
  dir?: string;
  /** The clock the app's long waits run on (AppOptions.clock), when the test moves it. */
  clock?: WaitClock;
}

/** The statement SigningSecrets reads the secrets with (signing-repository's readSecrets). */
const SECRETS_REFRESH = /^select "generation", "secret", "created_at", "retired_at" from "signing_secrets"/;

export async function createEnv(
  dialect: Dialect,
  env: NodeJS.ProcessEnv = {},
  options: EnvOptions = {},
): Promise<TestEnv> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'prodgraph-test-')));
  const queries = { count: 0, sql: [] as string[], parameters: [] as Array<readonly unknown[]> };
  const onQuery = (e: { query: { sql: string; parameters: readonly unknown[] } }) => {
    // SigningSecrets' read on its own timer is no request's work: counted, it lands inside
    // whichever request's count happens to be running then
    if (SECRETS_REFRESH.test(e.query.sql)) return;
    queries.count++;
    queries.sql.push(e.query.sql);
    queries.parameters.push(e.query.parameters);
  };
  let schema: string | undefined;
  let config: Config;
  // request limits are off unless a test turns them on: suites count queries and send bursts
  const testEnv = { PRODGRAPH_RATE_LIMIT: 'off', ...env };
  if (dialect === 'postgres') {
    schema = `t_${randomBytes(6).toString('hex')}`;
    await withAdmin((c) => c.query(`create schema ${schema}`));
    config = loadConfig({ db: process.env.PRODGRAPH_TEST_PG!, media: join(dir, 'media') }, testEnv);
  } else {
    config = loadConfig({ db: join(dir, 'test.db'), media: join(dir, 'media') }, testEnv);
    await copyFile(await migratedSqliteFile(), join(dir, 'test.db'));
  }
  const dropSchema = async () => {
    if (schema) await withAdmin((c) => c.query(`drop schema ${schema} cascade`));
  };
  const store = new FileMediaStore(config.mediaDir);
  let handle: DbHandle | undefined;
  let app: App;
  try {
    handle = await openAndMigrate(config.db, { onQuery, schema, poolSize: 5 });
    app = await buildApp({
      config,
      database: handle,
      store: options.wrapStore ? options.wrapStore(store) : store,
      ...(options.logStream ? { logStream: options.logStream } : { logger: false }),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    await app.ready();
  } catch (err) {
    // an open pool would keep the test file's process alive long after its failure
    await handle?.close().catch(() => undefined);
    await dropSchema().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  queries.count = 0;
  queries.sql.length = 0;
  queries.parameters.length = 0;
  return {
    dialect,
    schema,
    handle,
    store,
    config,
    dir,
    queries,
    app,
    async import(doc, baseDir = dir) {
      const parsed = typeof doc === 'string' ? parseDocument(doc) : parseDocument(JSON.stringify(doc));
      return importDocument(handle.db, parsed, { store, baseDir });
    },
    async mint(input) {
      const key = await mintKey(handle.db, { label: 'test key', ...input });
      return key.token;
    },
    async close() {
      await app.close();
      await handle.close();
      await dropSchema();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A second connection pool to a test's database (its own PostgreSQL schema), as another process would have. */
export async function openSecondHandle(env: TestEnv): Promise<DbHandle> {
  if (env.dialect === 'sqlite') return openAndMigrate(env.config.db);
  const schema = (
    await env.handle.db
      .selectNoFrom((eb) => eb.fn<string>('current_schema', []).as('s'))
      .executeTakeFirstOrThrow()
  ).s;
  return openAndMigrate(env.config.db, { schema, poolSize: 3 });
}
