import { sql, type Insertable, type Updateable } from 'kysely';
import type { Db } from '../../db/index.js';
import { insertMany, insertManyIds, rowsPerStatement } from '../../db/driver/bulk-insert.js';
import type { Database } from '../../db/schema.js';

/*
 * Set-based writes for the section writers: multi-row inserts and CASE updates, chunked under
 * SQLite's 32,766 and PostgreSQL's 65,535 bound parameters per statement. The rows are typed
 * at the call (Insertable of the table), so a misspelt column does not compile; only the
 * table name is generic here.
 */

export type Table = keyof Database;
/** SQL types of the columns a sync updates (PostgreSQL needs them to type CASE branches). */
export type SqlType = 'text' | 'integer' | 'bigint' | 'double precision';
export type ColumnTypes<T extends Table> = Partial<Record<keyof Database[T] & string, SqlType>>;

const MAX_ROWS = 1_000;

/** Inserts rows and returns their ids in row order (insertManyIds). */
export async function insertReturningIds<T extends Table>(
  trx: Db,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<number[]> {
  return insertManyIds(trx, table, rows);
}

export async function insertRows<T extends Table>(
  trx: Db,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  await insertMany(trx, table, rows);
}

export interface RowUpdate<T extends Table> {
  id: number;
  set: Updateable<Database[T]>;
}

/**
 * Updates many rows by id, each with its own values, in as few statements as the parameter
 * limits allow: `set col = case id when ? then cast(? as type) … end`. Rows that set the same
 * columns share statements.
 */
export async function updateRows<T extends Table>(
  trx: Db,
  table: T,
  updates: readonly RowUpdate<T>[],
  types: ColumnTypes<T>,
): Promise<void> {
  const groups = new Map<string, RowUpdate<T>[]>();
  for (const u of updates) {
    const cols = Object.keys(u.set).sort().join(',');
    if (cols === '') continue;
    const g = groups.get(cols);
    if (g) g.push(u);
    else groups.set(cols, [u]);
  }
  // the rows are typed at the call; the statement is built for any table with an integer id
  const target: Table = table;
  for (const [signature, rows] of groups) {
    const columns = signature.split(',');
    const per = rowsPerStatement(1 + 2 * columns.length);
    for (let i = 0; i < rows.length; i += per) {
      const part = rows.slice(i, i + per);
      const set: Record<string, unknown> = {};
      for (const col of columns) {
        const type = (types as Record<string, SqlType | undefined>)[col];
        if (!type) throw new Error(`internal: no SQL type for ${String(table)}.${col}`);
        const whens = part.map(
          (u) =>
            sql`when ${u.id} then cast(${(u.set as Record<string, unknown>)[col] ?? null} as ${sql.raw(type)})`,
        );
        set[col] = sql`case id ${sql.join(whens, sql` `)} end`;
      }
      await trx
        .updateTable(target)
        .set(set)
        .where(
          'id',
          'in',
          part.map((u) => u.id),
        )
        .execute();
    }
  }
}

export async function deleteIds(trx: Db, table: Table, ids: readonly number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += MAX_ROWS) {
    // every table a sync deletes from has an integer id
    await trx
      .deleteFrom(table)
      .where('id', 'in', ids.slice(i, i + MAX_ROWS))
      .execute();
  }
}
