import { resolve } from 'node:path';
import { restoreBackup } from '../backup/restore.js';
import { parseDbTarget } from '../config.js';
import { CliError, out, parse, required, type Command } from './args.js';

export const restoreCommand: Command = {
  name: 'restore',
  summary: 'restore a backup into a new database and media folder',
  usage: `usage: prodgraph restore DIR --db URL_OR_PATH --media DIR [--json]

Restores the backup in DIR (made by "prodgraph backup") into a database that does not exist yet
(a SQLite path; a PostgreSQL database or schema holding no prodgraph tables) and an empty or new
media folder. It never overwrites: an existing SQLite file, a database with prodgraph tables or
a media folder with files is refused. The manifest's checksums and row counts are checked on the
way, and SQLite's integrity_check after. Both --db and --media must be named.`,
  async run(args) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' } }, 1);
    const dir = positionals[0];
    if (!dir) throw new CliError('restore needs the backup folder DIR');
    const target = parseDbTarget(required(values.db, '--db'));
    const media = resolve(required(values.media, '--media'));
    const started = performance.now();
    const r = await restoreBackup(resolve(dir), target, media);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (values.json) {
      out(
        JSON.stringify({
          rows: r.rows,
          files: r.files,
          taken_at: r.manifest.taken_at,
          seconds: Number(seconds),
        }),
      );
      return;
    }
    out(
      `restored the backup taken ${r.manifest.taken_at}: ${r.rows} rows, ${r.files} media files (${seconds} s)`,
    );
  },
};
