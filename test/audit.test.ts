import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { inWriteTransaction } from '../src/db/write-hooks.js';
import { operatorActor } from '../src/auth/audit-actor.js';
import { recordAudit } from '../src/auth/audit-record.js';
import { pruneAudit } from '../src/modules/audit/retention.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { prodgraphHere } from './support/cli.js';
import { call, get } from './support/http.js';
import { rpc } from './support/mcp.js';
import { multipart } from './support/multipart.js';
import { importRoundTrip, png, submit, type Refs } from './support/round-trip.js';
import { dbArgOf } from './support/server-process.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const A = '/api/v1/admin';

for (const dialect of DIALECTS) {
  describe(`the audit trail [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let admin: string;
    let vendor: string;
    let reader: string;
    let cli: Record<string, string>;
    /** Every token, ticket and secret the test handles: none may appear in an audit row. */
    const secrets: string[] = [];
    const ids: Record<string, number> = {};

    const post = (url: string, body?: unknown, token = admin) =>
      call(env.app, 'POST', `${A}${url}`, { token, body });
    const created = async (url: string, body?: unknown, status = 201) => {
      const r = await post(url, body);
      assert.equal(r.status, status, `${url}: ${r.text}`);
      return r.body;
    };
    const rows = async () => env.handle.db.selectFrom('audit_events').selectAll().orderBy('id').execute();
    const audit = async (query = '', token = admin) => get(env.app, `${A}/audit${query}`, token);
    const prefixOf = (token: string) => token.split('_').slice(0, 2).join('_');
    /** Adds one PNG to the package of "dl-plates" as the admin; its media id. */
    const addPackageFile = async (filename: string, colour: string): Promise<number> => {
      const form = multipart([
        { name: 'files', filename, content: await png(colour), contentType: 'image/png' },
      ]);
      const up = await env.app.inject({
        method: 'POST',
        url: `${A}/deliveries/${refs['dl-plates']}/files`,
        payload: form.payload,
        headers: { ...form.headers, authorization: `Bearer ${admin}` },
      });
      assert.equal(up.statusCode, 201, up.body);
      return JSON.parse(up.body).files[0].id as number;
    };

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      admin = await env.mint({ production: 'film', scopes: ['admin'], label: 'Audit desk' });
      vendor = await env.mint({
        production: 'film',
        engagement: 'eng-pix',
        scopes: ['read', 'submit:turnover'],
        label: 'Pixelworks pipeline',
      });
      reader = await env.mint({ production: 'film', scopes: ['read', 'write'] });
      secrets.push(admin, vendor, reader);
      cli = { PRODGRAPH_DB: dbArgOf(env), PRODGRAPH_MEDIA: env.config.mediaDir };
    });
    after(() => env.close());

    it('records every admin action in the transaction of the change, naming the key, address and engagement', async () => {
      const org = await created('/organisations', { name: 'Lumen FX' });
      ids.org = org.id;
      const eng = await created('/engagements', { ref: 'eng-lumen', organisation_id: org.id });
      ids.engagement = eng.id;
      await created(`/engagements/${eng.id}/archive`, undefined, 200);
      const grant = await created('/grants', {
        engagement_id: refs['eng-pix'],
        kind: 'scene',
        node_id: refs.sc3,
      });
      ids.grant = grant.id;
      await created(`/grants/${grant.id}/revoke`, undefined, 200);
      const key = await created('/keys', { label: 'Pix render farm', engagement_id: refs['eng-pix'] });
      ids.key = key.id;
      secrets.push(key.token);
      await created(`/keys/${key.id}/revoke`, undefined, 200);
      const hook = await created('/webhooks', { url: 'https://hooks.example/prodgraph?token=s3cr3t-in-url' });
      secrets.push(hook.secret, 's3cr3t-in-url');
      for (const verb of ['pause', 'resume', 'remove'])
        await created(`/webhooks/${hook.id}/${verb}`, undefined, 200);

      // a package file, sent, downloaded by the vendor, then taken out
      ids.file = await addPackageFile('plate.png', '#246');
      await created(`/deliveries/${refs['dl-plates']}/status`, { status: 'sent' }, 200);
      assert.equal((await get(env.app, `/api/v1/media/${ids.file}/content`, vendor)).status, 200);
      // out of reach and missing alike: a refusal, recorded
      assert.equal((await get(env.app, `/api/v1/media/99999999/content`, vendor)).status, 404);
      // a production-wide key's download is not a vendor's: not recorded
      assert.equal((await get(env.app, `/api/v1/media/${ids.file}/content`, reader)).status, 200);

      // the vendor submits work; the production reviews it
      const sent = await submit(env, vendor, refs['dl-plates']!, [
        { name: 'title', value: 'Comp v1' },
        { name: 'files', filename: 'comp.png', content: await png('#135'), contentType: 'image/png' },
      ]);
      assert.equal(sent.statusCode, 200, sent.body);
      ids.submission = JSON.parse(sent.body).id;
      await created(
        `/submissions/${ids.submission}/review`,
        { decision: 'changes_requested', note: 'Grain' },
        200,
      );
      await created(`/deliveries/${refs['dl-plates']}/files/${ids.file}/remove`, undefined, 200);

      const all = await rows();
      const actions = all.map((r) => r.action);
      assert.deepEqual(actions, [
        'organisation.add',
        'engagement.create',
        'engagement.archive',
        'grant.create',
        'grant.revoke',
        'key.mint',
        'key.revoke',
        'webhook.create',
        'webhook.pause',
        'webhook.resume',
        'webhook.remove',
        'package.file_add',
        'delivery.status',
        'package.download',
        'media.download',
        'submission.review',
        'package.file_remove',
      ]);
      const byAdmin = all.filter((r) => !r.action.endsWith('download'));
      for (const r of byAdmin) {
        assert.equal(r.key_prefix, prefixOf(admin), r.action);
        assert.equal(r.key_label, 'Audit desk');
        assert.equal(r.actor, 'Audit desk');
        assert.equal(r.ip, '127.0.0.1');
        assert.equal(r.outcome, 'ok');
        assert.match(r.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.ok(Math.abs(Date.parse(r.at) - Date.now()) < 120_000, 'the database clock, not another epoch');
      }
      const find = (action: string) => all.find((r) => r.action === action)!;
      assert.equal(find('grant.create').object_type, 'grant');
      assert.equal(find('grant.create').object_id, ids.grant);
      assert.equal(find('grant.create').engagement_id, refs['eng-pix']);
      assert.match(find('grant.create').summary, /scene .* for engagement "eng-pix"/);
      assert.equal(find('key.mint').engagement_id, refs['eng-pix']);
      assert.equal(find('engagement.create').engagement_id, ids.engagement);
      assert.equal(find('submission.review').engagement_id, refs['eng-pix']);
      const download = find('package.download');
      assert.equal(download.key_prefix, prefixOf(vendor));
      assert.equal(download.key_label, 'Pixelworks pipeline');
      assert.equal(download.engagement_id, refs['eng-pix']);
      assert.equal(download.object_id, ids.file);
      assert.equal(find('media.download').outcome, 'refused');
      assert.equal(find('media.download').object_id, 99999999);
    });

    it('never holds a token, a ticket, a secret or a URL’s query', async () => {
      const ticket = await get(env.app, '/api/v1/media-ticket', reader);
      secrets.push(ticket.body.ticket);
      const dump = JSON.stringify(await rows());
      for (const s of secrets)
        assert.equal(dump.includes(s), false, `found ${s.slice(0, 12)}… in the audit trail`);
      // nor the secret half of a key, in case only it leaked
      for (const s of secrets.filter((t) => t.startsWith('pgk_')))
        assert.equal(dump.includes(s.slice(prefixOf(s).length + 1)), false);
    });

    it('a change that rolls back leaves no audit row', async () => {
      const before = (await rows()).length;
      // a refused write: the same grant twice is 409 the second time
      await created('/grants', { engagement_id: refs['eng-pix'], kind: 'scene', node_id: refs.sc3 });
      const again = await post('/grants', {
        engagement_id: refs['eng-pix'],
        kind: 'scene',
        node_id: refs.sc3,
      });
      assert.equal(again.status, 409);
      assert.equal((await rows()).length, before + 1);
      // a write whose row is written and whose transaction then fails after it
      const production = await env.handle.db
        .selectFrom('productions')
        .where('code', '=', 'film')
        .select('id')
        .executeTakeFirstOrThrow();
      await assert.rejects(
        inWriteTransaction(
          env.handle.db,
          { productionId: production.id, actor: 'test' },
          undefined,
          async (trx) => {
            await recordAudit(trx, {
              productionId: production.id,
              actor: operatorActor('test'),
              action: 'organisation.add',
              summary: 'never committed',
            });
            assert.equal(
              (
                await trx
                  .selectFrom('audit_events')
                  .where('summary', '=', 'never committed')
                  .selectAll()
                  .execute()
              ).length,
              1,
              'written inside the transaction',
            );
            throw new Error('the change fails after its audit row');
          },
        ),
        /fails after/,
      );
      assert.equal((await rows()).length, before + 1);
      assert.equal(
        (await rows()).some((r) => r.summary === 'never committed'),
        false,
      );
    });

    it('GET /admin/audit filters by actor, engagement, action, object and time, newest first, in keyset pages', async () => {
      const all = (await audit()).body as any[];
      assert.ok(all.length >= 18);
      assert.ok(all[0].id > all[1].id, 'newest first');
      const grants = (await audit('?action=grant')).body as any[];
      assert.deepEqual(new Set(grants.map((r) => r.action)), new Set(['grant.create', 'grant.revoke']));
      const vendorRows = (await audit(`?actor=${prefixOf(vendor)}`)).body as any[];
      assert.deepEqual(vendorRows.map((r) => r.action).sort(), ['media.download', 'package.download']);
      const pix = (await audit(`?engagement_id=${refs['eng-pix']}`)).body as any[];
      for (const a of ['grant.create', 'key.mint', 'package.download', 'submission.review'])
        assert.ok(
          pix.some((r) => r.action === a),
          a,
        );
      const key = (await audit(`?object_type=key&object_id=${ids.key}`)).body as any[];
      assert.deepEqual(
        key.map((r) => r.action),
        ['key.revoke', 'key.mint'],
      );
      const future = (
        await audit(`?since=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`)
      ).body;
      assert.deepEqual(future, []);
      const past = (await audit('?until=2001-01-01T00:00:00Z')).body;
      assert.deepEqual(past, []);
      // pages of 5 walk the whole list once
      const seen: number[] = [];
      let url: string | null = '?limit=5';
      while (url) {
        const r = await audit(url);
        seen.push(...(r.body as any[]).map((e) => e.id));
        const link = r.headers.link as string | undefined;
        url = link ? new URL(/<([^>]+)>/.exec(link)![1]!, 'http://x').search : null;
      }
      assert.deepEqual(
        seen,
        all.map((r) => r.id),
      );
      // refusals: no admin scope, a vendor key, a bad filter
      assert.equal((await audit('', reader)).status, 403);
      assert.equal((await audit('', vendor)).status, 403);
      assert.equal((await audit('?since=yesterday')).status, 422);
      assert.equal((await audit('?action=DROP%20TABLE')).status, 422);
    });

    it('the CLI records its key mints and revocations under the operator, and exports the trail', async () => {
      const minted = await prodgraphHere(
        ['keys', 'mint', '--production', 'film', '--label', 'ops key', '--json'],
        cli,
      );
      assert.equal(minted.code, 0, minted.stderr);
      const key = JSON.parse(minted.stdout);
      secrets.push(key.token);
      const revoked = await prodgraphHere(['keys', 'revoke', key.token], cli);
      assert.equal(revoked.code, 0, revoked.stderr);
      const mine = (await rows()).filter((r) => r.object_type === 'key' && r.object_id === key.id);
      assert.deepEqual(
        mine.map((r) => r.action),
        ['key.mint', 'key.revoke'],
      );
      for (const r of mine) {
        assert.match(r.actor, /via prodgraph CLI$/);
        assert.equal(r.key_prefix, null);
        assert.equal(r.ip, null);
      }
      assert.equal(JSON.stringify(mine).includes(key.token), false);

      const jsonl = await prodgraphHere(['audit', 'export', '--production', 'film', '--since', '1d'], cli);
      assert.equal(jsonl.code, 0, jsonl.stderr);
      const lines = jsonl.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(lines.length, (await rows()).length);
      assert.ok(lines[0].id < lines[1].id, 'oldest first');
      assert.equal(lines.at(-1).action, 'key.revoke');
      const csv = await prodgraphHere(
        [
          'audit',
          'export',
          '--production',
          'film',
          '--since',
          '2000-01-01',
          '--format',
          'csv',
          '--action',
          'webhook',
        ],
        cli,
      );
      assert.equal(csv.code, 0, csv.stderr);
      const [header, ...body] = csv.stdout.trim().split('\n');
      assert.match(header!, /^id,at,actor,person_id,key_id,key_prefix,key_label,engagement_id,action,/);
      assert.deepEqual(
        body.map((l) => /,(webhook\.[a-z]+),/.exec(l)?.[1]),
        ['webhook.create', 'webhook.pause', 'webhook.resume', 'webhook.remove'],
      );
      // people's text never runs as a spreadsheet formula, and a comma or a quote stays in its cell
      const production = await env.handle.db
        .selectFrom('productions')
        .where('code', '=', 'film')
        .select('id')
        .executeTakeFirstOrThrow();
      await recordAudit(env.handle.db, {
        productionId: production.id,
        actor: operatorActor('=HYPERLINK("http://evil.example")'),
        action: 'organisation.add',
        summary: 'added "Frame, Ltd"',
      });
      const hostile = await prodgraphHere(
        [
          'audit',
          'export',
          '--production',
          'film',
          '--since',
          '1d',
          '--format',
          'csv',
          '--action',
          'organisation',
        ],
        cli,
      );
      const last = hostile.stdout.trim().split('\n').at(-1)!;
      assert.match(last, /,"'=HYPERLINK\(""http:\/\/evil\.example""\)",/);
      assert.match(last, /,"added ""Frame, Ltd""",/);
      const bad = await prodgraphHere(['audit', 'export', '--production', 'film', '--since', 'then'], cli);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /--since: "then"/);
    });

    it('prunes rows past the retention in bounded batches, by the database clock', async () => {
      const production = await env.handle.db
        .selectFrom('productions')
        .where('code', '=', 'film')
        .select('id')
        .executeTakeFirstOrThrow();
      for (let i = 0; i < 5; i++)
        await recordAudit(env.handle.db, {
          productionId: production.id,
          actor: operatorActor('old'),
          action: 'organisation.add',
          summary: `old ${i}`,
        });
      await env.handle.db
        .updateTable('audit_events')
        .set({ at: '2020-01-01T00:00:00.000Z' })
        .where('summary', 'like', 'old %')
        .execute();
      const before = (await rows()).length;
      assert.equal(await pruneAudit(env.handle.db, 400, 2), 5, 'three batches of at most two');
      const left = await rows();
      assert.equal(left.length, before - 5);
      assert.equal(
        left.some((r) => r.summary.startsWith('old ')),
        false,
      );
    });

    it('records a rotation of the signing secret under the operator, in every production', async () => {
      const before = (await rows()).length;
      const rotated = await prodgraphHere(['secrets', 'rotate', '--json'], cli);
      assert.equal(rotated.code, 0, rotated.stderr);
      const { generation } = JSON.parse(rotated.stdout);
      const added = (await rows()).slice(before);
      const productions = await env.handle.db.selectFrom('productions').select('id').orderBy('id').execute();
      assert.deepEqual(
        added.map((r) => [r.action, r.production_id, r.object_type, r.object_id, r.outcome]),
        productions.map((p) => ['signing_secret.rotate', p.id, 'signing_secret', generation, 'ok']),
      );
      for (const r of added) assert.match(r.actor, /via prodgraph CLI$/);
      const stored = await env.handle.db.selectFrom('signing_secrets').select('secret').execute();
      const text = JSON.stringify(added);
      for (const { secret } of stored) assert.equal(text.includes(secret), false, 'never the secret');
    });

    it("records a vendor's range outside the file as refused, and a range within it as a download", async () => {
      const file = await addPackageFile('grade.png', '#468');
      const fetch = (range: string) =>
        call(env.app, 'GET', `/api/v1/media/${file}/content`, { token: vendor, headers: { range } });
      assert.equal((await fetch('bytes=0-9')).status, 206);
      assert.equal((await fetch('bytes=999999999-')).status, 416);
      const recorded = (await rows()).filter((r) => r.object_id === file && r.action === 'package.download');
      assert.deepEqual(
        recorded.map((r) => r.outcome),
        ['ok', 'refused'],
      );
      assert.match(recorded[1]!.summary, /range asked for lies outside the file/);
      await created(`/deliveries/${refs['dl-plates']}/files/${file}/remove`, undefined, 200);
    });

    it('records a known key turned away from a route (403), once a minute per key and route; a 401 belongs to no one', async () => {
      const before = (await rows()).length;
      assert.equal((await get(env.app, '/api/v1/scenes', vendor)).status, 403);
      assert.equal((await get(env.app, '/api/v1/scenes', vendor)).status, 403);
      assert.equal((await get(env.app, `${A}/keys`, reader)).status, 403);
      assert.equal(
        (await get(env.app, '/api/v1/scenes', 'pgk_nobody_000000000000000000000000000000')).status,
        401,
      );
      const added = (await rows()).slice(before);
      assert.deepEqual(
        added.map((r) => [r.action, r.outcome, r.object_type, r.key_prefix]),
        [
          ['access.refused', 'refused', 'route', prefixOf(vendor)],
          ['access.refused', 'refused', 'route', prefixOf(reader)],
        ],
      );
      assert.match(added[0]!.summary, /^GET \/api\/v1\/scenes: this key is bound to a vendor engagement/);
      assert.equal(added[0]!.engagement_id, refs['eng-pix']);
      assert.match(added[1]!.summary, /^GET \/api\/v1\/admin\/keys: this key lacks the "admin" scope/);
      const listed = await audit('?action=access.refused');
      assert.equal(listed.status, 200);
      const listedIds = listed.body.map((r: { id: number }) => r.id);
      for (const r of added) assert.ok(listedIds.includes(r.id), 'GET /admin/audit lists it');
    });

    it('records a known key turned away from an MCP tool, as its REST twin would be', async () => {
      const before = (await rows()).length;
      const answer = await rpc(env.app, vendor, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_asset', arguments: { id: 1 } },
      });
      // answered as its REST twin's 403, and recorded as the twin's refusal would be
      assert.equal(answer.status, 403);
      assert.equal((answer.body as { code: string }).code, 'engagement_door');
      const added = (await rows()).slice(before);
      assert.deepEqual(
        added.map((r) => [r.action, r.outcome, r.object_type, r.key_prefix]),
        [['access.refused', 'refused', 'route', prefixOf(vendor)]],
      );
      assert.match(added[0]!.summary, /^MCP tool get_asset: this key is bound to a vendor engagement/);
    });
  });
}
