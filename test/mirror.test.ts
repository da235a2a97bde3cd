import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { importDocument } from '../src/document/import.js';
import { parseDocument } from '../src/document/parse.js';
// the example is plain JavaScript for users; the test drives it in-process
// @ts-expect-error no declaration file for the example
import { LISTS, mirror } from '../examples/mirror.mjs';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call, get } from './support/http.js';
import { until } from './support/receiver.js';
import { jpeg, upload } from './support/write.js';

const exec = promisify(execFile);
// its real path: the script runs main() only when started as itself, and the suite's built tree
// reaches it through a link (test/support/built.ts)
const SCRIPT = realpathSync(join(import.meta.dirname, '..', 'examples', 'mirror.mjs'));

interface MirrorState {
  cursor: string;
  lists: Record<string, unknown>;
}

for (const dialect of DIALECTS) {
  describe(`examples/mirror.mjs keeps a copy equal to the API [${dialect}]`, () => {
    let env: TestEnv;
    let key: string;
    let base: string;
    let refs: Record<string, number>;

    before(async () => {
      env = await createEnv(dialect);
      refs = (await env.import(smallProduction('mirrored'))).refs;
      key = await env.mint({ production: 'mirrored' });
      await env.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
    });
    after(async () => {
      // the clients' keep-alive sockets would hold close() for the server's keep-alive timeout
      env.app.server.closeAllConnections();
      await env.close();
    });

    /** Every list the mirror keeps, as the API answers it now. */
    const fromApi = async () => {
      const out: Record<string, unknown> = {};
      for (const [name, path] of Object.entries(LISTS as Record<string, string>)) {
        const r = await get(env.app, `/api/v1${path}`, key);
        assert.equal(r.status, 200);
        out[name] = r.body;
      }
      return out;
    };

    /** A mixed series of writes: the API, a version upload, a decision, a re-import of the document. */
    async function writes(tag: string) {
      const made = await call(env.app, 'POST', '/api/v1/assets', {
        token: key,
        body: { label: `Mirror ${tag}` },
      });
      assert.equal(made.status, 201);
      const noted = await call(env.app, 'POST', `/api/v1/assets/${refs['co-coat']}/notes`, {
        token: key,
        body: { text: `note ${tag}` },
      });
      assert.equal(noted.status, 201);
      const landed = await upload(env.app, `/api/v1/assets/${made.body.node_id}/versions`, {
        token: key,
        files: [{ name: 'still.jpg', bytes: await jpeg(tag.length), type: 'image/jpeg' }],
      });
      assert.equal(landed.status, 201, landed.text);
    }

    it('a snapshot, then writes of every sort, then a catch-up: the copy equals the API', async () => {
      const file = join(env.dir, 'once.json');
      const first: MirrorState = await mirror({ base, key, file });
      assert.deepEqual(first.lists, await fromApi());
      await writes('a');
      const decided = await call(env.app, 'POST', `/api/v1/approvals/${refs['ap-coat']}/decide`, {
        token: key,
        body: { decision: 'approved', decided_by: 'Ana Ruiz' },
      });
      assert.equal(decided.status, 200, decided.text);
      const doc = smallProduction('mirrored');
      doc.scenes![0]!.synopsis = 'Mara arrives, soaked.';
      await importDocument(env.handle.db, parseDocument(JSON.stringify(doc)), {
        store: env.store,
        baseDir: env.dir,
        replace: true,
      });
      const second: MirrorState = await mirror({ base, key, file });
      assert.notEqual(second.cursor, first.cursor);
      assert.deepEqual(second.lists, await fromApi());
      // the file holds the same, and a run with nothing new changes nothing
      assert.deepEqual(JSON.parse(await readFile(file, 'utf8')).lists, second.lists);
      const third: MirrorState = await mirror({ base, key, file });
      assert.equal(third.cursor, second.cursor);
    });

    it('following: a write shows up in the copy within a second or so', async () => {
      const file = join(env.dir, 'follow.json');
      const stop = new AbortController();
      let synced = 0;
      const running = mirror({
        base,
        key,
        file,
        follow: true,
        wait: 5,
        signal: stop.signal,
        onSync: () => synced++,
      });
      try {
        await until('the snapshot', () => synced === 1);
        const t0 = Date.now();
        await writes('follow');
        await until('the copy to match', async () => {
          const state = JSON.parse(await readFile(file, 'utf8')) as MirrorState;
          return JSON.stringify(state.lists) === JSON.stringify(await fromApi());
        });
        assert.ok(Date.now() - t0 < 5000);
      } finally {
        stop.abort();
        await running;
      }
    });

    it('runs as a command (smoke test): --once catches up and exits 0', async () => {
      const file = join(env.dir, 'cli.json');
      const { stdout } = await exec(process.execPath, [SCRIPT, file, '--once'], {
        env: { ...process.env, PRODGRAPH_URL: base, PRODGRAPH_KEY: key },
      });
      assert.match(stdout, /snapshot/);
      assert.match(stdout, /up to date at c1\./);
      const state = JSON.parse(await readFile(file, 'utf8')) as MirrorState;
      assert.deepEqual(state.lists, await fromApi());
    });
  });
}
