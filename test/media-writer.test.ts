import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';

/*
 * `media` rows are written in one place, src/media/rows.ts, so a media object's
 * kind, owner and label follow one convention whichever path brings the file (an upload, a
 * turnover, a proxy, a production document). This reads the source: any other file that
 * inserts into or deletes from `media` fails here.
 */

const SRC = join(import.meta.dirname, '..', 'src');
const WRITER = 'src/media/rows.ts';

/** Kysely's insertInto/deleteFrom and the set-based helpers (insertRows, deleteIds, …) naming `media`. */
const BUILDER =
  /\b\w*(?:insert|delete|replace|merge)\w*\s*\(\s*(?:[\w.]+\s*,\s*)?['"`]media(?:\s+as\s+\w+)?['"`]/gi;
/** Raw SQL. */
const RAW = /\b(?:insert\s+into|delete\s+from|merge\s+into)\s+"?media"?(?![\w-])/gi;

function writesOf(text: string): string[] {
  return [...text.matchAll(BUILDER), ...text.matchAll(RAW)].map((m) => m[0].replace(/\s+/g, ' '));
}

async function sources(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(SRC, { recursive: true, withFileTypes: true })) {
    // npm test runs this from a built tree where each source is a link to the repository's file
    const file = entry.isFile() || entry.isSymbolicLink();
    if (!file || !entry.name.endsWith('.ts')) continue;
    const full = join(entry.parentPath, entry.name);
    const rel = relative(join(SRC, '..'), full).split(sep).join('/');
    out.set(rel, await readFile(full, 'utf8'));
  }
  return out;
}

describe('media rows have one writer', () => {
  it('no file but the media repository inserts into or deletes from media', async () => {
    const files = await sources();
    const elsewhere: string[] = [];
    for (const [rel, text] of files) {
      if (rel === WRITER) continue;
      for (const w of writesOf(text)) elsewhere.push(`${rel}: ${w}`);
    }
    assert.deepEqual(elsewhere, [], 'write media rows through src/media/rows.ts');
  });

  it('the check sees the writes it guards against', async () => {
    const files = await sources();
    assert.ok(files.size > 100, `the check reads every source (${files.size} read)`);
    const writer = files.get(WRITER);
    assert.ok(writer, `${WRITER} exists`);
    const found = writesOf(writer).join('\n');
    assert.match(found, /insertInto\('media'/);
    assert.match(found, /deleteFrom\('media'/);
    // the forms the document sync and import once used, and raw SQL
    assert.equal(writesOf("await deleteIds(\n  ctx.db,\n  'media',\n  ids,\n);").length, 1);
    assert.equal(writesOf("const ids = await L.insert('media', rows);").length, 1);
    assert.equal(writesOf("await insertReturningIds(ctx.db, 'media', rows);").length, 1);
    assert.equal(writesOf("db.deleteFrom('media as m')").length, 1);
    assert.equal(writesOf('sql`delete from media where id = ${id}`').length, 1);
    assert.equal(writesOf('INSERT INTO "media" (id) VALUES (1)').length, 1);
    // counting a change or naming a referencing table is not a write
    assert.equal(writesOf("changes.created('media', id); ['media', 'node_id', {}, 'media']").length, 0);
    assert.equal(writesOf('insert into media_tickets (id) values (1)').length, 0);
  });
});
