import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transform } from 'esbuild';
import ts from 'typescript';
import { servedDocument, TYPES_FILE, typesOf } from '../clients/typescript/scripts/generate.js';
import { buildApp, type App } from '../src/app.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Receiver, until } from './support/receiver.js';
import { ALL_SCOPES, importRoundTrip, png, type Refs } from './support/round-trip.js';

/*
 * The client's README is run, not just read: every ```ts block is written out as a script and
 * executed against a live server (SQLite and PostgreSQL), and type-checked against the client.
 * And the committed types are the ones the served document gives today.
 */

const CLIENT = fileURLToPath(new URL('../clients/typescript/', import.meta.url));
const ENTRY = join(CLIENT, 'src/index.ts');
const RUN_ENTRY = join(CLIENT, 'src/index.js');

interface Snippet {
  heading: string;
  code: string;
}

async function snippets(): Promise<Snippet[]> {
  const readme = await readFile(join(CLIENT, 'README.md'), 'utf8');
  const out: Snippet[] = [];
  let heading = '';
  for (const m of readme.matchAll(/^(#{2,3} .+)$|^```ts\n([\s\S]*?)^```$/gm)) {
    if (m[1]) heading = m[1].replace(/^#+ /, '');
    else out.push({ heading, code: m[2]! });
  }
  return out;
}

/**
 * The snippet as a runnable script: transpiled as tsx would (the suite may run without a loader,
 * test/support/built.ts), the package name resolved to the client's module (its .js name: the
 * built tree has it, and tsx maps it to the .ts source).
 */
const runnable = async (code: string) =>
  (
    await transform(code.replaceAll("'@prodgraph/client'", `'${pathToFileURL(RUN_ENTRY).href}'`), {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
    })
  ).code;

describe('the TypeScript client stays in step with the server and its README', () => {
  it('the committed types are exactly what the served document generates today', async () => {
    const committed = await readFile(TYPES_FILE, 'utf8');
    const fresh = await typesOf(await servedDocument());
    assert.ok(
      committed === fresh,
      'clients/typescript/src/openapi.ts is stale: run `npm run generate:client` and commit it',
    );
  });

  it('every README snippet type-checks against the client', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prodgraph-readme-ts-'));
    try {
      const files: string[] = [];
      for (const [i, s] of (await snippets()).entries()) {
        const file = join(dir, `snippet-${i}.mts`);
        await writeFile(file, s.code);
        files.push(file);
      }
      const program = ts.createProgram(files, {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [fileURLToPath(new URL('../node_modules/@types', import.meta.url))],
        paths: { '@prodgraph/client': [ENTRY] },
      });
      const problems = ts
        .getPreEmitDiagnostics(program)
        .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      assert.deepEqual(problems, []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`the TypeScript client README, run against a live server [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let dir: string;
    let worker: App;
    let rx: Receiver;
    let writer: string;
    const cwd = process.cwd();

    before(async () => {
      env = await createEnv(dialect, {
        PRODGRAPH_WEBHOOK_RETRY_BASE_MS: '50',
        PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32',
      });
      refs = await importRoundTrip(env, 'film');
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      writer = await env.mint({ production: 'film', scopes: ['read', 'write'] });
      process.env.PRODGRAPH_URL = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
      process.env.PRODGRAPH_KEY = writer;
      process.env.PRODGRAPH_ADMIN_KEY = await env.mint({ production: 'film', scopes: ['read', 'admin'] });
      process.env.PRODGRAPH_VENDOR_KEY = await env.mint({
        production: 'film',
        scopes: ALL_SCOPES,
        engagement: 'eng-pix',
      });
      dir = await mkdtemp(join(tmpdir(), 'prodgraph-readme-'));
      await writeFile(join(dir, 'coat-v2.png'), await png('#246'));
      await writeFile(join(dir, 'comp-v1.png'), await png('#642'));
      await writeFile(join(dir, 'plate_sh010.exr'), Buffer.alloc(300_000, 7));
      worker = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        webhooks: true,
      });
      await worker.ready();
      rx = await new Receiver().start();
    });
    after(async () => {
      process.chdir(cwd);
      await rx.close();
      await worker.close();
      await env.close();
      await rm(dir, { recursive: true, force: true });
    });

    /** Runs one snippet as a script in `dir`; answers its module and what it printed. */
    async function run(i: number, s: Snippet, meanwhile?: (finished: () => boolean) => Promise<void>) {
      const file = join(dir, `snippet-${i}-${dialect}.mjs`);
      await writeFile(file, await runnable(s.code));
      const printed: string[] = [];
      const log = console.log;
      console.log = (...args: unknown[]) => {
        const [first, ...rest] = args;
        printed.push(
          typeof first === 'string' && first.includes('%s')
            ? first.replace('%s', String(rest.shift()))
            : [first, ...rest].map(String).join(' '),
        );
      };
      process.chdir(dir);
      try {
        let finished = false;
        const loading = import(pathToFileURL(file).href) as Promise<Record<string, unknown>>;
        loading.then(
          () => (finished = true),
          () => (finished = true),
        );
        await meanwhile?.(() => finished);
        return { module: await loading, printed };
      } finally {
        console.log = log;
        process.chdir(cwd);
      }
    }

    const CHECKS: Record<string, (r: Awaited<ReturnType<typeof run>>) => Promise<void> | void> = {
      'The calls': ({ printed }) => assert.deepEqual(printed, ['INT. WARD - NIGHT 2 assets']),
      'Time limits': async ({ printed }) => {
        const production = await env.app.inject({
          url: '/api/v1/production',
          headers: { authorization: `Bearer ${writer}` },
        });
        assert.deepEqual(printed, [production.json().title]);
      },
      'Page through the assets': async ({ printed }) => {
        const all = await env.app.inject({
          url: '/api/v1/assets',
          headers: { authorization: `Bearer ${writer}` },
        });
        assert.equal(printed.length, all.json().length);
        assert.ok(printed.includes(`${refs['co-coat']} costume Mara coat active`));
      },
      'A scene bundle, sent again only when it changed': ({ printed }) =>
        assert.deepEqual(printed, ['200 304 INT. WARD - NIGHT']),
      'Land a version': ({ printed }) => assert.match(printed[0]!, /^landed v\d+ of (Mara coat|Jon cape)$/),
      'Decide an approval': ({ printed }) => assert.match(printed[0]!, / approved$/),
      'As a vendor: what you may fetch, and a submission on your turnover': ({ printed }) =>
        assert.deepEqual(printed, [
          `scene ${refs.sc1} 2099-01-01T00:00:00.000Z`,
          `character ${refs['ch-mara']} no expiry`,
          'submitted 1 file(s) on "Plates, reel 1"',
        ]),
      'The turnover, production side: a package out, a review back': ({ printed }) => {
        assert.equal(printed.length, 4, printed.join('\n'));
        assert.match(printed[0]!, /^organisation \S+$/);
        assert.equal(printed[1], 'package: sh010 plate (300000 bytes); 300000 bytes sent');
        assert.equal(printed[2], 'delivery sent');
        assert.equal(printed[3], '"Plates, reel 1": changes_requested');
      },
      'As a vendor: the package, and the reviews of your work': ({ printed }) =>
        assert.deepEqual(printed, [
          `Plates, reel 1: sh010 plate, 300000 bytes, ${createHash('sha256').update(Buffer.alloc(300_000, 7)).digest('hex')}`,
          'Plates, reel 1: "Plates, reel 1" changes_requested: Edge matte chatters on frames 1012-1020',
        ]),
      'Download media, checked against its SHA-256': ({ printed }) => {
        const m = /^(.+): (\d+) bytes, verified$/.exec(printed[0]!);
        assert.ok(m, printed[0]);
        assert.ok(existsSync(join(dir, m[1]!)), 'the file is on disk');
      },
      'Follow the change feed': ({ printed }) => {
        assert.match(printed[0]!, /^created asset \d+ by /);
        assert.match(printed[1]!, /^resume with FEED_CURSOR=\S+$/);
      },
      'Verify a webhook': async ({ module }) => {
        const handle = module.handleDelivery as (r: Request) => Promise<Response>;
        const delivery = (body: string) =>
          new Request('http://receiver.invalid/hook', {
            method: 'POST',
            headers: { 'prodgraph-signature': String(rx.got[0]!.headers['prodgraph-signature']) },
            body,
          });
        const log = console.log;
        console.log = () => undefined;
        try {
          assert.equal((await handle(delivery(rx.got[0]!.body))).status, 204);
          assert.equal((await handle(delivery(rx.got[0]!.body.replace('{', '{ ')))).status, 401);
        } finally {
          console.log = log;
        }
      },
    };

    it('runs every snippet, each doing what its section says', async () => {
      const admin = await env.mint({ production: 'film', scopes: ['admin'] });
      const hook = await env.app.inject({
        method: 'POST',
        url: '/api/v1/admin/webhooks',
        headers: { authorization: `Bearer ${admin}` },
        payload: { url: rx.url },
      });
      process.env.PRODGRAPH_WEBHOOK_SECRET = hook.json().secret;
      const all = await snippets();
      assert.deepEqual(
        all.map((s) => s.heading),
        Object.keys(CHECKS),
      );
      for (const [i, s] of all.entries()) {
        // the feed waits for a change: changes are made while it does, until it has seen one (its
        // first poll may be answered after a write, and `now` then starts past that write)
        const meanwhile = s.code.includes('followChanges(')
          ? async (finished: () => boolean) => {
              for (let n = 0; !finished(); n++) {
                await new Promise((r) => setTimeout(r, 250));
                await env.app.inject({
                  method: 'POST',
                  url: '/api/v1/assets',
                  headers: { authorization: `Bearer ${writer}` },
                  payload: { label: `Made while the feed waits (${n})` },
                });
              }
            }
          : undefined;
        const result = await run(i, s, meanwhile);
        if (s.heading === 'Verify a webhook') await until('a delivery', () => rx.got.length > 0);
        await CHECKS[s.heading]!(result);
      }
    });
  });
}
