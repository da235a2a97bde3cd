import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'yaml';
import { loadConfig } from '../config.js';
import { exportDocument } from '../document/export.js';
import { FileMediaStore } from '../media/store.js';
import { CliError, COMMON_FLAGS, out, parse, withDb, type Command } from './args.js';

/*
 * The export holds what the store holds (people's contact details, money, unreleased media):
 * it is written with the store's modes, the owner's alone (files 0600, folders 0700), and
 * each file is written beside its place and renamed into it, so a failed export never leaves
 * a half-written document or still behind, nor one readable by others.
 */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

async function writeOwnerOnly(target: string, source: Readable): Promise<void> {
  const partial = join(dirname(target), `.${basename(target)}.partial`);
  try {
    await pipeline(source, createWriteStream(partial, { mode: FILE_MODE }));
    await rename(partial, target);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
}

/** The folder the document goes to must exist: a mistyped --out never leaves folders behind. */
async function folderOf(file: string): Promise<string> {
  const dir = dirname(file);
  const s = await stat(dir).catch(() => null);
  if (!s?.isDirectory()) {
    throw new CliError(
      `--out: there is no folder ${dir} (export creates only the media/ folder beside the document)`,
    );
  }
  return dir;
}

export const exportCommand: Command = {
  name: 'export',
  summary: 'write a production out as a production document, media beside it',
  usage: `usage: prodgraph export CODE [--out FILE] [--json]

Writes the production as a document in the import format (YAML, or JSON with --json) to FILE
(default ./CODE.yaml or ./CODE.json), with its media files in a media/ folder beside it. It
includes what arrived through the API as far as the format can express it; importing it into
an empty database (SQLite or PostgreSQL) gives the same answers, ids aside: a backup, or a
move between databases. FILE's folder must exist; the document and its media are readable by
their owner alone, like the media store. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values, positionals } = parse(args, { out: { type: 'string' }, json: { type: 'boolean' } }, 1);
    const code = positionals[0];
    if (!code) throw new CliError('export needs the CODE of a production');
    const config = loadConfig(values);
    const file = resolve(values.out ?? `${code}.${values.json ? 'json' : 'yaml'}`);
    const dir = await folderOf(file);
    const exported = await withDb(config, (h) => exportDocument(h.db, code));
    if (!exported) throw new CliError(`no production with code "${code}"`);
    const store = new FileMediaStore(config.mediaDir);
    for (const f of exported.files) {
      const target = join(dir, f.rel);
      await mkdir(dirname(target), { recursive: true, mode: DIR_MODE });
      try {
        await writeOwnerOnly(target, await store.open(f.storageKey));
      } catch (err) {
        throw new CliError(
          `cannot copy media file ${f.storageKey} from ${config.mediaDir} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        );
      }
    }
    const text = values.json
      ? `${JSON.stringify(exported.doc, null, 2)}\n`
      : `# prodgraph export of "${code}"; import with: prodgraph import ${basename(file)}\n${stringify(exported.doc, { lineWidth: 0 })}`;
    await writeOwnerOnly(file, Readable.from([text]));
    out(
      `exported production "${code}" to ${file} (${exported.files.length} media files in ${join(dir, 'media')})`,
    );
  },
};
