import { resolve } from 'node:path';
import { takeBackup } from '../backup/backup.js';
import { pauseAt, type BackupStep, type OnStep } from '../backup/steps.js';
import { loadConfig, readPausePoint } from '../config.js';
import { COMMON_FLAGS, out, parse, required, version, type Command } from './args.js';

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** PRODGRAPH_TEST_PAUSE_AT's hook for `backup` and `restore` (a crash test's fixed kill point), or none. */
export function pauseHook<S extends string>(): OnStep<S> | undefined {
  const point = readPausePoint();
  return point ? pauseAt<S>(point, (line) => process.stderr.write(`prodgraph: ${line}\n`)) : undefined;
}

export const backupCommand: Command = {
  name: 'backup',
  summary: 'take a consistent copy of the database and media while the server runs',
  usage: `usage: prodgraph backup --out DIR [--json]

Copies the database and the media files it names into DIR (new, or empty), while the server
goes on serving and writing: every write acknowledged before the backup began is in it. SQLite
through its online backup API; PostgreSQL table by table in one snapshot, into a SQLite file
(either restores into either). Media files are hard-linked where the file system allows.
DIR/manifest.json records the row count of every table and each file's size and SHA-256;
"prodgraph restore" checks them. The backup is built in a hidden folder beside DIR and renamed
to DIR at the end: DIR is a whole backup or untouched, even if the command is killed, and the
next backup into DIR removes what a killed one left. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, { out: { type: 'string' }, json: { type: 'boolean' } });
    const dir = resolve(required(values.out, '--out'));
    const config = loadConfig(values);
    const onStep = pauseHook<BackupStep>();
    const started = performance.now();
    const m = await takeBackup(config, dir, version(), { onStep });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (values.json) {
      out(JSON.stringify({ dir, seconds: Number(seconds), ...m, media: { ...m.media, entries: undefined } }));
      return;
    }
    const rows = Object.values(m.database.rows).reduce((a, b) => a + b, 0);
    out(`backup of ${m.source.database} in ${dir} (${seconds} s)`);
    out(`  database: ${rows} rows in ${Object.keys(m.database.rows).length} tables, ${mb(m.database.size)}`);
    out(`  media: ${m.media.files} files, ${mb(m.media.bytes)} (${m.media.linked} hard-linked)`);
    if (m.missing.length > 0)
      out(
        `  warning: ${m.missing.length} files the database names were not in the media folder (listed in manifest.json)`,
      );
    for (const path of m.cleared) out(`  removed what a killed backup left: ${path}`);
  },
};
