import { resolve } from 'node:path';
import { restoreBackup } from '../backup/restore.js';
import type { RestoreStep } from '../backup/steps.js';
import { parseDbTarget } from '../config.js';
import { CliError, out, parse, required, type Command } from './args.js';
import { pauseHook } from './backup.js';

export const restoreCommand: Command = {
  name: 'restore',
  summary: 'restore a backup into a new database and media folder',
  usage: `usage: prodgraph restore DIR --db URL_OR_PATH --media DIR [--json]

Restores the backup in DIR (made by "prodgraph backup") into a database that does not exist yet
(a SQLite path; a PostgreSQL schema holding no prodgraph data: the one the URL's search_path
names, where "serve" with the same URL looks) and an empty or new media folder. It never
overwrites: an existing SQLite file, a schema with prodgraph data or a media folder with files is
refused. The manifest's checksums and row counts are checked on the way, and SQLite's
integrity_check. Both are built in staging places beside their targets (PostgreSQL: a schema of
its own) and moved into place at the end, the media folder first: a database never appears
without its files. Run again after it was killed, it removes what the killed run left and
restores (or, killed after the end, says so). Both --db and --media must be named.`,
  async run(args) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' } }, 1);
    const dir = positionals[0];
    if (!dir) throw new CliError('restore needs the backup folder DIR');
    const target = parseDbTarget(required(values.db, '--db'));
    const media = resolve(required(values.media, '--media'));
    const onStep = pauseHook<RestoreStep>();
    const started = performance.now();
    const r = await restoreBackup(resolve(dir), target, media, { onStep });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (values.json) {
      out(
        JSON.stringify({
          rows: r.rows,
          files: r.files,
          taken_at: r.manifest.taken_at,
          seconds: Number(seconds),
          cleared: r.cleared,
          finished_earlier: r.finishedEarlier,
        }),
      );
      return;
    }
    const what = `the backup taken ${r.manifest.taken_at}: ${r.rows} rows, ${r.files} media files`;
    out(
      r.finishedEarlier
        ? `restored ${what} (by the earlier run, which was killed once it had finished)`
        : `restored ${what} (${seconds} s)`,
    );
    for (const path of r.cleared) out(`  removed what a killed restore left: ${path}`);
  },
};
