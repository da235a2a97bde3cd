import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { takeBackup } from '../src/backup/backup.js';
import { BackupError } from '../src/backup/manifest.js';
import { restoreBackup } from '../src/backup/restore.js';
import { parseDbTarget, type Config, type DbTarget } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { openAndMigrate } from '../src/db/index.js';
import { FileMediaStore } from '../src/media/store.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call } from './support/http.js';
import { dbArgOf } from './support/server-process.js';
import { jpeg, upload } from './support/write.js';

/*
 * Backup while the server writes, restore into a fresh place: every write acknowledged before
 * the backup began is there, its files byte for byte, and the restored database is whole.
 */

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.PRODGRAPH_TEST_PG });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A PostgreSQL schema of the test's own, empty, and its URL. */
async function emptySchema(): Promise<{ target: DbTarget; drop(): Promise<void> }> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create schema ${schema}`));
  const url = new URL(process.env.PRODGRAPH_TEST_PG!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    target: { dialect: 'postgres', url: url.toString() },
    drop: () => admin((c) => c.query(`drop schema ${schema} cascade`)).then(() => undefined),
  };
}

interface Ack {
  kind: 'asset' | 'version' | 'key' | 'note';
  label: string;
  at: number;
}

for (const dialect of DIALECTS) {
  describe(`backup and restore while the server writes [${dialect}]`, () => {
    let env: TestEnv;
    let writer: string;
    let adminKey: string;
    let coat: number;
    const drops: Array<() => Promise<void>> = [];

    before(async () => {
      env = await createEnv(dialect);
      coat = (await env.import(smallProduction('bk'))).refs['co-coat']!;
      writer = await env.mint({ production: 'bk', label: 'pipeline', scopes: ['read', 'write', 'admin'] });
      adminKey = writer;
    });
    after(async () => {
      for (const d of drops) await d().catch(() => undefined);
      await env.close();
    });

    /** The env's database as another process names it (PostgreSQL: the URL with its schema). */
    const source = (): Config => ({ ...env.config, db: parseDbTarget(dbArgOf(env)) });

    /** One write of each kind in turn, until told to stop; answers what was acknowledged, when. */
    const writeLoop = (stop: { now: boolean }, acked: Ack[]) =>
      (async () => {
        for (let n = 0; !stop.now; n++) {
          const label = `bk ${n}`;
          const kind = (['asset', 'version', 'key', 'note'] as const)[n % 4]!;
          let status: number;
          if (kind === 'asset') {
            status = (await call(env.app, 'POST', '/api/v1/assets', { token: writer, body: { label } }))
              .status;
          } else if (kind === 'version') {
            status = (
              await upload(env.app, `/api/v1/assets/${coat}/versions`, {
                token: writer,
                files: [{ name: 'v.jpg', bytes: await jpeg(n), type: 'image/jpeg' }],
                fields: { note: label },
              })
            ).status;
          } else if (kind === 'key') {
            status = (await call(env.app, 'POST', '/api/v1/admin/keys', { token: adminKey, body: { label } }))
              .status;
          } else {
            status = (
              await call(env.app, 'POST', `/api/v1/assets/${coat}/notes`, {
                token: writer,
                body: { text: label },
              })
            ).status;
          }
          assert.ok(status === 201 || status === 200, `${kind} ${label}: ${status}`);
          acked.push({ kind, label, at: Date.now() });
          await new Promise((r) => setTimeout(r, 5));
        }
      })();

    it('a backup taken mid-stream restores every write acknowledged before it began, files byte-identical, integrity ok', async () => {
      const acked: Ack[] = [];
      const stop = { now: false };
      const loop = writeLoop(stop, acked);
      while (acked.length < 12) await new Promise((r) => setTimeout(r, 20));
      const began = Date.now();
      const dir = join(env.dir, 'backup');
      const manifest = await takeBackup(source(), dir, 'test').catch(async (err) => {
        stop.now = true;
        await loop.catch(() => undefined);
        throw err;
      });
      const writtenDuring = acked.filter((a) => a.at >= began).length;
      // a few more after it, then stop
      const total = acked.length;
      while (acked.length < total + 4) await new Promise((r) => setTimeout(r, 20));
      stop.now = true;
      await loop;
      assert.ok(manifest.media.files > 0 && manifest.missing.length === 0, JSON.stringify(manifest.missing));
      assert.equal(manifest.source.dialect, dialect);

      const targets: Array<{ name: string; target: DbTarget }> = [
        { name: 'sqlite', target: { dialect: 'sqlite', path: join(env.dir, 'restored.db') } },
      ];
      if (dialect === 'postgres') {
        const s = await emptySchema();
        drops.push(s.drop);
        targets.push({ name: 'postgres', target: s.target });
      }
      for (const { name, target } of targets) {
        const media = join(env.dir, `restored-media-${name}`);
        const result = await restoreBackup(dir, target, media);
        assert.equal(result.files, manifest.media.files);
        const restored = await openAndMigrate(target);
        try {
          const before = acked.filter((a) => a.at < began);
          const labels = new Set(
            [
              ...(await restored.db.selectFrom('nodes').select('label').execute()).map((r) => r.label),
              ...(await restored.db.selectFrom('versions').select('note').execute()).map((r) => r.note),
              ...(await restored.db.selectFrom('api_keys').select('label').execute()).map((r) => r.label),
              ...(await restored.db.selectFrom('version_notes').select('text').execute()).map((r) => r.text),
            ].filter((l): l is string => typeof l === 'string'),
          );
          for (const a of before) assert.ok(labels.has(a.label), `${name}: ${a.kind} ${a.label} lost`);
          // every file the restored database names: byte for byte the one the server stored
          const files = await restored.db.selectFrom('media').select(['storage_key', 'sha256']).execute();
          assert.ok(files.length >= before.filter((a) => a.kind === 'version').length);
          for (const m of files) {
            const [original, copy] = await Promise.all([
              readFile(env.store.resolveKey(m.storage_key)!),
              readFile(join(env.dir, `restored-media-${name}`, m.storage_key)),
            ]);
            assert.ok(original.equals(copy), m.storage_key);
          }
          if (target.dialect === 'sqlite') {
            const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(restored.db);
            assert.deepEqual(check.rows, [{ integrity_check: 'ok' }]);
          }
          // the restored place serves: the same key, a new write (PostgreSQL's ids go on after the restored ones)
          const app = await buildApp({
            config: { ...env.config, db: target, mediaDir: media },
            database: restored,
            store: new FileMediaStore(media),
            logger: false,
          });
          try {
            const r = await call(app, 'POST', '/api/v1/assets', {
              token: writer,
              body: { label: 'after restore' },
            });
            assert.equal(r.status, 201, r.text);
          } finally {
            await app.close();
          }
        } finally {
          await restored.close();
        }
      }
      console.log(
        `backup [${dialect}]: ${acked.length} writes acknowledged, ${writtenDuring} of them while the backup ran; ` +
          `${manifest.media.files} files (${manifest.media.linked} hard-linked)`,
      );
    });

    it('restore refuses to overwrite a database or a media folder, and a damaged backup', async () => {
      const dir = join(env.dir, 'backup2');
      await takeBackup(source(), dir, 'test');
      // the live database itself
      const live = source().db;
      await assert.rejects(restoreBackup(dir, live, join(env.dir, 'm-live')), (err: Error) => {
        assert.ok(err instanceof BackupError);
        assert.match(err.message, /refuses to overwrite/);
        return true;
      });
      // a media folder with files in it
      await assert.rejects(
        restoreBackup(dir, { dialect: 'sqlite', path: join(env.dir, 'r2.db') }, env.config.mediaDir),
        /is not empty/,
      );
      // the backup folder taken again into a non-empty folder
      await assert.rejects(takeBackup(source(), dir, 'test'), /is not empty/);
      // a damaged database file
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
      manifest.database.sha256 = '0'.repeat(64);
      await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
      await assert.rejects(
        restoreBackup(dir, { dialect: 'sqlite', path: join(env.dir, 'r3.db') }, join(env.dir, 'm3')),
        /does not match the manifest/,
      );
    });
  });
}
