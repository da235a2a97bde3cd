import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ApiError,
  conditionalGet,
  createClient,
  followChanges,
  paginate,
  pages,
  verifyWebhook,
  type Change,
  type ProdgraphClient,
} from '../clients/typescript/src/index.js';
import { buildApp, type App } from '../src/app.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Receiver, until } from './support/receiver.js';
import { ALL_SCOPES, importRoundTrip, png, type Refs } from './support/round-trip.js';

/*
 * The TypeScript client (clients/typescript) against a real server listening on a port, on
 * SQLite and PostgreSQL: a typed call per tag, the vendor clamp as the client sees it, and every
 * helper. Retries through a faulty network are in client-typescript-retry.test.ts.
 */

for (const dialect of DIALECTS) {
  describe(`TypeScript client [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let baseUrl: string;
    let pw: ProdgraphClient;
    let vendor: ProdgraphClient;
    let admin: ProdgraphClient;
    let worker: App;
    const receivers: Receiver[] = [];

    before(async () => {
      env = await createEnv(dialect, {
        PRODGRAPH_WEBHOOK_RETRY_BASE_MS: '50',
        PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32',
      });
      refs = await importRoundTrip(env, 'film');
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      baseUrl = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
      const key = async (input: Parameters<TestEnv['mint']>[0]) => env.mint(input);
      pw = createClient({ baseUrl, key: await key({ production: 'film', scopes: [...ALL_SCOPES] }) });
      vendor = createClient({
        baseUrl,
        key: await key({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' }),
      });
      admin = createClient({ baseUrl, key: await key({ production: 'film', scopes: ['admin'] }) });
      worker = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        webhooks: true,
      });
      await worker.ready();
    });
    after(async () => {
      await worker.close();
      for (const r of receivers) await r.close();
      await env.close();
    });

    it('answers a typed call on every tag, each with its data or its refusal', async () => {
      const health = await pw.GET('/healthz');
      assert.deepEqual(health.data, { status: 'ok' });
      const production = await pw.GET('/api/v1/production');
      assert.equal(typeof production.data?.title, 'string');
      const departments = await pw.GET('/api/v1/departments');
      const slug = departments.data![0]!.slug;
      const department = await pw.GET('/api/v1/departments/{slug}', { params: { path: { slug } } });
      assert.equal(department.data?.slug, slug);
      const scenes = await pw.GET('/api/v1/scenes');
      assert.deepEqual(
        scenes.data?.map((s) => s.number),
        ['1', '2', '3'],
      );
      const asset = await pw.GET('/api/v1/assets/{node_id}', {
        params: { path: { node_id: refs['co-coat']! } },
      });
      assert.equal(asset.data?.label, 'Mara coat');
      for (const path of [
        '/api/v1/schedule',
        '/api/v1/deliveries',
        '/api/v1/approvals',
        '/api/v1/script-changes',
        '/api/v1/activity',
        '/api/v1/jobs',
        '/api/v1/people',
        '/api/v1/storage/tasks',
        '/api/v1/admin/engagements',
      ] as const) {
        const client = path.startsWith('/api/v1/admin') ? admin : pw;
        const r = await client.GET(path);
        assert.equal(r.response.status, 200, `${path}: ${JSON.stringify(r.error)}`);
        assert.ok(r.data !== undefined, path);
      }
      const changes = await pw.GET('/api/v1/changes', { params: { query: { limit: 5 } } });
      assert.ok(typeof changes.data?.next_cursor === 'string');
      // the ticket route takes the ticket, not the key; its named path parameter holds slashes
      const ticket = await pw.GET('/api/v1/media-ticket');
      const released = asset.data.versions.find((v) => 'media_path' in v && v.media_path);
      const mediaPath = (released as { media_path: string }).media_path;
      const file = await pw.GET('/media/{path}', {
        params: { path: { path: mediaPath.slice('/media/'.length) }, query: { t: ticket.data!.ticket } },
        parseAs: 'arrayBuffer',
      });
      assert.equal(file.response.status, 200);
      assert.equal(file.response.headers.get('content-type'), 'image/png');
      // MCP, the agents' door, is one typed POST too
      const mcp = await pw.POST('/mcp', {
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        headers: { accept: 'application/json' },
      });
      assert.equal(mcp.response.status, 200);
      // vision: a look brief from a released still; no generation provider here, so the mint is 503
      const brief = await pw.POST('/api/v1/vision/looks/{version_id}/brief', {
        params: { path: { version_id: refs['v-coat-1']! } },
      });
      assert.equal(brief.response.status, 200, JSON.stringify(brief.error));
      assert.ok(brief.data?.palette.length);
      const mint = await pw.POST('/api/v1/vision/session-token', { body: {} });
      assert.equal(mint.response.status, 503);
      assert.equal(mint.error?.code, 'unavailable');
      // a refusal is typed too: the 422 names its field
      const bad = await pw.GET('/api/v1/assets', { params: { query: { limit: 0 } } });
      assert.equal(bad.response.status, 422);
      assert.deepEqual(bad.error, { detail: 'limit: must be >= 1', code: 'invalid_field', field: 'limit' });
    });

    it('sees the vendor clamp: its bundles and media, nothing else, and out of reach is 404', async () => {
      const listed = await vendor.GET('/api/v1/bundles');
      assert.deepEqual(
        listed.data?.map((b) => [b.kind, b.node_id]),
        [
          ['scene', refs.sc1],
          ['character', refs['ch-mara']],
        ],
      );
      const mine = await vendor.GET('/api/v1/bundles/scene/{node_id}', {
        params: { path: { node_id: refs.sc1! } },
      });
      assert.equal(mine.data?.scene.node_id, refs.sc1);
      const other = await vendor.GET('/api/v1/bundles/scene/{node_id}', {
        params: { path: { node_id: refs.sc3! } },
      });
      assert.equal(other.response.status, 404);
      assert.equal(other.error?.code, 'not_found');
      const door = await vendor.GET('/api/v1/scenes');
      assert.equal(door.response.status, 403);
      assert.equal(door.error?.code, 'engagement_door');
      const mediaId = mine
        .data!.assets.flatMap((a) => a.released_versions)
        .find((v) => v.media_id)!.media_id!;
      const bytes = await vendor.GET('/api/v1/media/{id}/content', {
        params: { path: { id: mediaId } },
        parseAs: 'blob',
      });
      assert.ok((bytes.data as Blob).size > 0);
      const turnovers = await vendor.GET('/api/v1/turnovers');
      assert.deepEqual(
        turnovers.data?.map((t) => t.id),
        [refs['dl-plates']],
      );
      const money = await vendor.GET('/api/v1/purchase-orders');
      assert.equal(money.response.status, 200);
    });

    it('writes with an Idempotency-Key of its own: JSON, and files as multipart', async () => {
      const made = await pw.POST('/api/v1/assets', { body: { label: 'Client-made prop', kind: 'prop' } });
      assert.equal(made.response.status, 201, JSON.stringify(made.error));
      const id = made.data!.node_id;
      const note = await pw.POST('/api/v1/assets/{node_id}/notes', {
        params: { path: { node_id: id } },
        body: { text: 'From the TypeScript client' },
      });
      assert.equal(note.response.status, 201, JSON.stringify(note.error));
      // the same key sent again is the same write: answered again, written once
      const key = 'client-test-version-1';
      const file = new File([await png('#0a0')], 'prop-v1.png', { type: 'image/png' });
      const land = () =>
        pw.POST('/api/v1/assets/{node_id}/versions', {
          params: { path: { node_id: id }, header: { 'idempotency-key': key } },
          body: { file, note: 'first look' },
        });
      const first = await land();
      assert.equal(first.response.status, 201, JSON.stringify(first.error));
      const again = await land();
      assert.equal(again.response.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.data?.id, first.data?.id);
      const versions = await pw.GET('/api/v1/assets/{node_id}', { params: { path: { node_id: id } } });
      assert.equal(versions.data?.versions.length, 1);
      // a vendor submits files on its turnover
      const submitted = await vendor.POST('/api/v1/turnovers/{id}/submissions', {
        params: { path: { id: refs['dl-plates']! } },
        body: { files: [new File([await png('#f0f')], 'plate-001.png')], title: 'Plates, first pass' },
      });
      assert.equal(submitted.response.status, 200, JSON.stringify(submitted.error));
      assert.deepEqual(
        submitted.data?.media.map((m) => m.label),
        ['plate-001.png'],
      );
    });

    it('paginate and pages: every row once, in order, following Link with the same filters', async () => {
      const whole = (await pw.GET('/api/v1/assets', { params: { query: { department: 'costume' } } })).data!;
      const rows = [];
      for await (const a of paginate(pw, '/api/v1/assets', {
        params: { query: { department: 'costume', limit: 2 } },
      })) {
        rows.push(a);
      }
      assert.deepEqual(rows, whole);
      const sizes = [];
      for await (const page of pages(pw, '/api/v1/assets', {
        params: { query: { department: 'costume', limit: 2 } },
      })) {
        sizes.push(page.length);
      }
      assert.equal(sizes.length, Math.ceil(whole.length / 2));
      const bundles = [];
      for await (const b of paginate(vendor, '/api/v1/bundles', { params: { query: { limit: 1 } } }))
        bundles.push(b);
      assert.equal(bundles.length, 2);
      await assert.rejects(
        async () => {
          for await (const _ of paginate(vendor, '/api/v1/assets')) void _;
        },
        (err: ApiError) => err instanceof ApiError && err.status === 403 && err.code === 'engagement_door',
      );
    });

    it('conditionalGet: the ETag kept, 304 answered with the kept bundle, a change fetched anew', async () => {
      const init = { params: { path: { node_id: refs.sc1! } } };
      const first = await conditionalGet(pw, '/api/v1/bundles/scene/{node_id}', init);
      assert.equal(first.status, 200);
      assert.equal(first.etag, first.data.etag);
      const second = await conditionalGet(pw, '/api/v1/bundles/scene/{node_id}', init);
      assert.equal(second.status, 304);
      assert.deepEqual(second.data, first.data);
      // the scene bundle shows the approvals on its assets: deciding one changes it
      const decided = await pw.POST('/api/v1/approvals/{approval_id}/decide', {
        params: { path: { approval_id: refs['ap-ward']! } },
        body: { decision: 'approved', decided_by: 'Ben Okafor' },
      });
      assert.equal(decided.response.status, 200, JSON.stringify(decided.error));
      const third = await conditionalGet(pw, '/api/v1/bundles/scene/{node_id}', init);
      assert.equal(third.status, 200);
      assert.notEqual(third.etag, first.etag);
      assert.equal(third.data.approvals.find((a) => a.id === refs['ap-ward'])?.status, 'approved');
      // out of reach is an ApiError, exactly as for an unknown id
      await assert.rejects(
        conditionalGet(vendor, '/api/v1/bundles/character/{node_id}', {
          params: { path: { node_id: refs['ch-jon']! } },
        }),
        (err: ApiError) => err.status === 404 && err.code === 'not_found',
      );
    });

    it('followChanges: a write made while it waits arrives; the cursor resumes exactly there', async () => {
      const abort = new AbortController();
      const feed = followChanges(pw, { after: 'now', wait: 5, signal: abort.signal });
      const seen: Change[] = [];
      let reading = true;
      const read = (async () => {
        for await (const change of feed) {
          seen.push(change);
          if (change.kind === 'asset' && change.op === 'created') abort.abort();
        }
        reading = false;
      })();
      // writes until the feed has seen one: its first poll may be answered after a write, and
      // `now` then starts past that write
      const made: number[] = [];
      while (reading) {
        await new Promise((r) => setTimeout(r, 250));
        const r = await pw.POST('/api/v1/assets', { body: { label: `Made while following ${made.length}` } });
        assert.equal(r.response.status, 201);
        made.push(r.data!.node_id);
      }
      await read;
      const created = seen.find((c) => c.kind === 'asset' && c.op === 'created');
      assert.ok(created && made.includes(created.id), 'a write made while it waited');
      assert.equal(feed.cursor, created.cursor);
      // resuming from the kept cursor answers only what came after it
      const later = await pw.POST('/api/v1/assets', { body: { label: 'Made after' } });
      const resumed = new AbortController();
      const again = followChanges(pw, { after: feed.cursor, wait: 1, signal: resumed.signal });
      for await (const change of again) {
        assert.notEqual(change.cursor, created.cursor);
        if (change.kind === 'asset' && change.id === later.data!.node_id) resumed.abort();
      }
      // a cursor the feed never issued is a refusal, not a retry loop
      await assert.rejects(
        async () => {
          for await (const _ of followChanges(pw, { after: 'not-a-cursor' })) void _;
        },
        (err: ApiError) => err.status === 422 && err.field === 'after',
      );
    });

    it('verifyWebhook: a real delivery verifies; a changed body, another secret or an old time does not', async () => {
      const rx = await new Receiver().start();
      receivers.push(rx);
      const hook = await admin.POST('/api/v1/admin/webhooks', { body: { url: rx.url } });
      assert.equal(hook.response.status, 201, JSON.stringify(hook.error));
      const secret = hook.data!.secret!;
      await pw.POST('/api/v1/assets', { body: { label: 'Heard by a webhook' } });
      await until('a delivery', () => rx.got.length > 0);
      const { body, headers } = rx.got[0]!;
      const header = headers['prodgraph-signature'] as string;
      assert.equal(await verifyWebhook(secret, header, body), true);
      assert.equal(await verifyWebhook(secret, header, new TextEncoder().encode(body)), true);
      assert.equal(await verifyWebhook(secret, header, body.replace('}', ' }')), false);
      assert.equal(await verifyWebhook(`${secret}x`, header, body), false);
      assert.equal(await verifyWebhook(secret, header, body, { now: Date.now() + 301_000 }), false);
      assert.equal(await verifyWebhook(secret, undefined, body), false);
      assert.equal(await verifyWebhook(secret, 't=1,v1=zz', body), false);
    });
  });
}
