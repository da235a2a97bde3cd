import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '../config.js';
import { importDocument, planDocument } from '../document/import.js';
import { readDocument } from '../document/parse.js';
import { formatPlan } from '../document/sync/plan.js';
import { FileMediaStore } from '../media/store.js';
import { CliError, COMMON_FLAGS, out, parse, withDb, type Command } from './args.js';

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
    const doc = await readDocument(file);
    const options = {
      store: new FileMediaStore(config.mediaDir),
      baseDir: dirname(resolve(file)),
      replace: values.replace ?? false,
      actor: `${userInfo().username} via prodgraph import`,
    };
    if (values.plan) {
      const plan = await withDb(config, (h) => planDocument(h.db, doc, options), { create: true });
      out(values.json ? JSON.stringify(plan) : formatPlan(plan, { applied: false }));
      return;
    }
    const result = await withDb(config, (h) => importDocument(h.db, doc, options), { create: true });
    if (values.json) {
      out(JSON.stringify(result));
      return;
    }
    if (result.plan.production.created) {
      out(
        `imported production "${result.production.code}" (id ${result.production.id}), ${Object.keys(result.refs).length} refs`,
      );
    } else out(formatPlan(result.plan, { applied: true }));
  },
};
