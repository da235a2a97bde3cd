import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import { parseDbTarget } from '../src/config.js';
import { migrationState, openDatabase } from '../src/db/index.js';
import { migrations } from '../src/db/migrations/index.js';
import { clock, freeDisk, type Finding } from '../src/ops/checks.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallDisk } from './support/disk.js';
import { smallProduction } from './support/fixtures.js';
import { cliTargets, prodgraphHere } from './support/cli.js';
import { dbArgOf, startServer } from './support/server-process.js';
import { jpeg, upload } from './support/write.js';

/*
 * `prodgraph doctor` checks an installation and says what to fix; `serve` says at start what it
 * serves, and warns when that is nothing or the media folder is the wrong one.
 */

for (const dialect of DIALECTS) {
  describe(`prodgraph doctor and the start-up report [${dialect}]`, () => {
    let env: TestEnv;
    let cli: { PRODGRAPH_DB: string; PRODGRAPH_MEDIA: string };

    before(async () => {
      env = await createEnv(dialect);
      const coat = (await env.import(smallProduction('healthy'))).refs['co-coat']!;
      const key = await env.mint({ production: 'healthy' });
      const r = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
        token: key,
        files: [{ name: 'v.jpg', bytes: await jpeg(3), type: 'image/jpeg' }],
      });
      assert.equal(r.status, 201);
      cli = { PRODGRAPH_DB: dbArgOf(env), PRODGRAPH_MEDIA: env.config.mediaDir };
    });
    const place = cliTargets().find((t) => t.name === dialect)!;
    after(async () => {
      await place.teardown();
      await env.close();
    });

    const findingsOf = (stdout: string) => (JSON.parse(stdout) as { findings: Finding[] }).findings;

    it('a healthy installation: every check ok, exit 0', async () => {
      const r = await prodgraphHere(['doctor'], cli);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      for (const check of [
        'config',
        'database',
        'productions',
        'media files',
        'clock',
        'ticket signing',
        'media folder',
        'media disk',
      ])
        assert.match(r.stdout, new RegExp(`^ok +${check}: `, 'm'), `${check}\n${r.stdout}`);
      assert.match(r.stdout, /productions: healthy/);
      assert.match(r.stdout, /media files: 1 of the files the database names present/);
      assert.ok(!r.stdout.includes('password'), r.stdout);
    });

    it('the wrong media folder: files missing (fail, exit 1) and a folder others can read (warn), each with a fix', async () => {
      const wrong = join(env.dir, 'wrong-media');
      await mkdir(wrong, { mode: 0o755 });
      await chmod(wrong, 0o755);
      const r = await prodgraphHere(['doctor', '--json'], { ...cli, PRODGRAPH_MEDIA: wrong });
      assert.equal(r.code, 1);
      const { findings } = JSON.parse(r.stdout) as {
        findings: Array<{ check: string; level: string; fix?: string }>;
      };
      const of = (check: string) => findings.find((f) => f.check === check)!;
      assert.equal(of('media files').level, 'fail');
      assert.match(of('media files').fix!, /--media/);
      assert.equal(of('media folder').level, 'warn');
      assert.match(of('media folder').fix!, /chmod 700/);
      await rm(wrong, { recursive: true });
    });

    it('a database that is not there or not prodgraph: fail, saying which and what to do', async () => {
      const missing = await prodgraphHere(['doctor'], { ...cli, PRODGRAPH_DB: join(env.dir, 'typo.db') });
      assert.equal(missing.code, 1);
      assert.match(missing.stdout, /^fail +database: SQLite .*typo\.db/m);
      assert.match(missing.stdout, /fix: check --db/);
    });

    it('a configuration that does not parse: one fail finding naming it, with the fix, exit 1', async () => {
      const bad = await prodgraphHere(['doctor', '--json'], {
        ...cli,
        PRODGRAPH_DB: 'mysql://db.internal/prod',
      });
      assert.equal(bad.code, 1);
      const [finding, ...rest] = findingsOf(bad.stdout);
      assert.deepEqual(rest, [], 'nothing else is checked without a configuration');
      assert.equal(finding!.check, 'config');
      assert.equal(finding!.level, 'fail');
      assert.match(finding!.detail, /^database: unsupported URL scheme in "mysql:\/\/db\.internal\/prod"/);
      assert.match(finding!.fix!, /PRODGRAPH_\*/);
      // an environment variable of the server's, in words
      const saved = process.env.PRODGRAPH_LOG_LEVEL;
      process.env.PRODGRAPH_LOG_LEVEL = 'loud';
      try {
        const words = await prodgraphHere(['doctor'], cli);
        assert.equal(words.code, 1);
        assert.match(words.stdout, /^fail +config: PRODGRAPH_LOG_LEVEL: "loud" is not one of /m);
        assert.match(words.stdout, /^ +fix: correct the flag or PRODGRAPH_\* environment variable it names/m);
        assert.equal(words.stderr, 'prodgraph: doctor found problems (fail above)\n');
      } finally {
        if (saved === undefined) delete process.env.PRODGRAPH_LOG_LEVEL;
        else process.env.PRODGRAPH_LOG_LEVEL = saved;
      }
    });

    it('a database at an older migration: warn, saying how to migrate it; doctor migrates nothing', async () => {
      const db = await place.db(env.dir, 'older');
      const handle = openDatabase(parseDbTarget(db), { create: true, poolSize: 1 });
      try {
        const schema =
          dialect === 'postgres'
            ? (await sql<{ s: string }>`select current_schema() as s`.execute(handle.db)).rows[0]!.s
            : undefined;
        const names = Object.keys(migrations).sort();
        const { error } = await new Migrator({
          db: handle.db,
          provider: { getMigrations: async () => migrations },
          allowUnorderedMigrations: true,
          ...(schema ? { migrationTableSchema: schema } : {}),
        }).migrateTo(names.at(-2)!);
        assert.equal(error, undefined);
        assert.equal(await migrationState(handle.db, dialect), 'behind');

        const r = await prodgraphHere(['doctor', '--json'], { ...cli, PRODGRAPH_DB: db });
        assert.equal(r.code, 0, r.stdout);
        const found = findingsOf(r.stdout).find((f) => f.check === 'database')!;
        assert.equal(found.level, 'warn');
        assert.match(found.detail, /: migrations to run$/);
        assert.match(found.fix!, /start the server \(or any command\) once: it migrates the database/);
        assert.equal(await migrationState(handle.db, dialect), 'behind', 'doctor migrated the database');
      } finally {
        await handle.close();
      }
    });

    it('a disk low on room: warn, saying writes will be refused; the threshold decides', async () => {
      const low = await freeDisk(env.config, { bytes: Number.MAX_SAFE_INTEGER, share: 0 });
      assert.deepEqual(
        low.map((f) => f.check),
        dialect === 'sqlite' ? ['database disk', 'media disk'] : ['media disk'],
      );
      for (const f of low) {
        assert.equal(f.level, 'warn');
        assert.match(f.detail, /^\d+\.\d GB free \(\d+%\) at \//);
        assert.match(f.fix!, /writes are refused \(507\) once it is full/);
      }
      for (const f of await freeDisk(env.config, { bytes: 0, share: 0 })) assert.equal(f.level, 'ok');
      // a share of the disk as well as a size
      for (const f of await freeDisk(env.config, { bytes: 0, share: 1.01 })) assert.equal(f.level, 'warn');
    });

    it('a clock behind the newest change, or apart from the database server: warn, with the fix', async () => {
      assert.equal((await clock(env.handle.db, dialect)).level, 'ok');
      // this machine's clock an hour behind: the changes it wrote are dated in its future
      const behind = await clock(env.handle.db, dialect, Date.now() - 3600_000);
      assert.equal(behind.level, 'warn');
      assert.match(behind.detail, /^the newest change is dated \S+, \d+ s ahead of this clock$/);
      assert.match(behind.fix!, /NTP/);
      if (dialect === 'postgres') {
        // ten minutes ahead: no change is dated after it, but PostgreSQL's clock disagrees
        const ahead = await clock(env.handle.db, dialect, Date.now() + 600_000);
        assert.equal(ahead.level, 'warn');
        assert.match(ahead.detail, /^\d+ s apart from the database server's$/);
        assert.match(ahead.fix!, /NTP on both machines/);
      }
    });

    it('serve logs one line of what it serves, and warns of no production and of the wrong media folder', async () => {
      const server = await startServer(env);
      server.child.kill('SIGTERM');
      await server.exited;
      const line = server.output.find((l) => l.includes('serving 1 production'));
      assert.ok(line, server.output.join('\n'));
      assert.match(line, /serving 1 production \(healthy\) from (SQLite|PostgreSQL) /);
      assert.ok(!server.output.some((l) => l.includes('lacks')));

      const wrong = join(env.dir, 'elsewhere');
      const third = await startServer({ ...env, config: { ...env.config, mediaDir: wrong } });
      third.child.kill('SIGTERM');
      await third.exited;
      assert.ok(
        third.output.some((l) => l.includes('the media folder lacks 1 of 1 files')),
        third.output.join('\n'),
      );
      await rm(wrong, { recursive: true, force: true });
    });
  });
}

describe('prodgraph doctor on a nearly full disk [sqlite]', () => {
  let env: TestEnv;
  let disk: Awaited<ReturnType<typeof smallDisk>>;
  before(async () => {
    disk = await smallDisk();
    env = await createEnv('sqlite');
    await env.import(smallProduction('cramped'));
  });
  after(async () => {
    await disk?.unmount();
    await env.close();
  });

  it('a media folder on a 4 MiB disk: warn, exit 0', async (t) => {
    if (!disk) return t.skip('cannot mount a tmpfs here (not root on Linux)');
    const media = join(disk.path, 'media');
    await mkdir(media, { mode: 0o700 });
    const r = await prodgraphHere(['doctor', '--json'], {
      PRODGRAPH_DB: env.config.db.dialect === 'sqlite' ? env.config.db.path : '',
      PRODGRAPH_MEDIA: media,
    });
    assert.equal(r.code, 0, r.stdout);
    const findings = (JSON.parse(r.stdout) as { findings: Finding[] }).findings;
    const found = findings.find((f) => f.check === 'media disk')!;
    assert.equal(found.level, 'warn');
    assert.match(found.detail, new RegExp(`^0\\.0 GB free \\(\\d+%\\) at ${media}$`));
    assert.equal(findings.find((f) => f.check === 'database disk')!.level, 'ok');
  });
});

for (const dialect of DIALECTS) {
  describe(`the start-up report of an empty database [${dialect}]`, () => {
    let env: TestEnv;
    before(async () => {
      env = await createEnv(dialect);
    });
    after(() => env.close());

    it('warns that the database holds no production, and never shows a PostgreSQL password', async () => {
      // PostgreSQL: the URL carries a password (the test server trusts its clients, so any will do)
      const password = `pw-${randomBytes(6).toString('hex')}`;
      let db: string | undefined;
      if (dialect === 'postgres') {
        const url = new URL(dbArgOf(env));
        url.password = password;
        db = url.toString();
      }
      const server = await startServer(env, {}, db ? { db } : {});
      server.child.kill('SIGTERM');
      await server.exited;
      const start = server.output.find((l) => l.includes('serving 0 productions'));
      assert.ok(start, server.output.join('\n'));
      assert.match(start, dialect === 'postgres' ? /from PostgreSQL postgres(ql)?:\/\// : /from SQLite \//);
      assert.ok(
        server.output.some((l) => l.includes('the database holds no production')),
        server.output.join('\n'),
      );
      if (dialect === 'postgres') {
        assert.match(start, /:\*\*\*@/, 'the password is shown masked');
        for (const line of server.output) assert.ok(!line.includes(password), `the password in: ${line}`);
      }
    });
  });
}
