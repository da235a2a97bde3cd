import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'yaml';
import { loadConfig } from '../config.js';
import { exportDocument } from '../document/export.js';
import { FileMediaStore } from '../media/store.js';
import { CliError, COMMON_FLAGS, out, parse, withDb, type Command } from './args.js';

export const exportCommand: Command = {
  name: 'export',
  summary: 'write a production out as a production document, media beside it',
  usage: `usage: prodgraph export CODE [--out FILE] [--json]

Writes the production as a document in the import format (YAML, or JSON with --json) to FILE
(default ./CODE.yaml or ./CODE.json), with its media files in a media/ folder beside it. It
includes what arrived through the API as far as the format can express it; importing it into
an empty database (SQLite or PostgreSQL) gives the same answers, ids aside: a backup, or a
move between databases. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values, positionals } = parse(args, { out: { type: 'string' }, json: { type: 'boolean' } }, 1);
    const code = positionals[0];
    if (!code) throw new CliError('export needs the CODE of a production');
    const config = loadConfig(values);
    const file = resolve(values.out ?? `${code}.${values.json ? 'json' : 'yaml'}`);
    const exported = await withDb(config, (h) => exportDocument(h.db, code));
    if (!exported) throw new CliError(`no production with code "${code}"`);
    const dir = dirname(file);
    await mkdir(dir, { recursive: true });
    const store = new FileMediaStore(config.mediaDir);
    for (const f of exported.files) {
      const target = join(dir, f.rel);
      await mkdir(dirname(target), { recursive: true });
      try {
        await pipeline(await store.open(f.storageKey), createWriteStream(target));
      } catch (err) {
        throw new CliError(
          `cannot copy media file ${f.storageKey} from ${config.mediaDir} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        );
      }
    }
    const text = values.json
      ? `${JSON.stringify(exported.doc, null, 2)}\n`
      : `# prodgraph export of "${code}"; import with: prodgraph import ${file.split('/').pop()}\n${stringify(exported.doc, { lineWidth: 0 })}`;
    await writeFile(file, text);
    out(
      `exported production "${code}" to ${file} (${exported.files.length} media files in ${join(dir, 'media')})`,
    );
  },
};
