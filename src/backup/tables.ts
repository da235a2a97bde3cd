import { sql, type Kysely } from 'kysely';
import type { Db, Dialect } from '../db/index.js';

/*
 * A database copied table by table through the service's own schema: the same migrations make
 * the same tables on SQLite and PostgreSQL, so rows read from one are written to the other as
 * they are. Used for PostgreSQL's backup (into a SQLite file) and restore (from one).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tables named at run time
type AnyDb = Kysely<any>;

/** The migrator's own bookkeeping: the target has its own, made by migrating it. */
const BOOKKEEPING = /^kysely_/;

/** The service's tables in a SQLite database, parents before the tables that refer to them. */
export async function tablesInOrder(sqlite: Db): Promise<Array<{ name: string; columns: string[] }>> {
  const { rows } = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(
    sqlite,
  );
  const names = rows.map((r) => r.name).filter((n) => !BOOKKEEPING.test(n));
  const parents = new Map<string, string[]>();
  const columns = new Map<string, string[]>();
  for (const n of names) {
    const fks = await sql<{
      parent: string;
    }>`select "table" as parent from pragma_foreign_key_list(${n})`.execute(sqlite);
    parents.set(
      n,
      fks.rows.map((r) => r.parent).filter((p) => p !== n && names.includes(p)),
    );
    const cols = await sql<{ name: string }>`select name from pragma_table_info(${n})`.execute(sqlite);
    columns.set(
      n,
      cols.rows.map((r) => r.name),
    );
  }
  const ordered: string[] = [];
  const visit = (n: string, path: Set<string>) => {
    if (ordered.includes(n) || path.has(n)) return;
    path.add(n);
    for (const p of parents.get(n) ?? []) visit(p, path);
    ordered.push(n);
  };
  for (const n of names) visit(n, new Set());
  return ordered.map((name) => ({ name, columns: columns.get(name) ?? [] }));
}

/** Rows per statement: within both databases' limits on bound parameters. */
const batchFor = (columns: number) => Math.max(1, Math.min(1000, Math.floor(30_000 / columns)));

/**
 * Copies one table's rows from `from` to `to` in batches, ordered by id (a table without one is
 * small and read whole), answering how many. `from` is expected to be one consistent snapshot
 * (a repeatable-read transaction, or a file nobody writes).
 */
export async function copyTable(from: Db, to: Db, table: string, columns: string[]): Promise<number> {
  const src = from as AnyDb;
  const dst = to as AnyDb;
  const cols = sql.join(columns.map((c) => sql.ref(c)));
  const batch = batchFor(columns.length);
  let copied = 0;
  if (!columns.includes('id')) {
    const { rows } = await sql<Record<string, unknown>>`select ${cols} from ${sql.table(table)}`.execute(src);
    for (let i = 0; i < rows.length; i += batch)
      await dst
        .insertInto(table)
        .values(rows.slice(i, i + batch))
        .execute();
    return rows.length;
  }
  let after = -1;
  for (;;) {
    const { rows } = await sql<Record<string, unknown>>`
      select ${cols} from ${sql.table(table)} where id > ${after} order by id limit ${batch}`.execute(src);
    const last = rows.at(-1);
    if (!last) return copied;
    await dst.insertInto(table).values(rows).execute();
    copied += rows.length;
    after = Number(last.id);
  }
}

/** After rows were written with their ids, PostgreSQL's sequences continue after the largest. */
export async function resetSequences(
  db: Db,
  dialect: Dialect,
  tables: Array<{ name: string; columns: string[] }>,
) {
  if (dialect !== 'postgres') return;
  for (const t of tables) {
    if (!t.columns.includes('id')) continue;
    await sql`select setval(pg_get_serial_sequence(${t.name}, 'id'), coalesce(max(id), 1), max(id) is not null)
      from ${sql.table(t.name)}`.execute(db);
  }
}

/** How many rows each table holds. */
export async function countRows(db: Db, tables: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(t)}`.execute(db);
    out[t] = Number(rows[0]?.n ?? 0);
  }
  return out;
}
