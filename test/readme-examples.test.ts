import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../src/app.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { loadDemo } from './support/read.js';

/*
 * The README's shell examples that write files are run, not just read: with bash and curl,
 * against a live server, and what they wrote is read back as a user's next command would.
 */

const README = new URL('../README.md', import.meta.url);

/** The ```sh block of the README that holds `marker`. */
async function shellBlock(marker: string): Promise<string> {
  const readme = await readFile(README, 'utf8');
  const block = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].find((m) => m[1]!.includes(marker));
  assert.ok(block, `no sh block of the README holds ${marker}`);
  return block[1]!;
}

for (const dialect of DIALECTS) {
  describe(`the README's shell examples [${dialect}]`, () => {
    let env: TestEnv;
    let app: App;
    let base: string;
    let key: string;
    let dir: string;

    before(async () => {
      env = await createEnv(dialect);
      await loadDemo(env, 'episodic');
      key = await env.mint({ production: 'nightfall', scopes: ['read'] });
      app = await buildApp({ config: env.config, database: env.handle, store: env.store, logger: false });
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      dir = await mkdtemp(join(tmpdir(), 'prodgraph-readme-'));
    });
    after(async () => {
      await app?.close();
      await env?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('the paging loop writes one page a line to pages.jsonl: every row once, each line a JSON array', async () => {
      // the README's loop as written, against this server, with pages small enough to make several
      const loop = (await shellBlock('pages.jsonl'))
        .replaceAll('http://127.0.0.1:8080', base)
        .replace('limit=500', 'limit=7');
      assert.notEqual(loop, await shellBlock('pages.jsonl'), 'the loop names the server and its page size');
      await writeFile(join(dir, 'page.sh'), loop);
      await promisify(execFile)('bash', ['-eu', 'page.sh'], { cwd: dir, env: { ...process.env, KEY: key } });

      const text = await readFile(join(dir, 'pages.jsonl'), 'utf8');
      assert.ok(text.endsWith('\n'), 'the last page ends its line');
      const pages = text
        .trimEnd()
        .split('\n')
        .map((line, i) => {
          try {
            return JSON.parse(line) as Array<{ node_id: number }>;
          } catch {
            assert.fail(`line ${i + 1} of pages.jsonl is not one JSON page: ${line.slice(0, 120)}…`);
          }
        });
      const all = (await (
        await fetch(`${base}/api/v1/assets`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as Array<{ node_id: number }>;
      assert.ok(pages.length > 2, `several pages: ${pages.length}`);
      assert.ok(pages.every((p) => Array.isArray(p) && p.length <= 7));
      assert.deepEqual(
        pages.flat().map((a) => a.node_id),
        all.map((a) => a.node_id),
      );
    });
  });
}
