import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createServer } from 'node:net';
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { smallProduction } from './support/fixtures.js';

const exec = promisify(execFile);

/** Every `ref` anywhere in a document. */
function refsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsOf);
  if (value === null || typeof value !== 'object') return [];
  const own = typeof (value as { ref?: unknown }).ref === 'string' ? [(value as { ref: string }).ref] : [];
  return [...own, ...Object.values(value).flatMap(refsOf)];
}

/** A port nobody listens on, and a server holding one. */
async function heldPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    release: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
const CLI = ['--import', 'tsx', join(import.meta.dirname, '..', 'src', 'cli.ts')];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function prodgraph(args: string[], env: Record<string, string>): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [...CLI, ...args], {
      env: { ...process.env, PRODGRAPH_DB: '', PRODGRAPH_MEDIA: '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

interface Target {
  name: string;
  db: () => string;
  setup?: () => Promise<void>;
  teardown?: () => Promise<void>;
}

const schema = `cli_${randomBytes(5).toString('hex')}`;
const pgUrl = process.env.PRODGRAPH_TEST_PG;
const admin = async (q: string) => {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  await c.query(q).finally(() => c.end());
};
let dir = '';
const targets: Target[] = [{ name: 'sqlite', db: () => `sqlite:${join(dir, 'cli.db')}` }];
if (pgUrl) {
  const sep = pgUrl.includes('?') ? '&' : '?';
  targets.push({
    name: 'postgres',
    db: () => `${pgUrl}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    setup: () => admin(`create schema ${schema}`),
    teardown: () => admin(`drop schema ${schema} cascade`),
  });
}

for (const target of targets) {
  describe(`prodgraph CLI [${target.name}]`, () => {
    let env: Record<string, string>;
    let docFile: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'prodgraph-cli-'));
      await target.setup?.();
      env = { PRODGRAPH_DB: target.db(), PRODGRAPH_MEDIA: join(dir, 'media') };
      docFile = join(dir, 'prod.json');
      await writeFile(docFile, JSON.stringify(smallProduction('clitest')));
    });
    after(async () => {
      await target.teardown?.();
      await rm(dir, { recursive: true, force: true });
    });

    it('import --json prints the production and the refs map, every ref of the document in it', async () => {
      const r = await prodgraph(['import', docFile, '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.equal(out.production.code, 'clitest');
      assert.equal(typeof out.production.id, 'number');
      assert.equal(typeof out.refs['ch-mara'], 'number');
      assert.equal(typeof out.refs.job1, 'number', 'generation jobs are mapped too');
      const refs = refsOf(smallProduction('clitest'));
      assert.ok(refs.length > 20);
      assert.deepEqual(
        refs.filter((ref) => typeof out.refs[ref] !== 'number'),
        [],
      );
    });

    it('refuses a second import of the same code unless --replace, with one line and a non-zero exit', async () => {
      const again = await prodgraph(['import', docFile], env);
      assert.notEqual(again.code, 0);
      assert.equal(again.stderr.trim().split('\n').length, 1);
      assert.match(again.stderr, /^prodgraph: production.code: a production "clitest" exists already/);
      const replaced = await prodgraph(['import', docFile, '--replace'], env);
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.match(replaced.stdout, /^synced production "clitest" \(id \d+\): no changes/);
    });

    it('refuses a bad document naming the path', async () => {
      const bad = smallProduction('clibad');
      bad.scenes![0]!.assets = ['ch-mra'];
      const file = join(dir, 'bad.yaml');
      await writeFile(file, JSON.stringify(bad));
      const r = await prodgraph(['import', file], env);
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr,
        'prodgraph: scenes[0].assets[0]: no object in the document has the ref "ch-mra".\n',
      );
    });

    it('keys mint, list and revoke', async () => {
      const minted = await prodgraph(
        [
          'keys',
          'mint',
          '--production',
          'clitest',
          '--label',
          'vendor bot',
          '--scopes',
          'read,submit:turnover',
          '--engagement',
          'eng-pix',
          '--json',
        ],
        env,
      );
      assert.equal(minted.code, 0, minted.stderr);
      const key = JSON.parse(minted.stdout);
      assert.deepEqual(key.scopes, ['read', 'submit:turnover']);
      assert.equal(key.engagement, 'eng-pix');
      assert.match(key.token, /^pgk_/);

      const plain = await prodgraph(['keys', 'mint', '--production', 'clitest', '--label', 'farm'], env);
      assert.match(plain.stdout.trim(), /^pgk_[A-Za-z0-9]{8}_\S{49}$/, 'the token alone');

      const list = await prodgraph(['keys', 'list', '--production', 'clitest', '--json'], env);
      const rows = JSON.parse(list.stdout);
      assert.equal(rows.length, 2);
      assert.deepEqual(rows[1].scopes, ['read', 'write']);
      assert.equal(list.stdout.includes(key.token), false, 'tokens are never listed');

      const revoked = await prodgraph(['keys', 'revoke', key.prefix], env);
      assert.equal(revoked.code, 0, revoked.stderr);
      const after = JSON.parse(
        (await prodgraph(['keys', 'list', '--production', 'clitest', '--json'], env)).stdout,
      );
      assert.ok(after[0].revoked_at);
      assert.equal(after[1].revoked_at, null);
    });

    it('storage task queues a move, refusing escaping paths', async () => {
      const ok = await prodgraph(
        [
          'storage',
          'task',
          '--production',
          'clitest',
          '--from',
          'plates/r1/sh010.exr',
          '--to',
          'plates/r1/final/sh010.exr',
          '--json',
        ],
        env,
      );
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(typeof JSON.parse(ok.stdout).id, 'number');
      const bad = await prodgraph(
        ['storage', 'task', '--production', 'clitest', '--from', '../etc/passwd', '--to', 'x'],
        env,
      );
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /--from: path must not contain ".."/);
    });

    it('fails with one clear line on unknown commands, flags and scopes', async () => {
      for (const [args, message] of [
        [['frobnicate'], /unknown command "frobnicate"/],
        [
          ['keys', 'mint', '--production', 'clitest', '--label', 'x', '--scopes', 'root'],
          /unknown scope "root"/,
        ],
        [['import', docFile, '--bogus'], /Unknown option '--bogus'/],
        [['keys', 'mint', '--production', 'clitest'], /--label is required/],
      ] as const) {
        const r = await prodgraph([...args], env);
        assert.equal(r.code, 1);
        assert.match(r.stderr, message);
        assert.equal(r.stderr.trim().split('\n').length, 1);
      }
      const badDb = await prodgraph(['keys', 'list', '--production', 'x'], {
        ...env,
        PRODGRAPH_DB: 'mysql://nope',
      });
      assert.match(badDb.stderr, /unsupported URL scheme/);
    });

    it('demo loads both demo productions once and prints two keys and a curl line', async () => {
      const first = await prodgraph(['demo'], env);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /loaded demo production "nightfall"/);
      assert.match(first.stdout, /loaded demo production "lanternfall"/);
      assert.match(first.stdout, /production-wide .*: pgk_/);
      assert.match(first.stdout, /vendor, bound to engagement "eng-pixel".*: pgk_/);
      assert.match(
        first.stdout,
        /curl -H "Authorization: Bearer pgk_\S+" http:\/\/127\.0\.0\.1:8080\/api\/v1\/production/,
      );
      const second = await prodgraph(['demo'], env);
      assert.match(second.stdout, /"nightfall" is already loaded/);
    });
  });
}

describe('prodgraph CLI: a bad environment is refused before anything is written', () => {
  let dir: string;
  const sqliteEnv = (db: string) => ({ PRODGRAPH_DB: db, PRODGRAPH_MEDIA: join(dir, 'media') });
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'prodgraph-cli-env-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('read-only commands never create a database or its folder, and name the path they did not find', async () => {
    const typo = join(dir, 'dtaa', 'prodgraph.db');
    for (const args of [
      ['keys', 'list', '--production', 'x'],
      ['keys', 'revoke', 'pgk_abcdefgh'],
      ['storage', 'task', '--production', 'x', '--from', 'a', '--to', 'b'],
    ]) {
      const r = await prodgraph(args, sqliteEnv(typo));
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(
        r.stderr,
        `prodgraph: no SQLite database at ${typo} (check --db / PRODGRAPH_DB; "prodgraph import" or "prodgraph demo" creates one)\n`,
      );
    }
    assert.equal(existsSync(join(dir, 'dtaa')), false, 'no folder was created');
  });

  it('names the file when SQLite refuses it', async () => {
    const notDb = join(dir, 'notes.txt');
    await writeFile(notDb, 'these are not the tables you are looking for\n'.repeat(100));
    const r = await prodgraph(['keys', 'list', '--production', 'x'], sqliteEnv(notDb));
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(`^prodgraph: .*${notDb.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*not a database`),
    );
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });

  it('demo --serve on a taken port says which and mints nothing; serve says the same', async () => {
    const held = await heldPort();
    try {
      const db = join(dir, 'busy.db');
      const demo = await prodgraph(['demo', '--serve', '--port', String(held.port)], sqliteEnv(db));
      assert.equal(demo.code, 1);
      assert.equal(demo.stdout, '', 'no key printed');
      assert.match(
        demo.stderr,
        new RegExp(`^prodgraph: port ${held.port} on 127\\.0\\.0\\.1 is already in use.*--port N or PORT=N`),
      );
      assert.equal(existsSync(db), false, 'nothing was written');
      const serve = await prodgraph(['serve', '--port', String(held.port)], sqliteEnv(db));
      assert.equal(serve.code, 1);
      assert.match(
        serve.stderr,
        new RegExp(`^prodgraph: port ${held.port} on 127\\.0\\.0\\.1 is already in use`),
      );
    } finally {
      await held.release();
    }
  });

  it('demo --serve (npm start) loads, prints the keys and then serves on that port', async () => {
    const free = await heldPort();
    await free.release();
    const child = spawn(process.execPath, [...CLI, 'demo', '--serve', '--port', String(free.port)], {
      env: { ...process.env, ...sqliteEnv(join(dir, 'start.db')), PRODGRAPH_LOG_LEVEL: 'silent' },
    });
    try {
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      const token = await new Promise<string>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
        child.stdout.on('data', () => {
          const m = /production-wide .*: (pgk_\S+)/.exec(stdout);
          if (m && stdout.includes('API reference')) resolve(m[1]!);
        });
      });
      let answer: Response | undefined;
      for (let i = 0; i < 100 && !answer; i++) {
        answer = await fetch(`http://127.0.0.1:${free.port}/api/v1/production`, {
          headers: { authorization: `Bearer ${token}` },
        }).catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 100)));
      }
      assert.equal(answer?.status, 200);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
