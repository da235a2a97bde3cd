import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer } from 'node:net';
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { cliArgv } from './support/built.js';
import { until } from './support/receiver.js';
import { prodgraphHere } from './support/cli.js';
import { smallProduction } from './support/fixtures.js';

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
/*
 * Commands run in this process (`run(argv)`, exactly as src/cli.ts runs it): a process per
 * command cost about 2 s each. Three processes stay spawned, each because the behaviour is the
 * process's own and cannot be shown from inside this one:
 * - `npm start` (demo --serve): the one smoke of the real entry point, printing keys then
 *   serving until signalled;
 * - a reader closing the pipe early, mid-stream (`generate`) or before anything is written
 *   (`import --json`): src/cli.ts turns that EPIPE into a quiet exit 0, which only a real stdout
 *   pipe and a real exit code show (in-process, output goes to a function, not a pipe).
 */

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
      const r = await prodgraphHere(['import', docFile, '--json'], env);
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
      const again = await prodgraphHere(['import', docFile], env);
      assert.notEqual(again.code, 0);
      assert.equal(again.stderr.trim().split('\n').length, 1);
      assert.match(again.stderr, /^prodgraph: production.code: a production "clitest" exists already/);
      const replaced = await prodgraphHere(['import', docFile, '--replace'], env);
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.match(replaced.stdout, /^synced production "clitest" \(id \d+\): no changes/);
    });

    it('refuses a bad document naming the path', async () => {
      const bad = smallProduction('clibad');
      bad.scenes![0]!.assets = ['ch-mra'];
      const file = join(dir, 'bad.yaml');
      await writeFile(file, JSON.stringify(bad));
      const r = await prodgraphHere(['import', file], env);
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr,
        'prodgraph: scenes[0].assets[0]: no object in the document has the ref "ch-mra".\n',
      );
    });

    it('keys mint, list and revoke', async () => {
      const minted = await prodgraphHere(
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

      const plain = await prodgraphHere(['keys', 'mint', '--production', 'clitest', '--label', 'farm'], env);
      assert.match(plain.stdout.trim(), /^pgk_[A-Za-z0-9]{8}_\S{49}$/, 'the token alone');

      const list = await prodgraphHere(['keys', 'list', '--production', 'clitest', '--json'], env);
      const rows = JSON.parse(list.stdout);
      assert.equal(rows.length, 2);
      assert.deepEqual(rows[1].scopes, ['read', 'write']);
      assert.equal(list.stdout.includes(key.token), false, 'tokens are never listed');

      const revoked = await prodgraphHere(['keys', 'revoke', key.prefix], env);
      assert.equal(revoked.code, 0, revoked.stderr);
      const after = JSON.parse(
        (await prodgraphHere(['keys', 'list', '--production', 'clitest', '--json'], env)).stdout,
      );
      assert.ok(after[0].revoked_at);
      assert.equal(after[1].revoked_at, null);
    });

    it('storage task queues a move, refusing escaping paths', async () => {
      const ok = await prodgraphHere(
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
      const bad = await prodgraphHere(
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
        const r = await prodgraphHere([...args], env);
        assert.equal(r.code, 1);
        assert.match(r.stderr, message);
        assert.equal(r.stderr.trim().split('\n').length, 1);
      }
      const badDb = await prodgraphHere(['keys', 'list', '--production', 'x'], {
        ...env,
        PRODGRAPH_DB: 'mysql://nope',
      });
      assert.match(badDb.stderr, /unsupported URL scheme/);
    });

    it('takes --db and --media before the command too', async () => {
      const r = await prodgraphHere(
        [
          '--db',
          env.PRODGRAPH_DB!,
          `--media=${env.PRODGRAPH_MEDIA}`,
          'keys',
          'list',
          '--production',
          'clitest',
          '--json',
        ],
        { PRODGRAPH_DB: 'sqlite:/nonexistent/never.db', PRODGRAPH_MEDIA: '/nonexistent' },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.ok(Array.isArray(JSON.parse(r.stdout)));
      const other = await prodgraphHere(['--bogus', 'keys', 'list'], env);
      assert.equal(
        other.stderr,
        'prodgraph: unknown command "--bogus" (see prodgraph --help: only --db and --media may come before it)\n',
      );
    });

    it('names the flag, not the API field, when a service refuses a value', async () => {
      for (const [args, message] of [
        [
          [
            'grants',
            'add',
            '--production',
            'clitest',
            '--engagement',
            'eng-pix',
            '--own-po',
            '--expires',
            '2001-01-01T00:00:00Z',
          ],
          'prodgraph: --expires: must be in the future\n',
        ],
        [
          ['grants', 'add', '--production', 'clitest', '--engagement', 'eng-pix', '--delivery', 'dl-plates'],
          'prodgraph: --access: is required on a delivery grant (read or submit)\n',
        ],
        [
          ['engagements', 'add', '--production', 'clitest', '--ref', 'sc1', '--organisation', 'org-pix'],
          /^prodgraph: --ref: "sc1" already names /,
        ],
      ] as const) {
        const r = await prodgraphHere([...args], env);
        assert.equal(r.code, 1, args.join(' '));
        if (typeof message === 'string') assert.equal(r.stderr, message);
        else assert.match(r.stderr, message);
      }
    });

    it('demo loads both demo productions once and prints two keys and a curl line', async () => {
      const first = await prodgraphHere(['demo'], env);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /loaded demo production "nightfall"/);
      assert.match(first.stdout, /loaded demo production "lanternfall"/);
      assert.match(first.stdout, /production-wide .*: pgk_/);
      assert.match(first.stdout, /vendor, bound to engagement "eng-pixel".*: pgk_/);
      assert.match(
        first.stdout,
        /curl -H "Authorization: Bearer pgk_\S+" http:\/\/127\.0\.0\.1:8080\/api\/v1\/production/,
      );
      // the keys it minted are in the audit trail, as any minted at the command line
      const audit = await prodgraphHere(
        ['audit', 'export', '--production', 'nightfall', '--since', '1d', '--action', 'key.mint'],
        env,
      );
      assert.equal(audit.code, 0, audit.stderr);
      const minted = audit.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { actor: string; summary: string });
      assert.equal(minted.length, 3);
      for (const row of minted) assert.match(row.actor, / via prodgraph demo$/);
      const second = await prodgraphHere(['demo'], env);
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
      const r = await prodgraphHere(args, sqliteEnv(typo));
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
    const r = await prodgraphHere(['keys', 'list', '--production', 'x'], sqliteEnv(notDb));
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(`^prodgraph: .*${notDb.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*not a database`),
    );
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });

  it("--db naming a folder, another kind of file or another program's SQLite database is refused untouched", async () => {
    const previous = process.umask(0o022);
    try {
      const folder = join(dir, 'a-folder');
      await mkdir(folder, { mode: 0o755 });
      const text = join(dir, 'notes.md');
      await writeFile(text, '# not a database\n', { mode: 0o644 });
      const foreign = join(dir, 'other-app.sqlite');
      const other = new SQLite(foreign);
      other.exec('create table photos (id integer primary key, path text)');
      other.close();
      await chmod(foreign, 0o644);
      const cases: Array<[string, RegExp]> = [
        [
          folder,
          /is a folder, not a SQLite database file \(name a file, e\.g\. .*\/prodgraph\.db; nothing was changed\)$/,
        ],
        [text, /file is not a database \(nothing was changed\)$/],
        [
          foreign,
          /is a SQLite database of another program \(tables photos\), not prodgraph's; nothing was changed$/,
        ],
      ];
      for (const [path, message] of cases) {
        const before = (await stat(path)).mode;
        for (const args of [
          ['keys', 'list', '--production', 'x'],
          ['import', join(import.meta.dirname, '..', 'demo', 'single', 'production.yaml')],
        ]) {
          const r = await prodgraphHere(args, sqliteEnv(path));
          assert.equal(r.code, 1, `${args[0]} on ${path}`);
          assert.match(r.stderr.trim(), message);
          assert.equal(r.stderr.trim().split('\n').length, 1);
          assert.equal((await stat(path)).mode, before, `${path} keeps its mode`);
        }
      }
      const check = new SQLite(foreign, { readonly: true });
      const tables = check.prepare("select name from sqlite_master where type = 'table'").pluck().all();
      check.close();
      assert.deepEqual(tables, ['photos'], 'no table of ours was added to it');
    } finally {
      process.umask(previous);
    }
  });

  it('an empty file given to --db is refused untouched by every command that does not build a database; import builds in it', async () => {
    const previous = process.umask(0o022);
    try {
      const empty = join(dir, 'touched-0-bytes.db');
      await writeFile(empty, '', { mode: 0o644 });
      await chmod(empty, 0o644);
      for (const args of [
        ['keys', 'list', '--production', 'x'],
        ['keys', 'revoke', 'pgk_abcdefgh'],
        ['storage', 'task', '--production', 'x', '--from', 'a', '--to', 'b'],
        ['webhooks', 'list', '--production', 'x'],
        ['export', 'x', '--out', join(dir, 'never.yaml')],
      ]) {
        const r = await prodgraphHere(args, sqliteEnv(empty));
        assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        assert.equal(
          r.stderr,
          `prodgraph: ${empty} is an empty file, not a prodgraph database ("prodgraph import" or "prodgraph demo" builds one in it; nothing was changed)\n`,
          args.join(' '),
        );
        const after = await stat(empty);
        assert.equal(after.mode & 0o777, 0o644, `${args.join(' ')} kept its mode`);
        assert.equal(after.size, 0, `${args.join(' ')} wrote nothing`);
        assert.equal(existsSync(`${empty}-wal`), false, `${args.join(' ')} opened no log`);
      }
      const doctor = await prodgraphHere(['doctor'], sqliteEnv(empty));
      assert.equal(doctor.code, 1);
      assert.match(doctor.stdout, /^fail +database: SQLite .*is an empty file, not a prodgraph database/m);
      assert.equal((await stat(empty)).size, 0, 'doctor wrote nothing');
      // the commands that build a database build it there, owner-only
      const docFile = join(dir, 'fill-me.json');
      await writeFile(docFile, JSON.stringify(smallProduction('fill-me')));
      const filled = await prodgraphHere(['import', docFile], sqliteEnv(empty));
      assert.equal(filled.code, 0, filled.stderr);
      assert.equal((await stat(empty)).mode & 0o777, 0o600);
      const listed = await prodgraphHere(['keys', 'list', '--production', 'fill-me'], sqliteEnv(empty));
      assert.equal(listed.code, 0, listed.stderr);
    } finally {
      process.umask(previous);
    }
  });

  it('import --plan creates no database: it plans against an empty one and leaves the path as it was', async () => {
    const fresh = join(dir, 'not-yet', 'new.db');
    const docFile = join(dir, 'plan-me.json');
    await writeFile(docFile, JSON.stringify(smallProduction('plan-me')));
    const r = await prodgraphHere(['import', docFile, '--plan'], sqliteEnv(fresh));
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^plan for production "plan-me" \(create; nothing has been changed\): .*scenes 2 created/,
    );
    assert.equal(existsSync(join(dir, 'not-yet')), false, 'neither the file nor its folder was created');
    const empty = join(dir, 'empty.db');
    await writeFile(empty, '');
    const again = await prodgraphHere(['import', docFile, '--plan', '--json'], sqliteEnv(empty));
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).production.created, true);
    assert.equal((await stat(empty)).size, 0, 'an empty file stays empty');
  });

  it("a negative --scale is refused in the flag's words, not as an ambiguous argument", async () => {
    const r = await prodgraphHere(['generate', '--scale', '-1'], sqliteEnv(join(dir, 'unused.db')));
    assert.equal(r.stderr, 'prodgraph: --scale: "-1" is not a number greater than 0 and at most 10\n');
  });

  it('a reader that closes the pipe early ends the command quietly (generate | head, import --json | head)', async () => {
    const CLI = await cliArgv();
    const closeEarly = (args: string[], env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env } });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        // like `head -c 1`: read the first bytes, then close the pipe
        child.stdout.once('data', () => child.stdout.destroy());
        child.once('exit', (code) => resolve({ code, stderr }));
      });
    const docFile = join(dir, 'piped.json');
    await writeFile(docFile, JSON.stringify(smallProduction('piped')));
    const db = join(dir, 'piped.db');
    // the two processes are independent: they run side by side
    const generating = closeEarly(['generate', '--scale', '0.02'], sqliteEnv(join(dir, 'unused.db')));
    const imported = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [...CLI, 'import', docFile, '--json'], {
        env: { ...process.env, ...sqliteEnv(db) },
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.stdout.destroy(); // the reader is gone before anything is printed
      child.once('exit', (code) => resolve({ code, stderr }));
    });
    assert.deepEqual(await generating, { code: 0, stderr: '' });
    assert.deepEqual(imported, { code: 0, stderr: '' });
    const listed = await prodgraphHere(['keys', 'list', '--production', 'piped'], sqliteEnv(db));
    assert.equal(listed.code, 0, 'the import itself was done');
  });

  it('demo --serve on a taken port says which and mints nothing; serve says the same', async () => {
    const held = await heldPort();
    try {
      const db = join(dir, 'busy.db');
      const demo = await prodgraphHere(['demo', '--serve', '--port', String(held.port)], sqliteEnv(db));
      assert.equal(demo.code, 1);
      assert.equal(demo.stdout, '', 'no key printed');
      assert.match(
        demo.stderr,
        new RegExp(`^prodgraph: port ${held.port} on 127\\.0\\.0\\.1 is already in use.*--port N or PORT=N`),
      );
      assert.equal(existsSync(db), false, 'nothing was written');
      const serve = await prodgraphHere(['serve', '--port', String(held.port)], sqliteEnv(db));
      assert.equal(serve.code, 1);
      assert.match(
        serve.stderr,
        new RegExp(`^prodgraph: port ${held.port} on 127\\.0\\.0\\.1 is already in use`),
      );
    } finally {
      await held.release();
    }
  });

  it('demo --serve (npm start) loads, prints the keys, serves on that port, and keeps the keys in sight: printed again once ready, no line per request after them', async () => {
    const free = await heldPort();
    await free.release();
    const env: NodeJS.ProcessEnv = { ...process.env, ...sqliteEnv(join(dir, 'start.db')) };
    delete env.PRODGRAPH_LOG_LEVEL;
    delete env.LOG_LEVEL;
    const child = spawn(
      process.execPath,
      [...(await cliArgv()), 'demo', '--serve', '--port', String(free.port)],
      {
        env,
      },
    );
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      const token = await new Promise<string>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${stdout}`)));
        child.stdout.on('data', () => {
          const m = /production-wide .*: (pgk_\S+)/.exec(stdout);
          if (m && stdout.includes('API reference')) resolve(m[1]!);
        });
      });
      await until(
        'the keys printed again once the server is ready',
        () =>
          stdout.trimEnd().endsWith('(sign in with the coordinator key)') && /^Ready: serving /m.test(stdout),
      );
      // ready means ready: the first request is answered
      for (let i = 0; i < 5; i++) {
        const answer = await fetch(`http://127.0.0.1:${free.port}/api/v1/production`, {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(answer.status, 200);
      }
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    // everything the process wrote, shutdown included: the keys are still the last thing on screen
    const lines = stdout.trimEnd().split('\n');
    const ready = lines.findIndex((l) => l.startsWith('Ready: serving '));
    assert.ok(ready > 0, stdout);
    const after = lines.slice(ready);
    assert.match(after.join('\n'), /production-wide .*: pgk_/);
    assert.match(after.join('\n'), /coordinator, for the console .*: pgk_/);
    assert.ok(lines.at(-1)!.startsWith('Console: '), `the last line: ${lines.at(-1)}`);
    assert.equal(lines.filter((l) => l.includes('request completed')).length, 0, 'no line per request');
  });
});
