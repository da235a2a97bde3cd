import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { prodgraphHere } from './support/cli.js';
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
    after(() => env.close());

    it('a healthy installation: every check ok, exit 0', async () => {
      const r = await prodgraphHere(['doctor'], cli);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      for (const check of [
        'config',
        'database',
        'productions',
        'media files',
        'clock',
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
