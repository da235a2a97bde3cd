import { CompiledQuery, sql } from 'kysely';
import { onPostgres } from './kysely-surface.js';
import type { Db } from '../index.js';
import type { Database } from '../schema.js';
import { compileKeyOf } from './kysely-surface.js';
import { prepareOnPostgres } from './statement-names.js';

/*
 * Multi-row INSERTs in a few fixed shapes, each compiled once per database. Built through
 * Kysely per call, a 1,000-row insert cost a tree of one node per value and a compile per
 * statement, and every distinct row count was a distinct statement: SQLite kept each prepared
 * (hundreds of large programs in the statement cache during an import) and Kysely's garbage
 * was a tenth of an import's CPU. Here a list of rows is cut into statements of the largest
 * size the parameter limits allow, then powers of two (437 rows: 256 + 128 + 32 + 16 + 4 + 1),
 * so a table has at most about eleven shapes whatever the row counts, and each shape's SQL is
 * compiled by Kysely once, from a sample, and run with the rows' values after.
 *
 * On PostgreSQL the rows travel as one array parameter per column (`unnest`), so a table has
 * one shape whatever the row count, prepared once per connection: PostgreSQL parsed and planned
 * a 1,000-row VALUES list of 8,000 parameters on every batch, several times the cost of
 * inserting the rows (bench/FINDINGS.md).
 */

/** SQLite allows 32,766 bound parameters per statement, PostgreSQL 65,535. */
const MAX_PARAMS = 30_000;
const MAX_ROWS = 1_000;

type Table = keyof Database;
type Row = Record<string, unknown>;

/** adapter (shared by a handle and its transactions) → shape → SQL */
const shapes = new WeakMap<object, Map<string, string>>();

/** The largest number of rows one statement takes for this many columns. */
export function rowsPerStatement(columns: number): number {
  return Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMS / Math.max(1, columns))));
}

/** Statement sizes for `n` rows: full statements of `per`, then the rest in powers of two. */
export function statementSizes(n: number, per: number): number[] {
  const sizes: number[] = [];
  let left = n;
  while (left >= per) {
    sizes.push(per);
    left -= per;
  }
  for (let size = 1 << 30; left > 0; size >>= 1) {
    if (size > left) continue;
    sizes.push(size);
    left -= size;
  }
  return sizes;
}

export interface InsertOptions {
  /** Columns the statement answers for each row it wrote. */
  returning?: readonly string[];
  /** A unique key: a row that would repeat it is skipped (`on conflict (…) do nothing`). */
  skipConflictsOn?: readonly string[];
}

/**
 * Inserts `rows` (every row the same columns) and answers the `returning` columns of the rows
 * written, statement by statement in the rows' order.
 */
export async function insertMany<R = Row>(
  db: Db,
  table: Table,
  rows: readonly object[],
  options: InsertOptions = {},
): Promise<R[]> {
  const [first] = rows;
  if (!first) return [];
  const columns = Object.keys(first);
  const written: R[] = [];
  if (onPostgres(db)) {
    const arrays = arraysOf(rows as readonly Row[], columns);
    if (arrays !== null) {
      const text = await arrayShapeSql(db, table, columns, options);
      const { rows: out } = await db.executeQuery<R>(CompiledQuery.raw(text, arrays));
      return out;
    }
  }
  let at = 0;
  for (const size of statementSizes(rows.length, rowsPerStatement(columns.length))) {
    const part = rows.slice(at, at + size) as readonly Row[];
    at += size;
    const parameters = valuesOf(part, columns);
    const query = parameters
      ? CompiledQuery.raw(shapeSql(db, table, columns, size, options), parameters)
      : built(db, table, part, options).compile();
    const { rows: out } = await db.executeQuery<R>(query);
    for (const r of out) written.push(r);
  }
  return written;
}

/**
 * Inserts `rows` and answers their ids in row order: within one INSERT both dialects number
 * the rows in the order given, and a later statement's rows come after, so the ids sorted are
 * the rows' order.
 */
export async function insertManyIds(db: Db, table: Table, rows: readonly object[]): Promise<number[]> {
  const out = await insertMany<{ id: number | string }>(db, table, rows, { returning: ['id'] });
  return out.map((r) => Number(r.id)).sort((a, b) => a - b);
}

function built(db: Db, table: Table, rows: readonly Row[], { returning, skipConflictsOn }: InsertOptions) {
  let insert = db.insertInto(table).values(rows);
  if (skipConflictsOn) insert = insert.onConflict((oc) => oc.columns(skipConflictsOn as never).doNothing());
  return returning ? insert.returning(returning as never) : insert;
}

/**
 * The rows' values, row by row in `columns` order; null when a row is not plain (other
 * columns, an undefined value Kysely would write as DEFAULT, or an SQL expression): that part
 * goes through Kysely's builder as before.
 */
function valuesOf(rows: readonly Row[], columns: readonly string[]): unknown[] | null {
  const values: unknown[] = [];
  for (const row of rows) {
    if (Object.keys(row).length !== columns.length) return null;
    for (const column of columns) {
      const value = row[column];
      if (
        value === undefined ||
        (typeof value === 'object' && value !== null && !(value instanceof Uint8Array))
      )
        return null;
      values.push(value);
    }
  }
  return values;
}

/**
 * PostgreSQL: the rows as one array per column, or null when a row is not plain (as valuesOf)
 * or holds what an array parameter cannot carry as is (bytes, a bigint, a number with no
 * spelling, a nested value).
 */
function arraysOf(rows: readonly Row[], columns: readonly string[]): unknown[][] | null {
  const arrays: unknown[][] = columns.map(() => new Array<unknown>(rows.length));
  for (const [r, row] of rows.entries()) {
    if (Object.keys(row).length !== columns.length) return null;
    for (const [c, column] of columns.entries()) {
      const value = row[column];
      if (value === undefined) return null;
      if (value !== null && typeof value !== 'string' && typeof value !== 'boolean') {
        if (typeof value !== 'number' || !Number.isFinite(value)) return null;
      }
      arrays[c]![r] = value;
    }
  }
  return arrays;
}

/** adapter → table → column → its type as PostgreSQL spells it, read once per table. */
const columnTypes = new WeakMap<object, Map<string, Map<string, string>>>();

async function typesOf(db: Db, table: Table): Promise<Map<string, string>> {
  const adapter = compileKeyOf(db, 'a bulk insert');
  let byTable = columnTypes.get(adapter);
  if (!byTable) columnTypes.set(adapter, (byTable = new Map<string, Map<string, string>>()));
  let types = byTable.get(table);
  if (!types) {
    const { rows } = await sql<{ name: string; type: string }>`
      select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
      where attrelid = ${table}::regclass and attnum > 0 and not attisdropped`.execute(db);
    types = new Map(rows.map((r) => [r.name, r.type]));
    byTable.set(table, types);
  }
  return types;
}

/**
 * PostgreSQL: `insert into t (…) select * from unnest($1::type[], $2::type[], …)`, one per
 * table, columns and options, named and prepared on every connection. `unnest` of several
 * arrays yields their elements side by side, in order, so the rows are inserted (and answered
 * by `returning`) in the arrays' order, as a VALUES list would be. Arrays of a column each: a
 * 1,000-row insert reads its rows from arrays several times faster than from one JSON parameter.
 */
async function arrayShapeSql(
  db: Db,
  table: Table,
  columns: readonly string[],
  options: InsertOptions,
): Promise<string> {
  const adapter = compileKeyOf(db, 'a bulk insert');
  let byShape = shapes.get(adapter);
  if (!byShape) shapes.set(adapter, (byShape = new Map<string, string>()));
  const key = `unnest|${table}|${columns.join(',')}|${options.returning?.join(',')}|${options.skipConflictsOn?.join(',')}`;
  let text = byShape.get(key);
  if (text === undefined) {
    const types = await typesOf(db, table);
    const sample = columns.map((c) => `column ${c}`);
    const arrays = columns.map((c, i) => {
      const type = types.get(c);
      if (!type) throw new Error(`internal: ${table} has no column ${c}`);
      return sql`${sample[i]}::${sql.raw(type)}[]`;
    });
    let insert = db
      .insertInto(table)
      .columns(columns as never)
      .expression(sql`select * from unnest(${sql.join(arrays)})` as never);
    const { returning, skipConflictsOn } = options;
    if (skipConflictsOn) insert = insert.onConflict((oc) => oc.columns(skipConflictsOn as never).doNothing());
    const compiled = (returning ? insert.returning(returning as never) : insert).compile();
    const same =
      compiled.parameters.length === sample.length && compiled.parameters.every((p, i) => p === sample[i]);
    if (!same) throw new Error(`internal: the insert into ${table} does not take one array per column`);
    text = compiled.sql;
    prepareOnPostgres(text);
    byShape.set(key, text);
  }
  return text;
}

/** The SQL of one shape, compiled by Kysely from a sample of distinct values, once per database. */
function shapeSql(
  db: Db,
  table: Table,
  columns: readonly string[],
  size: number,
  options: InsertOptions,
): string {
  const adapter = compileKeyOf(db, 'a bulk insert');
  let byShape = shapes.get(adapter);
  if (!byShape) shapes.set(adapter, (byShape = new Map<string, string>()));
  const key = `${table}|${columns.join(',')}|${size}|${options.returning?.join(',')}|${options.skipConflictsOn?.join(',')}`;
  let text = byShape.get(key);
  if (text === undefined) {
    let n = 0;
    const sample = Array.from({ length: size }, () => Object.fromEntries(columns.map((c) => [c, n++])));
    const compiled = built(db, table, sample, options).compile();
    // the parameters must be the sample's values in row-major order, or values would bind to the wrong columns
    if (compiled.parameters.length !== n || compiled.parameters.some((p, i) => p !== i))
      throw new Error(`internal: the insert into ${table} does not bind its values row by row`);
    text = compiled.sql;
    byShape.set(key, text);
  }
  return text;
}
