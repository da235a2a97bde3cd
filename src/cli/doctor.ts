import { ConfigError, loadConfig, type Config } from '../config.js';
import { migrationState, openDatabase, type DbHandle } from '../db/index.js';
import {
  clock,
  freeDisk,
  mediaFolder,
  missingMedia,
  productionCodes,
  shownDatabase,
  ticketSigning,
  type Finding,
} from '../ops/checks.js';
import { CliError, COMMON_FLAGS, out, parse, type Command } from './args.js';

/** The database: reachable, a prodgraph database, migrated; its productions and their files. */
async function databaseFindings(config: Config, handle: DbHandle): Promise<Finding[]> {
  const found: Finding[] = [];
  const state = await migrationState(handle.db, handle.dialect);
  if (state === 'empty')
    return [
      {
        check: 'database',
        level: 'fail',
        detail: `${shownDatabase(config)} answers but holds no prodgraph tables`,
        fix: 'check --db / PRODGRAPH_DB; "prodgraph import FILE" or "prodgraph demo" creates a database',
      },
    ];
  found.push(
    state === 'behind'
      ? {
          check: 'database',
          level: 'warn',
          detail: `${shownDatabase(config)}: migrations to run`,
          fix: 'start the server (or any command) once: it migrates the database',
        }
      : { check: 'database', level: 'ok', detail: `${shownDatabase(config)}, migrated` },
  );
  const codes = await productionCodes(handle.db);
  found.push(
    codes.length === 0
      ? { check: 'productions', level: 'warn', detail: 'none', fix: 'import one: prodgraph import FILE' }
      : { check: 'productions', level: 'ok', detail: codes.join(', ') },
  );
  const media = await missingMedia(handle.db, config.mediaDir);
  const sampled = media.looked < media.total ? ` (a sample of ${media.looked} of ${media.total})` : '';
  found.push(
    media.missing.length === 0
      ? {
          check: 'media files',
          level: 'ok',
          detail: `${media.looked} of the files the database names present${sampled}`,
        }
      : {
          check: 'media files',
          level: 'fail',
          detail: `${media.missing.length} of ${media.looked} files the database names are missing or of the wrong size${sampled}, e.g. ${media.missing.slice(0, 3).join(', ')}`,
          fix: 'check --media / PRODGRAPH_MEDIA points at the folder the server stored them in (several servers share one), or restore it from a backup',
        },
  );
  found.push(await clock(handle.db, handle.dialect));
  found.push(
    state === 'behind'
      ? { check: 'ticket signing', level: 'warn', detail: 'not known until the database is migrated' }
      : await ticketSigning(handle.db, config),
  );
  return found;
}

/** The configuration, or — when it does not parse — the finding that says what to fix. */
function configOrFinding(values: Parameters<typeof loadConfig>[0]): Config | Finding {
  try {
    return loadConfig(values);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return {
      check: 'config',
      level: 'fail',
      detail: err.message,
      fix: 'correct the flag or PRODGRAPH_* environment variable it names, then run prodgraph doctor again',
    };
  }
}

async function diagnose(config: Config): Promise<Finding[]> {
  const findings: Finding[] = [
    { check: 'config', level: 'ok', detail: `parsed (serving ${config.host}:${config.port})` },
  ];
  let handle: DbHandle | undefined;
  try {
    handle = openDatabase(config.db, { create: false, poolSize: 1 });
    findings.push(...(await databaseFindings(config, handle)));
  } catch (err) {
    findings.push({
      check: 'database',
      level: 'fail',
      detail: `${shownDatabase(config)}: ${(err as Error).message.split('\n')[0]}`,
      fix: 'check --db / PRODGRAPH_DB, and that the database server is running and reachable',
    });
  } finally {
    await handle?.close().catch(() => undefined);
  }
  findings.push(await mediaFolder(config.mediaDir), ...(await freeDisk(config)));
  return findings;
}

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check an installation and say what to fix',
  usage: `usage: prodgraph doctor [--json]

Checks what the server would run with, changing nothing: the configuration parses; the database
is reachable, a prodgraph database and migrated; its productions; the media folder is readable
and owner-only; the files the database names are in it (every one, or an even sample of 5,000 on
a large store); the clock is sane; how media tickets are signed (the database's shared secret
and its age, or PRODGRAPH_TICKET_SECRET); the disks have room. Each finding is ok, warn or fail, with
what to do; exit status 1 when any fails. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, { json: { type: 'boolean' } });
    const config = configOrFinding(values);
    // nothing else can be checked without a configuration
    const findings = 'check' in config ? [config] : await diagnose(config);
    if (values.json) out(JSON.stringify({ findings }));
    else {
      for (const f of findings) {
        out(`${f.level.padEnd(4)}  ${f.check}: ${f.detail}`);
        if (f.fix) out(`      fix: ${f.fix}`);
      }
    }
    if (findings.some((f) => f.level === 'fail')) throw new CliError('doctor found problems (fail above)');
  },
};
