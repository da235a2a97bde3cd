import assert from 'node:assert/strict';
import { mkdir, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { FileMediaStore, MediaStore } from '../src/media/store.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call, get } from './support/http.js';
import { smallDisk } from './support/disk.js';
import { jpeg, storedFiles, upload } from './support/write.js';
import { head, RawConnection } from './support/raw-http.js';

/*
 * A full disk. A write that cannot be stored answers 507 {detail, code: insufficient_storage} and
 * leaves nothing behind: no row, no staged or stored file, no half-written state; reads go on.
 * SQLite's database filling up is SQLITE_FULL, provoked with `PRAGMA max_page_count` (the same
 * error SQLite gives when the file system is out of room); the media folder filling up is
 * ENOSPC from the file being written, provoked by a store whose writes fail part-way. Where the
 * tests may mount a file system (root on Linux: CI), a small tmpfs is filled for real as well.
 */

/** A media store whose file writes fail with ENOSPC after the first KiB while `full` is set. */
function fillableStore(inner: FileMediaStore): MediaStore & { full: boolean } {
  const store = Object.create(inner) as FileMediaStore & { full: boolean };
  store.full = false;
  store.stage = (productionId, source, options) => {
    if (!store.full) return inner.stage(productionId, source, options);
    let room = 1024;
    const disk = new Transform({
      transform(chunk: Buffer, _enc, done) {
        if (chunk.length <= room) {
          room -= chunk.length;
          return done(null, chunk);
        }
        this.push(chunk.subarray(0, room));
        room = 0;
        const err = Object.assign(new Error('ENOSPC: no space left on device, write'), {
          code: 'ENOSPC',
          errno: -28,
          syscall: 'write',
        });
        done(err);
      },
    });
    pipeline(source, disk).catch(() => undefined);
    return inner.stage(productionId, disk, options);
  };
  return store;
}

/** A JPEG followed by padding: more than the first KiB the full store lets through. */
const photo = async (seed: number) => Buffer.concat([await jpeg(seed), Buffer.alloc(16 * 1024)]);

const BOUNDARY = 'fulldisk5e2a';
/** A version upload of `bytes` as one multipart body, as curl -F sends it. */
const versionForm = (bytes: Buffer) =>
  Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="still.jpg"\r\n` +
        'Content-Type: image/jpeg\r\n\r\n',
    ),
    bytes,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);

/**
 * `curl -F file=@still.jpg …/versions --next …/production` on a full disk: the upload answers
 * 507 while its body is still arriving; the next request on the same kept-alive connection is
 * answered (a body of a few hundred KB is read and dropped), never reset.
 */
async function uploadThenRead(port: number, key: string, asset: number, bytes: Buffer): Promise<void> {
  const conn = await RawConnection.open(port);
  try {
    const body = versionForm(bytes);
    conn.write(
      head('POST', `/api/v1/assets/${asset}/versions`, {
        Authorization: `Bearer ${key}`,
        'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
        'Content-Length': body.length,
      }),
    );
    conn.write(body);
    const refused = await conn.answer(10_000);
    assert.equal(refused.status, 507, refused.body);
    assert.equal(JSON.parse(refused.body).code, 'insufficient_storage');
    assert.notEqual(refused.headers.connection, 'close', 'a small body is dropped and the connection kept');
    conn.write(head('GET', '/api/v1/production', { Authorization: `Bearer ${key}` }));
    const next = await conn.answer(10_000);
    assert.equal(next.status, 200, next.body);
  } finally {
    conn.destroy();
  }
}

for (const dialect of DIALECTS) {
  describe(`the media folder's disk is full [${dialect}]`, () => {
    let env: TestEnv;
    let store: MediaStore & { full: boolean };
    let key: string;
    let coat: number;

    before(async () => {
      env = await createEnv(dialect, {}, { wrapStore: (s) => (store = fillableStore(s)) });
      coat = (await env.import(smallProduction('full'))).refs['co-coat']!;
      key = await env.mint({ production: 'full' });
    });
    after(() => env.close());

    it('an upload that cannot be stored is 507 and leaves no row and no file; reads and later writes go on', async () => {
      const files = await storedFiles(env.config.mediaDir);
      const count = async (table: 'media' | 'versions') =>
        Number(
          (
            await env.handle.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const [media, versions] = [await count('media'), await count('versions')];
      store.full = true;
      const r = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
        token: key,
        files: [{ name: 'v.jpg', bytes: await photo(2), type: 'image/jpeg' }],
        fields: { note: 'no room' },
      });
      assert.equal(r.status, 507, r.text);
      assert.equal(r.body.code, 'insufficient_storage');
      assert.match(r.body.detail, /nothing was written/);
      assert.deepEqual(await storedFiles(env.config.mediaDir), files, 'a staged or stored file was left');
      assert.equal(await count('media'), media);
      assert.equal(await count('versions'), versions);
      assert.equal((await get(env.app, `/api/v1/assets/${coat}`, key)).status, 200);

      store.full = false;
      const again = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
        token: key,
        files: [{ name: 'v.jpg', bytes: await photo(3), type: 'image/jpeg' }],
      });
      assert.equal(again.status, 201, again.text);
      assert.equal(await count('versions'), versions + 1);
    });

    it('over a real connection: the 507 of a 300 KB upload, then the next request on the same kept-alive connection is answered', async () => {
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (env.app.server.address() as { port: number }).port;
      store.full = true;
      try {
        const still = Buffer.concat([await jpeg(21), Buffer.alloc(300 * 1024, 3)]);
        await uploadThenRead(port, key, coat, still);
        // a body too large to drop (5 MB): answered with Connection: close and closed with a
        // FIN after the answer, not a reset; the client's next request goes out on a new connection
        const conn = await RawConnection.open(port);
        const body = versionForm(Buffer.concat([await jpeg(22), Buffer.alloc(5 * 1024 * 1024, 3)]));
        conn.write(
          head('POST', `/api/v1/assets/${coat}/versions`, {
            Authorization: `Bearer ${key}`,
            'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
            'Content-Length': body.length,
          }),
        );
        conn.write(body);
        const refused = await conn.answer(10_000);
        assert.equal(refused.status, 507, refused.body);
        assert.equal(refused.headers.connection, 'close');
        conn.socket.end();
        assert.equal(await conn.closedWithin(), 'end', 'closed with a FIN, not a reset');
        const fresh = await RawConnection.open(port);
        fresh.write(head('GET', '/api/v1/production', { Authorization: `Bearer ${key}` }));
        assert.equal((await fresh.answer(10_000)).status, 200);
        fresh.destroy();
      } finally {
        store.full = false;
      }
    });
  });
}

describe('the SQLite database’s disk is full [sqlite]', () => {
  let env: TestEnv;
  let key: string;
  let coat: number;
  const setMaxPages = (n: number) => sql.raw(`pragma max_page_count = ${n}`).execute(env.handle.db);

  before(async () => {
    env = await createEnv('sqlite');
    coat = (await env.import(smallProduction('full'))).refs['co-coat']!;
    key = await env.mint({ production: 'full' });
  });
  after(() => env.close());

  it('a write that cannot be stored is 507 and leaves no row and no staged file; reads go on; room again, writes go on', async () => {
    const pages = (await sql<{ page_count: number }>`pragma page_count`.execute(env.handle.db)).rows[0]!
      .page_count;
    await setMaxPages(pages);
    const pad = 'x'.repeat(280);
    let refused: { status: number; body: { code: string; detail: string } } | undefined;
    const acked: string[] = [];
    for (let i = 0; i < 200 && !refused; i++) {
      const label = `full ${i} ${pad}`;
      const r = await call(env.app, 'POST', '/api/v1/assets', { token: key, body: { label } });
      if (r.status === 201) acked.push(label);
      else refused = { status: r.status, body: r.body };
    }
    assert.ok(refused, 'the database never filled');
    assert.equal(refused.status, 507, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'insufficient_storage');
    const labels = (
      await env.handle.db.selectFrom('nodes').where('label', 'like', 'full %').select('label').execute()
    ).map((r) => r.label);
    assert.deepEqual(labels.sort(), acked.sort(), 'the refused write left a row');

    // uploads until one is refused: its staged file discarded, no row; the acknowledged ones whole
    const versions = async () => (await env.handle.db.selectFrom('versions').select('id').execute()).length;
    let up: { status: number; text: string } | undefined;
    for (let i = 0; i < 50; i++) {
      const before = await versions();
      const stored = await storedFiles(env.config.mediaDir);
      up = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
        token: key,
        files: [{ name: 'v.jpg', bytes: await photo(4 + i), type: 'image/jpeg' }],
        fields: { note: pad },
      });
      if (up.status === 201) continue;
      assert.equal(up.status, 507, up.text);
      assert.equal(await versions(), before);
      assert.deepEqual(await storedFiles(env.config.mediaDir), stored, 'the refused upload left a file');
      break;
    }
    assert.equal(up?.status, 507, 'no upload was refused');
    // reads and the health check go on
    assert.equal((await get(env.app, '/api/v1/assets?limit=5', key)).status, 200);
    assert.equal((await get(env.app, `/api/v1/assets/${coat}`, key)).status, 200);
    assert.equal((await get(env.app, '/healthz')).status, 200);
    const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(env.handle.db);
    assert.deepEqual(check.rows, [{ integrity_check: 'ok' }]);

    await setMaxPages(1_073_741_823);
    const after = await call(env.app, 'POST', '/api/v1/assets', {
      token: key,
      body: { label: 'full again' },
    });
    assert.equal(after.status, 201, after.text);
  });
});

const disk = await smallDisk();

for (const dialect of DIALECTS) {
  describe(
    `a real full disk (a small tmpfs) [${dialect}]`,
    { skip: disk ? false : 'cannot mount a tmpfs here (not root on Linux)' },
    () => {
      let env: TestEnv;
      let key: string;
      let coat: number;
      const filler = () => join(disk!.path, `filler-${dialect}`);

      before(async () => {
        const dir = join(disk!.path, dialect);
        await mkdir(dir);
        env = await createEnv(dialect, {}, { dir });
        coat = (await env.import(smallProduction('full'))).refs['co-coat']!;
        key = await env.mint({ production: 'full' });
      });
      after(async () => {
        await rm(filler(), { force: true });
        await env.close();
      });

      it('writes and uploads refused with 507 and leaving nothing; reads go on; room again, writes go on', async () => {
        // the disk filled to its last 48 KiB: a few writes still fit, then none
        const { bavail, bsize } = await statfs(disk!.path);
        await writeFile(filler(), Buffer.alloc(Math.max(0, bavail * bsize - 48 * 1024)));
        const pad = 'x'.repeat(280);
        const acked: string[] = [];
        let refused: { status: number; text: string } | undefined;
        for (let i = 0; i < 500 && !refused; i++) {
          const label = `full ${i} ${pad}`;
          const r = await call(env.app, 'POST', '/api/v1/assets', { token: key, body: { label } });
          if (r.status === 201) acked.push(label);
          else refused = r;
        }
        if (dialect === 'sqlite') {
          assert.equal(refused?.status, 507, refused?.text);
          assert.equal(JSON.parse(refused.text).code, 'insufficient_storage');
        }
        const labels = (
          await env.handle.db.selectFrom('nodes').where('label', 'like', 'full %').select('label').execute()
        ).map((r) => r.label);
        assert.deepEqual(labels.sort(), acked.sort(), 'a refused write left a row');

        const versions = async () =>
          (await env.handle.db.selectFrom('versions').select('id').execute()).length;
        let up: { status: number; text: string } | undefined;
        for (let i = 0; i < 50; i++) {
          const [before, stored] = [await versions(), await storedFiles(env.config.mediaDir)];
          up = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
            token: key,
            files: [{ name: 'v.jpg', bytes: await photo(10 + i), type: 'image/jpeg' }],
          });
          if (up.status === 201) continue;
          assert.equal(up.status, 507, up.text);
          assert.equal(await versions(), before);
          assert.deepEqual(await storedFiles(env.config.mediaDir), stored, 'the refused upload left a file');
          break;
        }
        assert.equal(up?.status, 507, 'no upload was refused');
        assert.equal((await get(env.app, '/api/v1/assets?limit=5', key)).status, 200);
        assert.equal((await get(env.app, `/api/v1/assets/${coat}`, key)).status, 200);
        // the same over a real connection: the 507, then the next request on it answered
        await env.app.listen({ host: '127.0.0.1', port: 0 });
        const port = (env.app.server.address() as { port: number }).port;
        await uploadThenRead(port, key, coat, Buffer.concat([await jpeg(60), Buffer.alloc(300 * 1024, 3)]));

        await rm(filler());
        const again = await call(env.app, 'POST', '/api/v1/assets', {
          token: key,
          body: { label: 'full again' },
        });
        assert.equal(again.status, 201, again.text);
        if (dialect === 'sqlite') {
          const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(env.handle.db);
          assert.deepEqual(check.rows, [{ integrity_check: 'ok' }]);
        }
      });
    },
  );
}

after(() => disk?.unmount());
