import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { DatabaseError, openAndMigrate, type DbHandle } from '../db/index.js';
import { importDocument } from '../document/import.js';
import { DocumentError, readDocument } from '../document/parse.js';
import { GenerateError, generate, parseGenerateOptions } from '../generate/index.js';
import { KeyError, listKeys, mintKey, parseScopes, revokeKey } from '../keys/service.js';
import { FileMediaStore } from '../media/store.js';
import { findProductionByCode } from '../modules/production/repository.js';
import { queueMoveTask, TaskInputError } from '../modules/storage/tasks.js';
import { loadDemo } from './demo.js';
import { assertPortFree, PortInUseError, portTaken } from './port.js';
import { serve } from '../server.js';

/** A failure the user can act on: printed as one line, exit 1. */
export class CliError extends Error {}

const USAGE = `usage: prodgraph <command> [options]

  serve [--host H] [--port N]                      run the service (default 127.0.0.1:8080)
  import FILE [--json] [--replace]                 load a production document (YAML or JSON)
  keys mint --production CODE --label TEXT [--scopes s1,s2] [--engagement REF] [--person REF] [--json]
  keys list --production CODE [--json]
  keys revoke ID_OR_PREFIX
  storage task --production CODE --from PATH --to PATH [--json]
  demo [--serve] [--host H] [--port N]             load the demo productions if absent, mint demo keys;
                                                   --serve then runs the service (npm start), refusing a taken port first
  generate --scale N [--seed S] [--out FILE]       write a generated production document (1 = a full season)

every command: --db URL_OR_PATH (env PRODGRAPH_DB), --media DIR (env PRODGRAPH_MEDIA)`;

const common = {
  db: { type: 'string' },
  media: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

function parse<O extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: O,
  positionals = 0,
) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...common, ...options },
      allowPositionals: positionals > 0,
      strict: true,
    });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  if (parsed.positionals.length > positionals) {
    throw new CliError(`unexpected argument "${parsed.positionals[positionals]}"`);
  }
  return parsed;
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new CliError(`${flag} is required`);
  return value;
}

/**
 * `create`: only the commands that build a database (import, demo; serve through the app) may
 * create a missing SQLite file, so a mistyped --db never leaves an empty database behind.
 */
async function withDb<T>(
  config: Config,
  fn: (db: DbHandle) => Promise<T>,
  { create = false }: { create?: boolean } = {},
): Promise<T> {
  const handle = await openAndMigrate(config.db, { create });
  try {
    return await fn(handle);
  } finally {
    await handle.close();
  }
}

const out = (line: string) => process.stdout.write(`${line}\n`);

async function serveOn(config: Config): Promise<void> {
  try {
    await serve(config);
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? portTaken(config.host, config.port) : err;
  }
}

async function productionId(db: DbHandle, code: string): Promise<number> {
  const p = await findProductionByCode(db.db, code);
  if (!p) throw new CliError(`no production with code "${code}"`);
  return p.id;
}

export async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    out(USAGE);
    return;
  }
  switch (command) {
    case 'serve': {
      const { values } = parse(rest, { host: { type: 'string' }, port: { type: 'string' } });
      await serveOn(loadConfig(values));
      return;
    }
    case 'import': {
      const { values, positionals } = parse(
        rest,
        { json: { type: 'boolean' }, replace: { type: 'boolean' } },
        1,
      );
      const file = positionals[0];
      if (!file) throw new CliError('import needs a FILE');
      const config = loadConfig(values);
      const doc = await readDocument(file);
      const result = await withDb(
        config,
        (h) =>
          importDocument(h.db, doc, {
            store: new FileMediaStore(config.mediaDir),
            baseDir: dirname(resolve(file)),
            replace: values.replace ?? false,
          }),
        { create: true },
      );
      out(
        values.json
          ? JSON.stringify(result)
          : `imported production "${result.production.code}" (id ${result.production.id}), ${Object.keys(result.refs).length} refs`,
      );
      return;
    }
    case 'keys':
      return keys(rest);
    case 'storage': {
      const [sub, ...args] = rest;
      if (sub !== 'task')
        throw new CliError('usage: prodgraph storage task --production CODE --from PATH --to PATH');
      const { values } = parse(args, {
        production: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        'approved-by': { type: 'string' },
        json: { type: 'boolean' },
      });
      const config = loadConfig(values);
      const code = required(values.production, '--production');
      const from = required(values.from, '--from');
      const to = required(values.to, '--to');
      const task = await withDb(config, async (h) =>
        queueMoveTask(h.db, {
          productionId: await productionId(h, code),
          from,
          to,
          approvedBy: values['approved-by'] ?? userInfo().username,
        }),
      );
      out(values.json ? JSON.stringify(task) : `queued move task ${task.id}`);
      return;
    }
    case 'generate': {
      const { values } = parse(rest, {
        scale: { type: 'string' },
        seed: { type: 'string' },
        out: { type: 'string' },
      });
      const tally = await generate(parseGenerateOptions(values), values.out);
      // with no --out the document itself is on stdout
      if (values.out) {
        out(
          `wrote ${values.out}: ${tally.scenes} scenes, ${tally.assets} assets, ${tally.versions} versions (${tally.releasedVersions} released)`,
        );
      }
      return;
    }
    case 'demo': {
      const { values } = parse(rest, {
        host: { type: 'string' },
        port: { type: 'string' },
        serve: { type: 'boolean' },
      });
      const config = loadConfig(values);
      // with --serve (npm start) the keys are for this very server: a taken port stops us before minting
      if (values.serve) await assertPortFree(config.host, config.port);
      await withDb(
        config,
        async (h) => {
          for (const line of await loadDemo(h.db, config)) out(line);
        },
        { create: true },
      );
      if (values.serve) await serveOn(config);
      return;
    }
    default:
      throw new CliError(`unknown command "${command}" (see prodgraph --help)`);
  }
}

async function keys(rest: string[]): Promise<void> {
  const [sub, ...args] = rest;
  switch (sub) {
    case 'mint': {
      const { values } = parse(args, {
        production: { type: 'string' },
        label: { type: 'string' },
        scopes: { type: 'string' },
        engagement: { type: 'string' },
        person: { type: 'string' },
        json: { type: 'boolean' },
      });
      const input = {
        production: required(values.production, '--production'),
        label: required(values.label, '--label'),
        scopes: parseScopes(values.scopes),
        engagement: values.engagement,
        person: values.person,
      };
      const key = await withDb(loadConfig(values), (h) => mintKey(h.db, input));
      out(values.json ? JSON.stringify(key) : key.token);
      return;
    }
    case 'list': {
      const { values } = parse(args, { production: { type: 'string' }, json: { type: 'boolean' } });
      const code = required(values.production, '--production');
      const rows = await withDb(loadConfig(values), (h) => listKeys(h.db, code));
      if (values.json) {
        out(JSON.stringify(rows));
        return;
      }
      out(['ID', 'PREFIX', 'LABEL', 'SCOPES', 'ENGAGEMENT', 'CREATED', 'LAST USED', 'REVOKED'].join('\t'));
      for (const r of rows) {
        out(
          [
            r.id,
            r.prefix,
            r.label,
            r.scopes.join(','),
            r.engagement ?? '-',
            r.created_at,
            r.last_used_at ?? '-',
            r.revoked_at ?? '-',
          ].join('\t'),
        );
      }
      return;
    }
    case 'revoke': {
      const { values, positionals } = parse(args, {}, 1);
      const target = positionals[0];
      if (!target) throw new CliError('keys revoke needs an ID or a PREFIX');
      const key = await withDb(loadConfig(values), (h) => revokeKey(h.db, target));
      out(`revoked key ${key.id} (${key.prefix})`);
      return;
    }
    default:
      throw new CliError('usage: prodgraph keys mint|list|revoke …');
  }
}

/** The messages a user can act on are shown as they are; anything else names its kind. */
export function describeFailure(err: unknown): string {
  if (
    err instanceof CliError ||
    err instanceof ConfigError ||
    err instanceof DocumentError ||
    err instanceof KeyError ||
    err instanceof TaskInputError ||
    err instanceof GenerateError ||
    err instanceof DatabaseError ||
    err instanceof PortInUseError
  ) {
    return err.message;
  }
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ECONNREFUSED') return `cannot reach the database (${e.message})`;
  return e?.message ? e.message.split('\n')[0]! : String(err);
}
