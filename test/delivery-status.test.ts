import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DELIVERY_TRANSITIONS } from '../src/domain/delivery-status.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../src/domain/vocabulary.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { importRoundTrip, type Refs } from './support/round-trip.js';
import { activitySince, changesSince, mark, nothingSince } from './support/write-trail.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const A = '/api/v1';

for (const dialect of DIALECTS) {
  describe(`a delivery's status moves by the transition table [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let admin: string;
    let wide: string;
    let id: number;
    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      admin = await env.mint({ production: 'film', scopes: ['admin'], label: 'Turnover desk' });
      wide = await env.mint({ production: 'film', scopes: ['read'] });
      id = refs['dl-other']!;
    });
    after(() => env.close());

    const move = (
      status: string,
      extra: Record<string, unknown> = {},
      headers: Record<string, string> = {},
      to = id,
    ) =>
      call(env.app, 'POST', `${A}/admin/deliveries/${to}/status`, {
        token: admin,
        body: { status, ...extra },
        headers,
      });
    /** Puts the delivery in a status behind the API's back, to try a move from there. */
    const place = (status: DeliveryStatus) =>
      env.handle.db.updateTable('deliveries').set({ status }).where('id', '=', id).execute();

    it('walks draft → ready → sent → ready (recall) → sent → accepted, stamping sent_at on each send', async () => {
      const m = await mark(env);
      assert.equal((await move('ready')).body.status, 'ready');
      const sent = await move('sent', { note: 'Plates are on the server' });
      assert.equal(sent.status, 200, sent.text);
      assert.equal(sent.body.status, 'sent');
      assert.ok(sent.body.sent_at);
      assert.equal(sent.body.updated_at, sent.body.sent_at, 'the answer shows the write’s own stamp');
      // the answer is the row GET /deliveries shows
      const listed = (await get(env.app, `${A}/deliveries`, wide)).body.find((d: any) => d.id === id);
      assert.deepEqual(sent.body, listed);
      const recalled = await move('ready', { note: 'wrong reel' });
      assert.equal(recalled.body.status, 'ready');
      assert.equal(recalled.body.sent_at, sent.body.sent_at, 'a recall keeps the last send');
      const old = '2020-01-01T00:00:00.000Z';
      await env.handle.db.updateTable('deliveries').set({ sent_at: old }).where('id', '=', id).execute();
      const resent = await move('sent');
      assert.ok(resent.body.sent_at > old, 'each send stamps sent_at anew');
      const accepted = await move('accepted');
      assert.equal(accepted.body.status, 'accepted');
      assert.deepEqual(await changesSince(env, m), Array(5).fill(`delivery:${id}:updated`));
      assert.deepEqual(await activitySince(env, m), [
        'marked ready: delivery "Cape comps": draft → ready',
        'sent: delivery "Cape comps": ready → sent — Plates are on the server',
        'recalled: delivery "Cape comps": sent → ready — wrong reel',
        'sent: delivery "Cape comps": ready → sent',
        'accepted: delivery "Cape comps": sent → accepted',
      ]);
    });

    it('allows exactly the moves of the table; any other is 409 invalid_transition naming the allowed ones', async () => {
      for (const from of DELIVERY_STATUSES) {
        for (const to of DELIVERY_STATUSES) {
          await place(from);
          const m = await mark(env);
          const r = await move(to);
          if (from === to) {
            assert.equal(r.status, 200, `${from} → ${to}`);
            assert.equal(r.body.status, from);
            assert.ok(await nothingSince(env, m), `${from} → ${to} records nothing`);
          } else if (DELIVERY_TRANSITIONS[from].includes(to)) {
            assert.equal(r.status, 200, `${from} → ${to}: ${r.text}`);
            assert.equal(r.body.status, to);
            assert.deepEqual(await changesSince(env, m), [`delivery:${id}:updated`]);
          } else {
            assert.equal(r.status, 409, `${from} → ${to}`);
            assert.equal(r.body.code, 'invalid_transition');
            const next = DELIVERY_TRANSITIONS[from];
            assert.equal(
              r.body.detail,
              `status: a ${from} delivery cannot become ${to}; ${
                next.length
                  ? `from ${from} it may become ${next.join(', ')}`
                  : `${from} is final: it may become nothing else`
              }`,
            );
            assert.ok(await nothingSince(env, m), `${from} → ${to} records nothing`);
          }
        }
      }
      // the table as the issue states it
      assert.deepEqual(DELIVERY_TRANSITIONS, {
        draft: ['ready', 'blocked'],
        ready: ['sent', 'blocked'],
        sent: ['accepted', 'ready', 'blocked'],
        blocked: ['draft', 'ready', 'sent'],
        accepted: [],
      });
    });

    it('is documented in the OpenAPI description, with every refusal', async () => {
      const doc = JSON.parse((await env.app.inject({ url: `${A}/openapi.json` })).body);
      const op = doc.paths['/api/v1/admin/deliveries/{id}/status'].post;
      assert.equal(op.operationId, 'setDeliveryStatus');
      for (const line of [
        '`draft` → `ready`, `blocked`',
        '`sent` → `accepted`, `ready`, `blocked`',
        '`accepted` → nothing (final)',
      ])
        assert.ok(op.description.includes(line), line);
      for (const status of ['200', '401', '403', '404', '409', '422'])
        assert.ok(op.responses[status], status);
    });

    it('answers 404 for an unknown or retired delivery and 422 for a bad body, writing nothing', async () => {
      await place('draft');
      const m = await mark(env);
      assert.deepEqual((await move('ready', {}, {}, 999_999)).body, {
        detail: 'delivery not found',
        code: 'not_found',
      });
      await env.handle.db
        .updateTable('deliveries')
        .set({ retired_at: new Date().toISOString() })
        .where('id', '=', refs['dl-int']!)
        .execute();
      assert.equal((await move('ready', {}, {}, refs['dl-int'])).status, 404);
      for (const body of [
        { status: 'shipped' },
        {},
        { status: 'ready', extra: 1 },
        { status: 'ready', note: 7 },
      ]) {
        const r = await call(env.app, 'POST', `${A}/admin/deliveries/${id}/status`, { token: admin, body });
        assert.equal(r.status, 422, JSON.stringify(body));
        assert.equal(r.body.code, 'invalid_field');
      }
      assert.ok(await nothingSince(env, m));
      assert.equal(
        (
          await call(env.app, 'POST', `${A}/admin/deliveries/${id}/status`, {
            token: wide,
            body: { status: 'ready' },
          })
        ).status,
        403,
      );
      assert.ok(await nothingSince(env, m));
    });

    it('replays an Idempotency-Key (the same answer, no second move) and refuses it for another body', async () => {
      await place('draft');
      const key = { 'idempotency-key': 'status-once' };
      const first = await move('ready', {}, key);
      assert.equal(first.status, 200);
      const m = await mark(env);
      const again = await move('ready', {}, key);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body, first.body);
      assert.ok(await nothingSince(env, m));
      assert.equal((await move('blocked', {}, key)).body.code, 'idempotency_key_reused');
    });
  });
}
