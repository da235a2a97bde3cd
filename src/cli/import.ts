import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import { statSync } from 'node:fs';
import { loadConfig, type Config } from '../config.js';
import { migrationState, openDatabase, type Db } from '../db/index.js';
import { importDocument, planDocument, type ImportOptions } from '../document/import.js';
import { loadDocument, planLoad, type Loaded } from '../document/load/index.js';
import { openDocument, type OpenedDocument } from '../document/read.js';
import { formatPlan } from '../document/sync/plan.js';
import { FileMediaStore } from '../media/store.js';
import { CliError, COMMON_FLAGS, out, parse, withDb, type Command } from './args.js';

/**
 * --plan changes nothing, anywhere: a database that does not exist yet (a missing or empty
 * SQLite file, a PostgreSQL schema without our tables) is neither created nor migrated; the
 * plan is made against an empty database in memory, which is what the import would start from.
 */
async function withPlanDb<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  const scratch = () => withDb({ ...config, db: { dialect: 'sqlite', path: ':memory:' } }, (h) => fn(h.db));
  const target = config.db;
  if (target.dialect === 'sqlite' && (statSync(target.path, { throwIfNoEntry: false })?.size ?? 0) === 0) {
    return scratch();
  }
  const handle = openDatabase(target, { create: false });
  try {
    const state = await migrationState(handle.db, handle.dialect);
    if (state === 'empty') return await scratch();
    if (state === 'behind') {
      throw new CliError(
        '--plan changes nothing, and this database needs upgrading first (its migrations run at the next import without --plan, or at serve)',
      );
    }
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}

const productionExists = async (db: Db, code: string) =>
  (await db.selectFrom('productions').where('code', '=', code).select('id').executeTakeFirst()) !== undefined;

/** A streamed document's first import takes it object by object; a sync needs it whole. */
async function importOpened(
  db: Db,
  opened: OpenedDocument,
  options: ImportOptions,
): Promise<Pick<Loaded, 'production' | 'plan' | 'refs' | 'refCount'>> {
  if (opened.streamed && !(await productionExists(db, opened.production.code))) {
    return loadDocument(db, opened.source(), options);
  }
  const result = await importDocument(db, await opened.whole(), options);
  return { ...result, refs: () => result.refs, refCount: Object.keys(result.refs).length };
}

export const importCommand: Command = {
  name: 'import',
  summary: 'load a production document, or sync one that exists',
  usage: `usage: prodgraph import FILE [--replace] [--plan] [--json]

Loads a production document (YAML or JSON) in one transaction. A production whose code
exists is refused unless --replace: then the import is a sync by ref, updating it in place
(ids kept, new refs created, refs that left the document retired or deleted, nothing written
through the API lost) and appending one activity entry with its counts.

  --replace   update the production if it exists
  --plan      print what the import would do, per kind and object, and change nothing
              (not even create or upgrade the database)
  --json      machine-readable output: {"production","refs","plan"}, or the plan alone with --plan

${COMMON_FLAGS}.`,
  async run(args) {
    const { values, positionals } = parse(
      args,
      { json: { type: 'boolean' }, replace: { type: 'boolean' }, plan: { type: 'boolean' } },
      1,
    );
    const file = positionals[0];
    if (!file) throw new CliError('import needs a FILE (see prodgraph import --help)');
    const config = loadConfig(values);
    const opened = await openDocument(file);
    const options = {
      store: new FileMediaStore(config.mediaDir),
      baseDir: dirname(resolve(file)),
      replace: values.replace ?? false,
      actor: `${userInfo().username} via prodgraph import`,
    };
    if (values.plan) {
      const plan = await withPlanDb(config, async (db) =>
        opened.streamed && !(await productionExists(db, opened.production.code))
          ? planLoad(db, opened.source(), options)
          : planDocument(db, await opened.whole(), options),
      );
      out(values.json ? JSON.stringify(plan) : formatPlan(plan, { applied: false }));
      return;
    }
    const result = await withDb(config, (h) => importOpened(h.db, opened, options), { create: true });
    if (values.json) {
      out(JSON.stringify({ production: result.production, refs: result.refs(), plan: result.plan }));
      return;
    }
    if (result.plan.production.created) {
      out(
        `imported production "${result.production.code}" (id ${result.production.id}), ${result.refCount} refs`,
      );
    } else out(formatPlan(result.plan, { applied: true }));
  },
};
