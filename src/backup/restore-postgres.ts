import { createHash } from 'node:crypto';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import type { DbTarget } from '../config.js';
import { migrate, openDatabase } from '../db/index.js';
import { sqliteFile } from './backup.js';
import { BackupError, describeDatabase, type Manifest } from './manifest.js';
import { postgresPlace } from './pending.js';
import { compareRows } from './rows.js';
import type { StagedDatabase } from './staging.js';
import { copyTable, resetSequences, tablesInOrder } from './tables.js';

/*
 * PostgreSQL: the restore loads a staging schema of its own, then moves every table into the
 * schema the target URL works in — `current_schema()`, the first schema of its search_path that
 * exists, exactly where `serve` with the same URL looks — in one transaction. Until that commit
 * the target schema is untouched; a killed restore leaves only the staging schema, which the
 * next restore into the same schema drops. An advisory lock held for the whole restore keeps
 * two restores into one schema apart; it goes with the connection, so a killed one frees it.
 */

type PostgresTarget = Extract<DbTarget, { dialect: 'postgres' }>;

/** Kysely's bookkeeping: it records the migrations run, not a production's data. */
const BOOKKEEPING = ['kysely_migration', 'kysely_migration_lock'];
/** What a server makes on its own in an empty schema (its ticket-signing secret): no content of a database. */
const SELF_MADE = ['signing_secrets'];

/** How long a restore waits for one into the same schema to let go (a killed one's connection to end). */
const LOCK_WAIT = '20s';

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The URL with a search_path of `schema` after whatever options it carries (the last -c wins). */
function inSchema(url: string, schema: string): string {
  const u = new URL(url);
  const options = u.searchParams.get('options');
  u.searchParams.set('options', `${options ? `${options} ` : ''}-c search_path=${schema}`);
  return u.toString();
}

/** A staging schema's name: one per target schema, so a killed restore's is found by the next. */
const stagingSchemaFor = (schema: string) =>
  `prodgraph_restore_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;

/** The target's tables among `names` that hold a row (the bookkeeping aside). */
async function filledTables(client: pg.ClientBase, schema: string, names: string[]): Promise<string[]> {
  const { rows } = await client.query<{ t: string }>(
    'select tablename as t from pg_tables where schemaname = $1 and tablename = any($2)',
    [schema, names],
  );
  const filled: string[] = [];
  for (const { t } of rows) {
    if (BOOKKEEPING.includes(t) || SELF_MADE.includes(t)) continue;
    const r = await client.query(`select 1 from ${ident(schema)}.${ident(t)} limit 1`);
    if (r.rowCount) filled.push(t);
  }
  return filled;
}

export class PostgresStaging implements StagedDatabase {
  readonly cleared: string[] = [];
  private readonly staging: string;
  private readonly where: string;
  private made = false;

  private constructor(
    private readonly target: PostgresTarget,
    private readonly client: pg.Client,
    private readonly schema: string,
  ) {
    this.staging = stagingSchemaFor(schema);
    this.where = `${describeDatabase(target)} (schema ${schema})`;
  }

  get place(): string {
    return postgresPlace(this.target.url, this.schema);
  }

  /**
   * Takes the target schema's restore lock, drops a killed restore's staging schema, and refuses
   * a schema that holds a prodgraph database; a schema whose prodgraph tables are all empty (what
   * any command pointed at an empty schema makes; `serve` adds its signing secret) counts as empty.
   */
  static async open(target: PostgresTarget, backupFile: string): Promise<PostgresStaging> {
    const client = new pg.Client({ connectionString: target.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const { rows } = await client.query<{ s: string | null }>('select current_schema() as s');
      const schema = rows[0]?.s;
      if (!schema)
        throw new BackupError(
          `${describeDatabase(target)}: no schema of its search_path exists; create the schema first`,
        );
      const staging = new PostgresStaging(target, client, schema);
      await staging.lock();
      await staging.dropLeftover();
      await staging.refuseFilled(await backupTables(backupFile));
      return staging;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  }

  private async lock(): Promise<void> {
    await this.client.query(`set lock_timeout = '${LOCK_WAIT}'`);
    try {
      await this.client.query("select pg_advisory_lock(hashtext('prodgraph restore'), hashtext($1))", [
        this.schema,
      ]);
    } catch (err) {
      if ((err as { code?: string }).code !== '55P03') throw err;
      throw new BackupError(`another restore into ${this.where} is running; wait for it to end`);
    }
    await this.client.query('set lock_timeout = 0');
  }

  private async dropLeftover(): Promise<void> {
    const { rowCount } = await this.client.query('select 1 from pg_namespace where nspname = $1', [
      this.staging,
    ]);
    if (!rowCount) return;
    await this.client.query(`drop schema ${ident(this.staging)} cascade`);
    this.cleared.push(`schema ${this.staging} (a killed restore's staging)`);
  }

  private async refuseFilled(names: string[]): Promise<void> {
    if ((await filledTables(this.client, this.schema, names)).length > 0)
      throw new BackupError(
        `${this.where} already holds a prodgraph database; restore refuses to overwrite it: name an empty database or schema`,
      );
  }

  /** The backup's rows into the staging schema, migrated to this version, in one transaction; answers the rows. */
  async load(backupFile: string, manifest: Manifest): Promise<number> {
    try {
      await this.client.query(`create schema ${ident(this.staging)}`);
    } catch (err) {
      if ((err as { code?: string }).code === '42501')
        throw new BackupError(
          `${this.where}: restore needs the right to create a schema in the database (it loads one of its own, then moves the tables): ${(err as Error).message}`,
        );
      throw err;
    }
    this.made = true;
    await this.client.query(
      `comment on schema ${ident(this.staging)} is 'prodgraph restore in progress into schema ${this.schema.replaceAll("'", "''")}; not a database: the next restore into that schema drops it'`,
    );
    const handle = openDatabase(
      { dialect: 'postgres', url: inSchema(this.target.url, this.staging) },
      { poolSize: 1 },
    );
    const backup = new SQLite(backupFile, { readonly: true, fileMustExist: true });
    try {
      await migrate(handle.db, 'postgres');
      const from = sqliteFile(backup);
      const tables = await tablesInOrder(from);
      await handle.db.transaction().execute(async (into) => {
        // the empty tables the migrations made, but a migration may seed rows: the backup's win
        for (const t of [...tables].reverse()) await sql`delete from ${sql.table(t.name)}`.execute(into);
        for (const t of tables) await copyTable(from, into, t.name, t.columns);
        await resetSequences(into, 'postgres', tables);
      });
      return await compareRows(handle.db, manifest);
    } finally {
      backup.close();
      await handle.close();
    }
  }

  /** The commit: in one transaction, the target's empty prodgraph tables dropped and the staged ones moved in. */
  async commit(): Promise<void> {
    const c = this.client;
    await c.query('begin');
    try {
      const { rows } = await c.query<{ t: string }>(
        'select tablename as t from pg_tables where schemaname = $1',
        [this.staging],
      );
      const names = rows.map((r) => r.t);
      const there = (
        await c.query<{ t: string }>(
          'select tablename as t from pg_tables where schemaname = $1 and tablename = any($2)',
          [this.schema, names],
        )
      ).rows.map((r) => `${ident(this.schema)}.${ident(r.t)}`);
      if (there.length > 0) {
        await c.query(`lock table ${there.join(', ')} in access exclusive mode`);
        await this.refuseFilled(names);
        await c.query(`drop table ${there.join(', ')}`);
      }
      for (const t of names)
        await c.query(`alter table ${ident(this.staging)}.${ident(t)} set schema ${ident(this.schema)}`);
      await c.query(`drop schema ${ident(this.staging)}`);
      await c.query('commit');
      this.made = false;
    } catch (err) {
      await c.query('rollback').catch(() => undefined);
      throw err;
    }
  }

  /** After a failure: the staging schema dropped (the target was never touched). */
  async discard(): Promise<void> {
    if (this.made) await this.client.query(`drop schema if exists ${ident(this.staging)} cascade`);
    this.made = false;
  }

  /** Lets go of the lock (with the connection). */
  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

/** The tables a backup holds, and the bookkeeping every migrated database has. */
async function backupTables(file: string): Promise<string[]> {
  const backup = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    return [...(await tablesInOrder(sqliteFile(backup))).map((t) => t.name), ...BOOKKEEPING];
  } finally {
    backup.close();
  }
}
