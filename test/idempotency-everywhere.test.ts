import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { queueMoveTask } from '../src/modules/storage-tasks/service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { multipart } from './support/multipart.js';
import { ALL_SCOPES, png, roundTripDocument } from './support/round-trip.js';

/** The four write POSTs that bypassed Idempotency-Key before: a retry replays, a changed body is 422. */
for (const dialect of DIALECTS) {
  describe(`Idempotency-Key on every write POST [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Record<string, number>;
    let key: string;
    let vendor: string;
    let pid: number;

    before(async () => {
      env = await createEnv(dialect);
      const film = await env.import(await roundTripDocument('film', env.dir), env.dir);
      refs = film.refs;
      pid = film.production.id;
      key = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      vendor = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
    });
    after(() => env.close());

    const count = async (table: 'work_items' | 'storage_events' | 'media' | 'activity') =>
      Number(
        (
          await env.handle.db
            .selectFrom(table)
            .select((e) => e.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const json = (url: string, idem: string, body: unknown, token = key) =>
      env.app.inject({
        method: 'POST',
        url,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': idem,
        },
        payload: JSON.stringify(body),
      });

    /** The same request twice: one write, the second answer the first's, marked replayed. */
    async function replays(
      send: () => Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>,
      table: Parameters<typeof count>[0],
    ) {
      const first = await send();
      assert.ok(first.statusCode < 300, first.body);
      const after1 = await count(table);
      const again = await send();
      assert.equal(again.statusCode, first.statusCode);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(JSON.parse(again.body), JSON.parse(first.body));
      assert.equal(await count(table), after1, 'the retry wrote nothing');
    }

    it('turnover submissions: a retried upload is one submission; other files under the same key are 422', async () => {
      const idem = randomUUID();
      const image = await png('#321');
      const form = (content: Buffer) =>
        multipart([
          { name: 'title', value: 'retry me' },
          { name: 'files', filename: 'a.png', content },
        ]);
      const send = (content = image) => {
        const { payload, headers } = form(content);
        return env.app.inject({
          method: 'POST',
          url: `/api/v1/turnovers/${refs['dl-plates']}/submissions`,
          headers: { ...headers, authorization: `Bearer ${vendor}`, 'idempotency-key': idem },
          payload,
        });
      };
      await replays(() => send(), 'work_items');
      const media = await count('media');
      const other = await send(await png('#999'));
      assert.equal(other.statusCode, 422);
      assert.equal(JSON.parse(other.body).code, 'idempotency_key_reused');
      assert.equal(await count('media'), media, 'the refused retry stored nothing');
    });

    it('storage events, media proxies and task acknowledgements replay', async () => {
      const events = {
        filespace: 'film-fs',
        events: [
          {
            event_type: 'create',
            path: 'idem/a.exr',
            source: 'scan',
            dedupe_key: 'idem-a',
            detected_at: '2026-05-01T10:00:00Z',
          },
        ],
      };
      await replays(() => json('/api/v1/storage/events', 'events-key', events), 'storage_events');
      const jpeg = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#888' } })
        .jpeg()
        .toBuffer();
      const proxy = { filespace: 'film-fs', path: 'idem/a.exr', bytes: jpeg.toString('base64') };
      await replays(() => json('/api/v1/storage/media-proxy', 'proxy-key', proxy), 'media');
      const other = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#111' } })
        .jpeg()
        .toBuffer();
      const changed = await json('/api/v1/storage/media-proxy', 'proxy-key', {
        ...proxy,
        bytes: other.toString('base64'),
      });
      assert.equal(changed.statusCode, 422);
      const task = await queueMoveTask(env.handle.db, {
        productionId: pid,
        from: 'idem/a.exr',
        to: 'idem/c.exr',
        approvedBy: 'Ada Admin',
      });
      await replays(
        () => json('/api/v1/storage/tasks/ack', 'ack-key', { task_id: task.id, ok: true, note: 'moved' }),
        'activity',
      );
    });
  });
}
