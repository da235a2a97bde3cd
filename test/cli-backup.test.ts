import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { parseDbTarget } from '../src/config.js';
import { openAndMigrate, openDatabase } from '../src/db/index.js';
import { cliTargets, prodgraph, prodgraphHere, type Run } from './support/cli.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { dbArgOf, startServer } from './support/server-process.js';
import { jpeg, upload } from './support/write.js';

/*
 * `prodgraph backup` and `prodgraph restore` as a user runs them: in this process through the
 * CLI's own entry (src/cli/main.ts run), and as processes of their own beside a server process
 * that goes on writing. Refusals exit 1 with one line saying why, and leave nothing behind.
 */

/** A refusal as src/cli.ts prints it: exit 1, one line on stderr, nothing on stdout. */
function refused(r: Run, why: RegExp): void {
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^prodgraph: [^\n]+\n$/);
  assert.match(r.stderr, why);
}

for (const dialect of DIALECTS) {
  describe(`prodgraph backup and restore [${dialect}]`, () => {
    let env: TestEnv;
    let cli: Record<string, string>;
    let coat: number;
    let token: string;
    const place = cliTargets().find((t) => t.name === dialect)!;

    before(async () => {
      env = await createEnv(dialect);
      coat = (await env.import(smallProduction('cb'))).refs['co-coat']!;
      token = await env.mint({ production: 'cb', label: 'pipeline' });
      for (const seed of [1, 2]) {
        const r = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
          token,
          files: [{ name: 'v.jpg', bytes: await jpeg(seed), type: 'image/jpeg' }],
        });
        assert.equal(r.status, 201, r.text);
      }
      cli = { PRODGRAPH_DB: dbArgOf(env), PRODGRAPH_MEDIA: env.config.mediaDir };
    });
    after(async () => {
      await place.teardown();
      await env.close();
    });

    /** Whether a restore target holds anything: the SQLite file, or tables in the PostgreSQL schema. */
    async function holdsAnything(db: string): Promise<boolean> {
      const target = parseDbTarget(db);
      if (target.dialect === 'sqlite') return existsSync(target.path);
      const handle = openDatabase(target, { poolSize: 1 });
      try {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_tables where schemaname = current_schema()`.execute(handle.db);
        return rows[0]!.n > 0;
      } finally {
        await handle.close();
      }
    }

    it('backup --json and restore --json: what each did, as JSON; the restored database is the one backed up', async () => {
      const out = join(env.dir, 'b-json');
      const b = await prodgraphHere(['backup', '--out', out, '--json'], cli);
      assert.equal(b.code, 0, b.stderr);
      const m = JSON.parse(b.stdout);
      assert.equal(m.dir, out);
      assert.equal(m.format, 'prodgraph-backup/1');
      assert.equal(m.source.dialect, dialect);
      assert.ok(!m.source.database.includes('password'));
      assert.equal(typeof m.seconds, 'number');
      assert.ok(m.database.rows.nodes > 0 && m.database.sha256.length === 64);
      assert.equal(m.media.files, 2);
      assert.equal(m.media.entries, undefined, 'the file list stays in manifest.json');
      assert.deepEqual(m.missing, []);

      const db = await place.db(env.dir, 'rjson');
      const media = join(env.dir, 'r-json-media');
      const r = await prodgraphHere(['restore', out, '--db', db, '--media', media, '--json'], {});
      assert.equal(r.code, 0, r.stderr);
      const restored = JSON.parse(r.stdout);
      const rows = Object.values(m.database.rows as Record<string, number>).reduce((a, b) => a + b, 0);
      assert.deepEqual(
        { rows: restored.rows, files: restored.files, taken_at: restored.taken_at },
        { rows, files: 2, taken_at: m.taken_at },
      );
      assert.equal(typeof restored.seconds, 'number');
      const handle = await openAndMigrate(parseDbTarget(db));
      try {
        const nodes = await handle.db.selectFrom('nodes').select('id').execute();
        assert.equal(nodes.length, m.database.rows.nodes);
      } finally {
        await handle.close();
      }
      assert.deepEqual((await readdir(media)).length > 0, true);
    });

    it('backup and restore say what they did, in words', async () => {
      const out = join(env.dir, 'b-words');
      const b = await prodgraphHere(['backup', '--out', out], cli);
      assert.equal(b.code, 0, b.stderr);
      const lines = b.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 3, b.stdout);
      assert.match(lines[0]!, new RegExp(`^backup of \\S+ in ${out} \\(\\d+\\.\\d s\\)$`));
      assert.match(lines[1]!, /^ {2}database: \d+ rows in \d+ tables, \d+\.\d MB$/);
      assert.match(lines[2]!, /^ {2}media: 2 files, \d+\.\d MB \(2 hard-linked\)$/);
      const db = await place.db(env.dir, 'rwords');
      const r = await prodgraphHere(
        ['restore', out, '--db', db, '--media', join(env.dir, 'r-words-media')],
        {},
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^restored the backup taken \S+Z: \d+ rows, 2 media files \(\d+\.\d s\)\n$/);
    });

    it('refusals exit 1 with one line saying why, and leave nothing behind', async () => {
      const out = join(env.dir, 'b-refusals');
      assert.equal((await prodgraphHere(['backup', '--out', out], cli)).code, 0);
      const backedUp = await readdir(out);
      const media = join(env.dir, 'r-refused-media');
      const db = await place.db(env.dir, 'rrefused');
      const nothingLeft = async (what: string) => {
        assert.ok(!(await holdsAnything(db)), `${what}: the database was left`);
        assert.ok(!existsSync(media), `${what}: the media folder was left`);
      };

      refused(await prodgraphHere(['backup'], cli), /--out is required/);
      // a folder with anything in it is never written into
      refused(
        await prodgraphHere(['backup', '--out', out], cli),
        /backup folder .* is not empty; name a new folder/,
      );
      assert.deepEqual(await readdir(out), backedUp);
      // a database that is not prodgraph's: the folder the backup made is removed again
      const fresh = join(env.dir, 'b-not-made');
      const notOurs =
        dialect === 'sqlite'
          ? { db: join(env.dir, 'missing.db'), why: /cannot open the SQLite database .*missing\.db/ }
          : {
              db: await place.db(env.dir, 'empty'),
              why: /is not a prodgraph database \(no productions table\)/,
            };
      refused(
        await prodgraphHere(['backup', '--out', fresh], { ...cli, PRODGRAPH_DB: notOurs.db }),
        notOurs.why,
      );
      assert.ok(!existsSync(fresh), 'a failed backup left its folder');

      refused(
        await prodgraphHere(['restore', '--db', db, '--media', media], {}),
        /restore needs the backup folder DIR/,
      );
      refused(await prodgraphHere(['restore', out, '--media', media], {}), /--db is required/);
      refused(await prodgraphHere(['restore', out, '--db', db], {}), /--media is required/);
      refused(
        await prodgraphHere(['restore', env.dir, '--db', db, '--media', media], {}),
        /is not a prodgraph backup: no manifest\.json/,
      );
      await nothingLeft('not a backup');
      // the live database, and a media folder with files in it
      refused(
        await prodgraphHere(['restore', out, '--db', dbArgOf(env), '--media', media], {}),
        /refuses to overwrite/,
      );
      await nothingLeft('over the live database');
      refused(
        await prodgraphHere(['restore', out, '--db', db, '--media', env.config.mediaDir], {}),
        /media folder .* is not empty/,
      );
      await nothingLeft('into a full media folder');

      // a manifest edited to count a row more: found once the database is written, which is removed
      const manifestFile = join(out, 'manifest.json');
      const original = await readFile(manifestFile, 'utf8');
      const edited = JSON.parse(original);
      edited.database.rows.versions += 1;
      await writeFile(manifestFile, JSON.stringify(edited));
      refused(
        await prodgraphHere(['restore', out, '--db', db, '--media', media, '--json'], {}),
        /table versions: \d+ rows restored, the manifest counted \d+/,
      );
      await nothingLeft('a tampered manifest');
      // the database file's checksum no longer matching: refused before anything is written
      edited.database.rows.versions -= 1;
      edited.database.sha256 = 'f'.repeat(64);
      await writeFile(manifestFile, JSON.stringify(edited));
      refused(
        await prodgraphHere(['restore', out, '--db', db, '--media', media], {}),
        /prodgraph\.db does not match the manifest's checksum: the backup is damaged/,
      );
      await nothingLeft('a damaged database file');
      await writeFile(manifestFile, original);
      // a media file changed in the backup (replaced: the backup's files are links to the live ones)
      const { media: files } = JSON.parse(original) as { media: { entries: Array<{ key: string }> } };
      const damaged = join(out, 'media', files.entries.at(-1)!.key);
      await rm(damaged);
      await writeFile(damaged, 'not the file the backup took');
      await mkdir(media, { mode: 0o700 });
      refused(
        await prodgraphHere(['restore', out, '--db', db, '--media', media], {}),
        /media \S+ does not match the manifest's checksum: the backup is damaged/,
      );
      assert.ok(!(await holdsAnything(db)), 'a damaged file: the database was left');
      assert.deepEqual(await readdir(media), [], 'a damaged file: files were left in the media folder');
    });

    it('a backup by a process of its own while a server process writes: every write acknowledged before it is restored', async () => {
      const server = await startServer(env);
      const auth = { authorization: `Bearer ${token}` };
      const acked: Array<{ label: string; kind: 'asset' | 'version'; during: boolean }> = [];
      let running: boolean | null = null; // null: not spawned yet; true: running; false: exited
      let stop = false;
      const writes = (async () => {
        for (let n = 0; !stop; n++) {
          const label = `spawned ${n}`;
          const during = running === true;
          let res: Response;
          if (n % 2 === 0) {
            res = await fetch(`${server.url}/api/v1/assets`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ label }),
            });
          } else {
            const form = new FormData();
            form.append('note', label);
            form.append('file', new Blob([await jpeg(n)], { type: 'image/jpeg' }), 'v.jpg');
            res = await fetch(`${server.url}/api/v1/assets/${coat}/versions`, {
              method: 'POST',
              headers: auth,
              body: form,
            });
          }
          assert.equal(res.status, 201, await res.text());
          acked.push({ label, kind: n % 2 === 0 ? 'asset' : 'version', during: during && running === true });
        }
      })();
      try {
        while (acked.length < 6) await new Promise((r) => setTimeout(r, 20));
        const before = acked.length;
        const out = join(env.dir, 'b-spawned');
        running = true;
        const b = await prodgraph(['backup', '--out', out, '--json'], cli);
        running = false;
        stop = true;
        await writes;
        assert.equal(b.code, 0, b.stderr);
        assert.equal(b.stderr, '');
        const m = JSON.parse(b.stdout);
        assert.deepEqual(m.missing, []);
        const during = acked.filter((a) => a.during).length;
        assert.ok(during > 0, 'no write was acknowledged while the backup process ran');

        const db = await place.db(env.dir, 'rspawned');
        const media = join(env.dir, 'r-spawned-media');
        const r = await prodgraphHere(['restore', out, '--db', db, '--media', media, '--json'], {});
        assert.equal(r.code, 0, r.stderr);
        const handle = await openAndMigrate(parseDbTarget(db));
        try {
          const labels = new Set([
            ...(await handle.db.selectFrom('nodes').select('label').execute()).map((x) => x.label),
            ...(await handle.db.selectFrom('versions').select('note').execute()).map((x) => x.note),
          ]);
          for (const a of acked.slice(0, before)) assert.ok(labels.has(a.label), `${a.kind} ${a.label} lost`);
          for (const f of await handle.db.selectFrom('media').select('storage_key').execute()) {
            const [original, copy] = await Promise.all([
              readFile(env.store.resolveKey(f.storage_key)!),
              readFile(join(media, f.storage_key)),
            ]);
            assert.ok(original.equals(copy), f.storage_key);
          }
          if (handle.dialect === 'sqlite') {
            const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(handle.db);
            assert.deepEqual(check.rows, [{ integrity_check: 'ok' }]);
          }
        } finally {
          await handle.close();
        }

        // the exit status and the one line of a refusal, from a process of its own
        const again = await prodgraph(['backup', '--out', out], cli);
        assert.equal(again.code, 1);
        assert.equal(again.stdout, '');
        assert.equal(again.stderr, `prodgraph: backup folder ${out} is not empty; name a new folder\n`);
        console.log(
          `backup by a process of its own [${dialect}]: ${acked.length} writes to the server process, ` +
            `${during} acknowledged while the backup ran; ${m.media.files} files in ${m.seconds} s`,
        );
      } finally {
        stop = true;
        await writes.catch(() => undefined);
        server.child.kill('SIGTERM');
        assert.equal(await server.exited, 0);
      }
    });
  });
}
