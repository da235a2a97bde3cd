import { userInfo } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.js';
import { openAndMigrate, type DbHandle } from '../db/index.js';
import { UserError } from '../errors.js';
import { operatorActor } from '../auth/audit-actor.js';
import { findProductionByCode } from '../modules/production/repository.js';
import { PACKAGE_VERSION } from '../version.js';

/** A failure the user can act on: printed as one line, exit 1. */
export class CliError extends UserError {}

/**
 * One command of `prodgraph`: its usage names every flag; `--help` anywhere prints it. A
 * command with subcommands (keys, grants, …) dispatches on its first argument.
 */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  run?: (args: string[]) => Promise<void>;
  subcommands?: Command[];
  /**
   * The flag that sets each field the services name in their refusals (`expires_at` is
   * `--expires` here), so an error speaks the command's language, not the API's.
   */
  flags?: Record<string, string>;
}

export const COMMON_FLAGS = '--db URL_OR_PATH (env PRODGRAPH_DB), --media DIR (env PRODGRAPH_MEDIA)';

let sink = (text: string): void => {
  process.stdout.write(text);
};

export const out = (line: string): void => sink(`${line}\n`);

/** Sends what commands print somewhere else until the returned function is called (tests run commands in-process). */
export function printTo(target: (text: string) => void): () => void {
  const previous = sink;
  sink = target;
  return () => {
    sink = previous;
  };
}

export const wantsHelp = (args: readonly string[]): boolean => args.includes('--help') || args.includes('-h');

export const version = (): string => PACKAGE_VERSION;

const common = {
  db: { type: 'string' },
  media: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/**
 * `--scale -1` is a value, not a flag: parseArgs refuses an option value that starts with a
 * dash as ambiguous, so a negative number after a string option is attached (`--scale=-1`)
 * and the command's own check says what is wrong with it.
 */
function attachNegativeNumbers(args: string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.startsWith('--') ? arg.slice(2) : null;
    const next = args[i + 1];
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

export function parse<O extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: O,
  positionals = 0,
) {
  let parsed;
  try {
    parsed = parseArgs({
      args: attachNegativeNumbers(args, { ...common, ...options }),
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

export function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new CliError(`${flag} is required`);
  return value;
}

/**
 * `create`: only the commands that build a database (import, demo; serve through the app) may
 * create a missing SQLite file, so a mistyped --db never leaves an empty database behind.
 */
export async function withDb<T>(
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

export async function productionId(db: DbHandle, code: string): Promise<number> {
  const p = await findProductionByCode(db.db, code);
  if (!p) throw new CliError(`no production with code "${code}"`);
  return p.id;
}

/** How the activity feed names a change made at the command line. */
export const cliActor = (): string => `${userInfo().username} via prodgraph CLI`;

/** The CLI as the actor of an admin write: the operator's name, no key, no person. */
export const cliAdminActor = () => ({
  name: cliActor(),
  apiKeyId: null,
  personId: null,
  audit: operatorActor(cliActor()),
});

/** Tab-separated rows under a header, for people; `--json` is for machines. */
export function table(header: string[], rows: Array<Array<string | number | null>>): void {
  out(header.join('\t'));
  for (const r of rows) out(r.map((v) => (v === null || v === '' ? '-' : String(v))).join('\t'));
}
