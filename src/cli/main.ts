import { isAppError, UserError } from '../errors.js';
import { CliError, COMMON_FLAGS, out, version, wantsHelp, type Command } from './args.js';

export { CliError } from './args.js';

/**
 * Every command, in the order `prodgraph --help` lists them, each loaded when it runs: a
 * command's process loads what that command needs, not the server and every other command.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serveCommand,
  import: async () => (await import('./import.js')).importCommand,
  export: async () => (await import('./export.js')).exportCommand,
  keys: async () => (await import('./keys.js')).keysCommand,
  people: async () => (await import('./people.js')).peopleCommand,
  organisations: async () => (await import('./organisations.js')).organisationsCommand,
  engagements: async () => (await import('./engagements.js')).engagementsCommand,
  grants: async () => (await import('./grants.js')).grantsCommand,
  webhooks: async () => (await import('./webhooks.js')).webhooksCommand,
  audit: async () => (await import('./audit.js')).auditCommand,
  secrets: async () => (await import('./secrets.js')).secretsCommand,
  storage: async () => (await import('./storage.js')).storageCommand,
  demo: async () => (await import('./demo-command.js')).demoCommand,
  generate: async () => (await import('./generate.js')).generateCommand,
  backup: async () => (await import('./backup.js')).backupCommand,
  restore: async () => (await import('./restore.js')).restoreCommand,
  doctor: async () => (await import('./doctor.js')).doctorCommand,
};

async function usage(): Promise<string> {
  const lines = ['usage: prodgraph <command> [options]', ''];
  for (const c of await Promise.all(Object.values(COMMANDS).map((load) => load()))) {
    for (const sub of c.subcommands ?? [c]) {
      const [first = ''] = sub.usage.split('\n');
      lines.push(`  ${first.replace(/^usage: prodgraph /, '')}`);
    }
  }
  lines.push(
    '',
    `every command: ${COMMON_FLAGS}`,
    'prodgraph COMMAND --help explains a command; prodgraph --version prints the version.',
  );
  return lines.join('\n');
}

async function dispatch(command: Command, args: string[], path: string): Promise<void> {
  if (command.subcommands) {
    const [name, ...rest] = args;
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      out(
        [command.usage, '', ...command.subcommands.map((s) => `  ${s.name.padEnd(8)} ${s.summary}`)].join(
          '\n',
        ),
      );
      return;
    }
    const sub = command.subcommands.find((s) => s.name === name);
    if (!sub) {
      throw new CliError(
        `unknown ${path} subcommand "${name}" (${command.subcommands.map((s) => s.name).join(', ')}; see prodgraph ${path} --help)`,
      );
    }
    return dispatch(sub, rest, `${path} ${name}`);
  }
  if (wantsHelp(args)) {
    out(command.usage);
    return;
  }
  if (!command.run) throw new Error(`internal: ${path} has neither subcommands nor a run`);
  try {
    await command.run(args);
  } catch (err) {
    throw inFlagTerms(err, command.flags);
  }
}

/** A service's refusal that names an API field (`expires_at: must be …`) names the flag instead. */
function inFlagTerms(err: unknown, flags: Record<string, string> | undefined): unknown {
  if (!flags || !isAppError(err)) return err;
  const [prefix, field] = /^([a-z_]+): /.exec(err.detail) ?? [];
  const flag = field === undefined ? undefined : flags[field];
  return prefix !== undefined && flag ? new CliError(`${flag}: ${err.detail.slice(prefix.length)}`) : err;
}

const GLOBAL_FLAGS = new Set(['--db', '--media']);

/**
 * `prodgraph --db X keys list` is `prodgraph keys list --db X`: the flags every command takes
 * may come before the command.
 */
function commonFlagsFirst(argv: string[]): string[] {
  const leading: string[] = [];
  let i = 0;
  for (;;) {
    const arg = argv[i];
    if (!arg?.startsWith('--')) break;
    const [flag = arg, inline] = arg.split(/=(.*)/s, 2);
    if (!GLOBAL_FLAGS.has(flag)) break;
    if (inline !== undefined) {
      leading.push(arg);
      i += 1;
    } else {
      const value = argv[i + 1];
      if (value === undefined) throw new CliError(`${flag} needs a value`);
      leading.push(arg, value);
      i += 2;
    }
  }
  return leading.length ? [...argv.slice(i), ...leading] : argv;
}

export async function run(argv: string[]): Promise<void> {
  const [name, ...rest] = commonFlagsFirst(argv);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    out(await usage());
    return;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    out(`prodgraph ${version()}`);
    return;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    const hint = name.startsWith('-') ? `: only ${[...GLOBAL_FLAGS].join(' and ')} may come before it` : '';
    throw new CliError(`unknown command "${name}" (see prodgraph --help${hint})`);
  }
  await dispatch(await load(), rest, name);
}

/**
 * What a user can act on (any UserError: the CLI's refusals and the catalogue's alike) is shown
 * as its detail; anything else is shown by its first line.
 */
export function describeFailure(err: unknown): string {
  if (err instanceof UserError) return err.detail;
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ECONNREFUSED') return `cannot reach the database (${e.message})`;
  const [firstLine] = e?.message ? e.message.split('\n') : [];
  return firstLine ?? String(err);
}
