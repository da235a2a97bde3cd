import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { verifySignature } from '../src/modules/webhooks/signature.js';
import { cliTargets, prodgraphHere } from './support/cli.js';
import { smallProduction } from './support/fixtures.js';
import { Receiver, until } from './support/receiver.js';

for (const target of cliTargets()) {
  describe(`prodgraph webhooks [${target.name}]`, () => {
    let dir: string;
    let env: Record<string, string>;
    let server: App;
    let rx: Receiver;
    const cli = (...args: string[]) => prodgraphHere(args, env);

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'prodgraph-webhooks-'));
      env = { PRODGRAPH_DB: await target.db(dir, 'w'), PRODGRAPH_MEDIA: join(dir, 'media') };
      const doc = join(dir, 'prod.json');
      await writeFile(doc, JSON.stringify(smallProduction('hooked')));
      assert.equal((await cli('import', doc)).code, 0);
      rx = await new Receiver().start();
      // the server delivers; the CLI only manages subscriptions
      server = await buildApp({
        // the receiver listens on loopback, which webhooks reach only when allowed
        config: loadConfig(
          { db: env.PRODGRAPH_DB, media: env.PRODGRAPH_MEDIA },
          { PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32' },
        ),
        logger: false,
        webhooks: true,
      });
      await server.ready();
    });
    after(async () => {
      await server.close();
      await rx.close();
      await target.teardown();
      await rm(dir, { recursive: true, force: true });
    });

    it('explains each subcommand', async () => {
      for (const sub of ['add', 'list', 'pause', 'resume', 'remove', 'deliveries']) {
        const r = await cli('webhooks', sub, '--help');
        assert.match(r.stdout, new RegExp(`^usage: prodgraph webhooks ${sub}`));
      }
      assert.match((await cli('webhooks')).stdout, /^usage: prodgraph webhooks/);
    });

    it('adds a subscription, prints its secret once, and the server delivers a change the CLI made', async () => {
      const added = await cli(
        'webhooks',
        'add',
        rx.url,
        '--production',
        'hooked',
        '--kinds',
        'engagement',
        '--json',
      );
      assert.equal(added.code, 0, added.stderr);
      const sub = JSON.parse(added.stdout) as { id: number; secret: string; kinds: string[] };
      assert.deepEqual(sub.kinds, ['engagement']);
      const listed = await cli('webhooks', 'list', '--production', 'hooked');
      assert.match(listed.stdout, /^ID\tURL\tKINDS\tACTIVE/);
      assert.ok(listed.stdout.includes(rx.url));
      assert.ok(!listed.stdout.includes(sub.secret), 'the secret is never listed');
      const engaged = await cli(
        'engagements',
        'add',
        '--production',
        'hooked',
        '--ref',
        'eng-cli',
        '--organisation',
        'org-hal',
        '--json',
      );
      assert.equal(engaged.code, 0, engaged.stderr);
      await until('the delivery', () => rx.got.length === 1);
      const got = rx.got[0]!;
      assert.deepEqual(
        { kind: got.json.change.kind, id: got.json.change.id, op: got.json.change.op },
        { kind: 'engagement', id: JSON.parse(engaged.stdout).id, op: 'created' },
      );
      assert.ok(verifySignature(sub.secret, got.headers['prodgraph-signature'] as string, got.body));
      await until('the log', async () =>
        (
          await cli('webhooks', 'deliveries', String(sub.id), '--production', 'hooked', '--json')
        ).stdout.includes('true'),
      );
      const log = await cli('webhooks', 'deliveries', String(sub.id), '--production', 'hooked');
      assert.match(log.stdout, /^AT\tCHANGE\tATTEMPT\tDELIVERED\tSTATUS/);
      assert.match(log.stdout, /engagement:\d+:created\t1\tyes\t200/);

      const human = await cli('webhooks', 'add', rx.url, '--production', 'hooked');
      assert.match(
        human.stdout,
        /^added webhook \d+ to http:\/\/127\.0\.0\.1:\d+\/hook\nsigning secret \(shown once\): whsec_/,
      );
    });

    it('adds a webhook for an engagement (--engagement REF); the list names it', async () => {
      const added = await cli(
        'webhooks',
        'add',
        rx.url,
        '--production',
        'hooked',
        '--engagement',
        'eng-cli',
        '--kinds',
        'delivery,grant',
        '--json',
      );
      assert.equal(added.code, 0, added.stderr);
      const sub = JSON.parse(added.stdout) as { id: number; engagement_id: number };
      const listed = JSON.parse((await cli('webhooks', 'list', '--production', 'hooked', '--json')).stdout);
      const row = listed.find((w: { id: number }) => w.id === sub.id);
      assert.equal(typeof row.engagement_id, 'number');
      assert.equal(row.engagement_id, sub.engagement_id);
      const table = (await cli('webhooks', 'list', '--production', 'hooked')).stdout;
      assert.match(table, /\tENGAGEMENT\n/);
      assert.match(table, new RegExp(`\\t${sub.engagement_id}\\n`));
      const unknown = await cli('webhooks', 'add', rx.url, '--production', 'hooked', '--engagement', 'nope');
      assert.notEqual(unknown.code, 0);
      assert.match(unknown.stderr, /no engagement "nope"/);
      const beyond = await cli(
        'webhooks',
        'add',
        rx.url,
        '--production',
        'hooked',
        '--engagement',
        'eng-cli',
        '--kinds',
        'asset',
      );
      assert.notEqual(beyond.code, 0);
      assert.match(beyond.stderr, /--kinds/);
      await cli('webhooks', 'remove', String(sub.id), '--production', 'hooked');
    });

    it('pauses, resumes and removes; one-line errors for what it cannot do', async () => {
      const added = JSON.parse(
        (await cli('webhooks', 'add', rx.url, '--production', 'hooked', '--json')).stdout,
      );
      const id = String(added.id);
      assert.match((await cli('webhooks', 'pause', id, '--production', 'hooked')).stdout, /^paused webhook/);
      const paused = JSON.parse((await cli('webhooks', 'list', '--production', 'hooked', '--json')).stdout);
      assert.equal(paused.find((w: { id: number }) => w.id === added.id).active, false);
      assert.match(
        (await cli('webhooks', 'resume', id, '--production', 'hooked')).stdout,
        /^resumed webhook/,
      );
      assert.match(
        (await cli('webhooks', 'remove', id, '--production', 'hooked')).stdout,
        /^removed webhook/,
      );
      for (const [args, message] of [
        [['webhooks', 'remove', id, '--production', 'hooked'], 'webhook not found'],
        [['webhooks', 'remove', 'x', '--production', 'hooked'], '"x" is not a webhook id'],
        [['webhooks', 'add', 'ftp://x.test/', '--production', 'hooked'], 'URL: must be http:// or https://'],
        [
          ['webhooks', 'add', rx.url, '--production', 'hooked', '--kinds', 'assets'],
          '--kinds: unknown kind "assets"',
        ],
        [['webhooks', 'add', rx.url, '--production', 'nope'], 'no production with code "nope"'],
        [['webhooks', 'add', '--production', 'hooked'], 'webhooks add needs a URL'],
      ] as const) {
        const r = await cli(...args);
        assert.equal(r.code, 1, args.join(' '));
        assert.ok(r.stderr.includes(message), `${args.join(' ')}: ${r.stderr}`);
      }
    });
  });
}
