import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliTargets, prodgraphHere } from './support/cli.js';
import { smallProduction } from './support/fixtures.js';

for (const target of cliTargets()) {
  describe(`prodgraph people [${target.name}]`, () => {
    let dir: string;
    let env: Record<string, string>;
    const cli = (...args: string[]) => prodgraphHere(args, env);

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'prodgraph-people-'));
      env = { PRODGRAPH_DB: await target.db(dir, 'p'), PRODGRAPH_MEDIA: join(dir, 'media') };
      const doc = join(dir, 'prod.json');
      await writeFile(doc, JSON.stringify(smallProduction('signin')));
      assert.equal((await cli('import', doc)).code, 0);
    });
    after(async () => {
      await target.teardown();
      await rm(dir, { recursive: true, force: true });
    });

    it('allows, lists and revokes who may sign in to the console', async () => {
      const allowed = await cli(
        'people',
        'allow',
        'Ana@Studio.test',
        '--production',
        'signin',
        '--role',
        'coordinator',
      );
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.match(allowed.stdout, /allowed ana@studio\.test as coordinator/);
      const again = await cli(
        'people',
        'allow',
        'ana@studio.test',
        '--production',
        'signin',
        '--role',
        'admin',
        '--json',
      );
      assert.equal(JSON.parse(again.stdout).role, 'admin', 'allowing again changes the role');
      const listed = JSON.parse((await cli('people', 'list', '--production', 'signin', '--json')).stdout);
      assert.deepEqual(
        listed.map((p: { email: string; role: string }) => [p.email, p.role]),
        [['ana@studio.test', 'admin']],
      );
      assert.equal((await cli('people', 'revoke', 'ana@studio.test', '--production', 'signin')).code, 0);
      assert.deepEqual(
        JSON.parse((await cli('people', 'list', '--production', 'signin', '--json')).stdout),
        [],
      );
      const exported = await cli(
        'audit',
        'export',
        '--production',
        'signin',
        '--since',
        '1d',
        '--action',
        'sign_in_person',
      );
      assert.equal(exported.code, 0, exported.stderr);
      const rows = exported.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        rows.map((r) => r.action),
        ['sign_in_person.allow', 'sign_in_person.change', 'sign_in_person.withdraw'],
      );
      for (const r of rows) {
        assert.match(r.actor, /via prodgraph CLI$/, 'the operator');
        assert.equal(r.object_type, 'sign_in_person');
        assert.equal(r.ip, null);
      }
      assert.match(rows[1].summary, /ana@studio\.test as admin .*was coordinator/);
    });

    it('refuses a bad role, email, person or production with a clear message and changes nothing', async () => {
      const cases: Array<[string[], RegExp]> = [
        [
          ['x@studio.test', '--production', 'signin', '--role', 'owner'],
          /role "owner" is not one of admin, coordinator, viewer/,
        ],
        [
          ['not-an-email', '--production', 'signin', '--role', 'viewer'],
          /"not-an-email" is not an email address/,
        ],
        [
          ['x@studio.test', '--production', 'signin', '--role', 'viewer', '--person', 'p-nobody'],
          /no person "p-nobody"/,
        ],
        [['x@studio.test', '--production', 'nope', '--role', 'viewer'], /no production with code "nope"/],
      ];
      for (const [args, message] of cases) {
        const r = await cli('people', 'allow', ...args);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, message);
      }
      assert.deepEqual(
        JSON.parse((await cli('people', 'list', '--production', 'signin', '--json')).stdout),
        [],
      );
      assert.notEqual((await cli('people', 'revoke', 'x@studio.test', '--production', 'signin')).code, 0);
    });
  });
}
