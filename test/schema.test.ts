import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import ts from 'typescript';
import { CHANGE_KINDS, CHANGE_OPS } from '../src/db/change-log.js';
import * as V from '../src/domain/vocabulary.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';

/*
 * src/db/schema.ts is written by hand beside the migrations; nothing but this test holds the two
 * together. The row types are read with the TypeScript checker (so `Bool`, `Stamp`, `Generated<…>`
 * and the vocabulary unions resolve exactly as the compiler sees them) and compared with the
 * columns of a freshly migrated database, on each dialect: the same tables, the same columns,
 * the same nullability, a compatible type, and a default wherever the type lets an insert leave
 * the column out.
 */

const SCHEMA_FILE = fileURLToPath(new URL('../src/db/schema.ts', import.meta.url));
/** Kysely's own bookkeeping, not part of the application's schema. */
const MIGRATOR_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

/** Columns that hold a closed vocabulary, and which. */
const CLOSED: Record<string, readonly string[]> = {
  'productions.accent': V.ACCENTS,
  'productions.format': V.PRODUCTION_FORMATS,
  'departments.privacy': V.PRIVACIES,
  'nodes.status': V.SCENE_STATUSES,
  'edges.kind': V.EDGE_KINDS,
  'media.kind': V.MEDIA_KINDS,
  'versions.source': V.VERSION_SOURCES,
  'approvals.mode': V.APPROVAL_MODES,
  'approvals.status': V.APPROVAL_STATUSES,
  'approval_steps.decision': V.STEP_DECISIONS,
  'deliveries.kind': V.DELIVERY_KINDS,
  'deliveries.status': V.DELIVERY_STATUSES,
  'engagements.source': V.ROW_SOURCES,
  'grants.kind': V.GRANT_KINDS,
  'grants.access': V.GRANT_ACCESS,
  'grants.source': V.ROW_SOURCES,
  'work_items.status': V.WORK_ITEM_STATUSES,
  'purchase_orders.status': V.PO_STATUSES,
  'script_changes.status': V.SCRIPT_CHANGE_STATUSES,
  'generation_jobs.kind': V.JOB_KINDS,
  'storage_events.event_type': V.STORAGE_EVENT_TYPES,
  'storage_events.source': V.STORAGE_SOURCES,
  'storage_tasks.op': V.STORAGE_TASK_OPS,
  'storage_tasks.status': V.STORAGE_TASK_STATUSES,
  'sign_in_people.role': V.CONSOLE_ROLES,
  'console_sessions.role': V.CONSOLE_ROLES,
  'changes.kind': CHANGE_KINDS,
  'changes.op': CHANGE_OPS,
};
const BOOLEANS = [
  'departments.unveiled',
  'people.is_hod',
  'people.is_admin',
  'versions.released',
  'versions.archived',
  'cost_reports.active',
  'webhooks.active',
  'webhook_deliveries.delivered',
];

type Base = 'number' | 'string' | 'number|string';

interface Column {
  base: Base;
  nullable: boolean;
  /** TS: an insert may leave it out (Generated). DB: it has a default or is an identity. */
  optional: boolean;
  /** TS only: the values a literal union allows (a closed vocabulary, or 0 | 1). */
  values?: Array<string | number>;
}

type Tables = Map<string, Map<string, Column>>;

function baseOf(types: readonly ts.Type[], where: string): Base {
  const kinds = new Set<string>();
  for (const t of types) {
    if (t.flags & (ts.TypeFlags.NumberLike | ts.TypeFlags.BooleanLike)) kinds.add('number');
    else if (t.flags & ts.TypeFlags.StringLike) kinds.add('string');
    else throw new Error(`${where}: a column type the test does not know (${t.flags})`);
  }
  return [...kinds].sort().join('|') as Base;
}

function describeType(checker: ts.TypeChecker, type: ts.Type, where: string): Column {
  // Generated<T> is ColumnType<T, T | undefined, T>: the select and insert types are properties
  const select = type.getProperty('__select__');
  const insert = type.getProperty('__insert__');
  const selected = select ? checker.getTypeOfSymbol(select) : type;
  const inserted = insert ? checker.getTypeOfSymbol(insert) : type;
  const parts = selected.isUnion() ? selected.types : [selected];
  const nonNull = parts.filter((t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)));
  const insertParts = inserted.isUnion() ? inserted.types : [inserted];
  const literals = nonNull.every((t) => t.isLiteral())
    ? nonNull.map((t) => t.value as string | number).sort()
    : undefined;
  return {
    base: baseOf(nonNull, where),
    nullable: parts.some((t) => t.flags & ts.TypeFlags.Null),
    optional: insertParts.some((t) => t.flags & ts.TypeFlags.Undefined),
    ...(literals ? { values: literals } : {}),
  };
}

/** Every table of the `Database` interface and its columns, as the compiler types them. */
function declaredTables(): Tables {
  const program = ts.createProgram([SCHEMA_FILE], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
  });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(SCHEMA_FILE)!;
  const database = file.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'Database',
  )!;
  const tables: Tables = new Map();
  for (const table of checker.getTypeAtLocation(database).getProperties()) {
    const columns = new Map<string, Column>();
    for (const column of checker.getTypeOfSymbol(table).getProperties()) {
      const where = `${table.name}.${column.name}`;
      columns.set(column.name, describeType(checker, checker.getTypeOfSymbol(column), where));
    }
    tables.set(table.name, columns);
  }
  return tables;
}

function dbBase(dataType: string): string {
  const t = dataType.toLowerCase();
  if (t === 'bigint' || t === 'int8') return 'number|string';
  if (/int|double|float|real|numeric|serial/.test(t)) return 'number';
  if (/text|char/.test(t)) return 'string';
  return t;
}

/** SQLite: the primary-key columns of a table (its introspection does not say). */
async function sqliteKeys(env: TestEnv, table: string): Promise<Set<string>> {
  const rows = await sql<{ name: string }>`select name from pragma_table_info(${table}) where pk > 0`.execute(
    env.handle.db,
  );
  return new Set(rows.rows.map((r) => r.name));
}

/** Every table of the migrated database and its columns. */
async function migratedTables(env: TestEnv): Promise<Tables> {
  const tables: Tables = new Map();
  for (const t of await env.handle.db.introspection.getTables()) {
    if (MIGRATOR_TABLES.has(t.name) || (env.schema && t.schema !== env.schema)) continue;
    // SQLite reports a primary key without NOT NULL as nullable (a legacy quirk); it never holds null
    const keys = env.dialect === 'sqlite' ? await sqliteKeys(env, t.name) : new Set<string>();
    const columns = new Map<string, Column>();
    for (const c of t.columns) {
      columns.set(c.name, {
        base: dbBase(c.dataType) as Base,
        nullable: c.isNullable && !keys.has(c.name),
        optional: c.hasDefaultValue || c.isAutoIncrementing,
      });
    }
    tables.set(t.name, columns);
  }
  return tables;
}

/** Every way the declared tables and the migrated ones disagree, one line each. */
function mismatches(declared: Tables, migrated: Tables): string[] {
  const out: string[] = [];
  for (const name of migrated.keys())
    if (!declared.has(name)) out.push(`${name}: a table the migrations make, missing from schema.ts`);
  for (const [name, columns] of declared) {
    const actual = migrated.get(name);
    if (!actual) {
      out.push(`${name}: in schema.ts, but no migration makes it`);
      continue;
    }
    for (const column of actual.keys())
      if (!columns.has(column)) out.push(`${name}.${column}: a column missing from schema.ts`);
    for (const [column, want] of columns) {
      const got = actual.get(column);
      const at = `${name}.${column}`;
      if (!got) {
        out.push(`${at}: in schema.ts, but no migration makes it`);
        continue;
      }
      if (want.nullable !== got.nullable)
        out.push(`${at}: ${want.nullable ? 'nullable' : 'not null'} in schema.ts, not in the database`);
      // an int8 reaches the code as a number (the pg type parser) or, typed loosely, as either
      const compatible = want.base === got.base || (got.base === 'number|string' && want.base === 'number');
      if (!compatible) out.push(`${at}: ${want.base} in schema.ts, ${got.base} in the database`);
      if (want.optional && !got.optional && !got.nullable)
        out.push(`${at}: Generated in schema.ts, but not null without a default in the database`);
    }
  }
  return out;
}

describe('src/db/schema.ts', () => {
  const declared = declaredTables();

  it('types every closed vocabulary with its values, and every boolean as 0 | 1', () => {
    const values = (table: string, column: string) => declared.get(table)?.get(column)?.values;
    for (const [column, vocabulary] of Object.entries(CLOSED)) {
      const [table, name] = column.split('.') as [string, string];
      assert.deepEqual(values(table, name), [...vocabulary].sort(), column);
    }
    for (const column of BOOLEANS) {
      const [table, name] = column.split('.') as [string, string];
      assert.deepEqual(values(table, name), [0, 1], column);
    }
  });

  for (const dialect of DIALECTS) {
    describe(`matches a freshly migrated database [${dialect}]`, () => {
      let env: TestEnv;
      before(async () => {
        env = await createEnv(dialect);
      });
      after(() => env.close());

      it('the same tables and columns, nullability, types and defaults', async () => {
        assert.deepEqual(mismatches(declared, await migratedTables(env)), []);
      });
    });
  }
});
