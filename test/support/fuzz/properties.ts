import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildApp, type App } from '../../../src/app.js';
import { mediaPathOf } from '../../../src/media/paths.js';
import { issueTicket } from '../../../src/modules/media-ticket/ticket.js';
import type { Principal } from '../../../src/auth/principal.js';
import type { TestEnv } from '../env.js';
import { multipart } from '../multipart.js';
import type { Snapshot } from './state.js';
import { until, type Receiver } from '../receiver.js';
import type { Keys } from './requests.js';
import { webhookTarget } from './targets.js';
import { hostileString, percentText } from './values.js';

/*
 * Properties of hostile clients beyond "never a 5xx": each is a fast-check property over
 * generated requests, with a check to run once they have all been sent where it needs one.
 */

/** The key-usage write (once a minute per key, from whichever request comes then): not the request's own work. */
const KEY_USAGE = /^update "api_keys" set "last_used_at"/;

const withoutDate = (headers: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'date'));

/**
 * For a vendor key, `GET /api/v1/media/{id}` (and its `/content`) of an object out of its reach
 * answers exactly as for an id that does not exist: status, body, headers (the date apart) and
 * the statements run (so timing cannot tell them apart either). Each run asks a missing id, then
 * another id, and compares. Every existing media id is an example, so each is compared once.
 */
export async function mediaLookalikes(env: TestEnv, vendor: string) {
  const ids = (await env.handle.db.selectFrom('media').select('id').orderBy('id').execute()).map((r) => r.id);
  const max = Math.max(0, ...ids);
  const existing = new Set(ids);
  const ask = async (url: string) => {
    env.queries.count = 0;
    env.queries.sql.length = 0;
    const r = await env.app.inject({ url, headers: { authorization: `Bearer ${vendor}` } });
    const sql = env.queries.sql.filter((q) => !KEY_USAGE.test(q));
    return { status: r.statusCode, body: r.body, headers: withoutDate(r.headers), sql };
  };
  let hidden = 0;
  const pair = fc.tuple(
    fc.oneof(fc.constantFrom(...ids), fc.integer({ min: 1, max: max + 3 })),
    fc.integer({ min: max + 10, max: 2_147_483_647 }),
  );
  const property = fc.asyncProperty(pair, async ([id, missingId]) => {
    for (const suffix of ['', '/content']) {
      const missing = await ask(`/api/v1/media/${missingId}${suffix}`);
      assert.equal(missing.status, 404, missing.body);
      const r = await ask(`/api/v1/media/${id}${suffix}`);
      if (r.status === 200) continue;
      if (existing.has(id) && suffix === '') hidden++;
      const what = `media ${id}${suffix} (out of reach, or missing) against ${missingId}`;
      assert.deepEqual(
        { status: r.status, body: r.body, headers: r.headers },
        { status: missing.status, body: missing.body, headers: missing.headers },
        what,
      );
      assert.deepEqual(r.sql, missing.sql, `${what}: other statements`);
    }
  });
  return { property, examples: ids.map((id) => [id, max + 10] as [number, number]), hidden: () => hidden };
}

/** Bogus ways to present a ticket, made from a valid one: forged, cut, expired, misnamed, misplaced. */
function bogusTickets(good: string, expired: string, path: string): fc.Arbitrary<string> {
  const alphabet = 'AZaz09-_.';
  const flipped = fc
    .tuple(fc.nat({ max: good.length - 1 }), fc.constantFrom(...alphabet))
    .filter(([i, c]) => good[i] !== c)
    .map(([i, c]) => `t=${good.slice(0, i)}${c}${good.slice(i + 1)}`);
  const cut = fc.nat({ max: good.length - 1 }).map((n) => `t=${good.slice(0, n)}`);
  const [pid, kid] = good.split('.');
  const misnamed = fc
    .constantFrom('t[]', 't%5B%5D', 't.x', 'T', 'tt', 't%20', 'ticket', '%00t')
    .map((name) => `${name}=${good}`);
  return fc.oneof(
    flipped.map((q) => `${path}?${q}`),
    cut.map((q) => `${path}?${q}`),
    fc.constant(`${path}?t=${good}x`),
    fc.constant(`${path}?t=${expired}`),
    fc.constant(`${path}?t=${Number(pid) + 1}.${kid}.${good.split('.').slice(2).join('.')}`),
    fc.constant(`${path}?t=${good}&t=${good}`),
    fc.constant(path),
    fc.constant(`${path};t=${good}`),
    fc.constant(`/media/${good}/${path.split('/').pop()}`),
    misnamed.map((q) => `${path}?${q}`),
    hostileString.filter((s) => s.length < 2000).map((s) => `${path}?t=${percentText(s)}`),
  );
}

/**
 * The off-plane file route behind a limit of 3 a window: bogus tickets are refused 401 with no
 * RateLimit-* header (never counted), and afterwards a valid ticket from the same address is
 * served with its whole allowance left.
 */
export async function ticketProperty(env: TestEnv, key: string) {
  const limited: App = await buildApp({
    config: { ...env.config, rateLimit: { max: 3, windowMs: 600_000 } },
    database: env.handle,
    store: env.store,
    logger: false,
  });
  await limited.ready();
  const ticketOf = async () =>
    (
      await limited.inject({ url: '/api/v1/media-ticket', headers: { authorization: `Bearer ${key}` } })
    ).json().ticket as string;
  const good = await ticketOf();
  const [pid, kid] = good.split('.').map(Number);
  const principal = { productionId: pid, keyId: kid } as unknown as Principal;
  const expired = issueTicket(limited.ctx, principal, Date.now() - 3600_000).ticket;
  // an image the fuzz seeded (the first version's, which nothing replaces)
  const stored = await env.handle.db
    .selectFrom('media')
    .where('content_type', '=', 'image/jpeg')
    .select('storage_key')
    .orderBy('id')
    .executeTakeFirstOrThrow();
  const path = mediaPathOf(stored.storage_key)!;
  const property = fc.asyncProperty(bogusTickets(good, expired, path), async (url) => {
    const r = await limited.inject({ url });
    // 401; 400 for a URL that cannot be read (a percent-escape that is not UTF-8), 422 for `t` given twice
    const codes: Record<number, string> = {
      400: 'malformed_request',
      401: 'unauthorized',
      422: 'invalid_field',
    };
    assert.ok(r.statusCode in codes, `${url}: ${r.statusCode} ${r.body.slice(0, 200)}`);
    assert.equal(r.json().code, codes[r.statusCode], url);
    const counted = Object.keys(r.headers).filter((h) => /^(x-)?ratelimit|^retry-after$/.test(h));
    assert.deepEqual(counted, [], `${url}: a refusal was counted`);
  });
  const afterwards = async () => {
    const r = await limited.inject({ url: `${path}?t=${good}` });
    assert.equal(r.statusCode, 200, `the valid ticket after the bogus ones: ${r.body.slice(0, 200)}`);
    assert.equal(r.headers['ratelimit-limit'], '3');
    assert.equal(r.headers['ratelimit-remaining'], '2', 'a bogus ticket was counted against the key');
  };
  return { property, afterwards, close: () => limited.close() };
}

interface DeliveryRow {
  delivered: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/**
 * Webhook targets in every spelling: one at the metadata service (or another address never
 * reached) is refused with 422 and nothing stored; a loopback one is subscribed, and once a
 * delivery worker has tried every such subscription, none reached the loopback receiver and
 * each attempt says the address may not be reached (no connection was made: 0 ms).
 */
export function webhookProperty(env: TestEnv, keys: Keys, receiver: Receiver) {
  const admin = { authorization: `Bearer ${keys.admin}` };
  const api = (method: 'GET' | 'POST', url: string, body?: unknown) =>
    env.app.inject({
      method,
      url,
      headers: body === undefined ? admin : { ...admin, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const count = async () =>
    Number(
      (
        await env.handle.db
          .selectFrom('webhooks')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirst()
      )?.n ?? 0,
    );
  const mine: number[] = [];
  const property = fc.asyncProperty(webhookTarget(Number(new URL(receiver.url).port)), async (target) => {
    const before = await count();
    const r = await api('POST', '/api/v1/admin/webhooks', { url: target.url });
    if (target.never) {
      assert.equal(r.statusCode, 422, `${target.url}: ${r.body}`);
      assert.equal(r.json().code, 'invalid_field');
      assert.match(r.json().detail, /^url: .*never reach/, target.url);
      assert.equal(await count(), before, `${target.url} was stored`);
    } else {
      assert.equal(r.statusCode, 201, `${target.url}: ${r.body}`);
      mine.push(r.json().id as number);
    }
  });
  const afterwards = async () => {
    if (mine.length === 0) return;
    // the fuzz's other subscriptions (public names among them) are not this property's to deliver
    for (const w of (await api('GET', '/api/v1/admin/webhooks')).json<Array<{ id: number }>>()) {
      if (!mine.includes(w.id)) await api('POST', `/api/v1/admin/webhooks/${w.id}/pause`);
    }
    const worker = await buildApp({
      config: env.config,
      database: env.handle,
      store: env.store,
      logger: false,
      webhooks: true,
    });
    await worker.ready();
    try {
      const write = await env.app.inject({
        method: 'POST',
        url: '/api/v1/assets',
        headers: { authorization: `Bearer ${keys.wide}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ label: 'Hook me' }),
      });
      assert.equal(write.statusCode, 201, write.body);
      const deliveries = async (id: number) =>
        (await api('GET', `/api/v1/admin/webhooks/${id}/deliveries`)).json<DeliveryRow[]>();
      await until(
        'every loopback subscription tried',
        async () => {
          for (const id of mine) if ((await deliveries(id)).length === 0) return false;
          return true;
        },
        60_000,
      );
      for (const id of mine) {
        for (const d of await deliveries(id)) {
          assert.deepEqual([d.delivered, d.status_code, d.duration_ms], [false, null, 0], `webhook ${id}`);
          assert.match(String(d.error), /may not reach .*PRODGRAPH_WEBHOOK_ALLOW/, `webhook ${id}`);
        }
      }
      assert.equal(receiver.got.length, 0, 'a webhook reached the loopback receiver');
    } finally {
      await worker.close();
    }
  };
  return { property, afterwards };
}

/**
 * Images whose decode would take more than the budget (PRODGRAPH_MAX_DECODE_MB), up to six at
 * once: a progressive JPEG (whole, with junk after it, cut short) sent to the media proxy as
 * JSON or multipart is refused 413 from its header, and the look brief of a released
 * progressive still is 422; never a 5xx or a 503 (nothing waits for a decode), nothing stored.
 */
export function decodeBudget(
  env: TestEnv,
  key: string,
  snapshot: () => Promise<Snapshot>,
  progressive: Buffer[],
  stillVersion: number,
) {
  const auth = { authorization: `Bearer ${key}` };
  const bytes = fc.oneof(
    fc.constantFrom(...progressive),
    fc.constantFrom(...progressive).map((b) => Buffer.concat([b, Buffer.from('trailing junk')])),
    fc.constantFrom(...progressive).map((b) => b.subarray(0, Math.ceil(b.length * 0.6))),
  );
  const proxy = fc.tuple(fc.boolean(), bytes).map(([json, b]) => {
    const fields = { filespace: 'fuzz-fs', path: 'plates/r1/sh010.exr' };
    if (json) {
      return {
        kind: 'proxy' as const,
        headers: { ...auth, 'content-type': 'application/json' },
        payload: Buffer.from(JSON.stringify({ ...fields, bytes: b.toString('base64') })),
      };
    }
    const form = multipart([
      ...Object.entries(fields).map(([name, value]) => ({ name, value })),
      { name: 'file', filename: 'plate.jpg', content: b, contentType: 'image/jpeg' },
    ]);
    return { kind: 'proxy' as const, headers: { ...auth, ...form.headers }, payload: form.payload };
  });
  const brief = fc.constant({ kind: 'brief' as const, headers: auth, payload: undefined });
  const batch = fc.array(fc.oneof({ weight: 3, arbitrary: proxy }, { weight: 1, arbitrary: brief }), {
    minLength: 1,
    maxLength: 6,
  });
  return fc.asyncProperty(batch, async (requests) => {
    const before = await snapshot();
    const answers = await Promise.all(
      requests.map((r) =>
        env.app.inject({
          method: 'POST',
          url:
            r.kind === 'proxy' ? '/api/v1/storage/media-proxy' : `/api/v1/vision/looks/${stillVersion}/brief`,
          headers: r.headers,
          ...(r.payload ? { payload: r.payload } : {}),
        }),
      ),
    );
    answers.forEach((res, i) => {
      const [status, code] = requests[i]!.kind === 'proxy' ? [413, 'too_large'] : [422, 'invalid_field'];
      const what = `${requests[i]!.kind}: ${res.statusCode} ${res.body.slice(0, 300)}`;
      assert.equal(res.statusCode, status, what);
      assert.equal(res.json().code, code, what);
      assert.match(
        res.json().detail,
        /MB to decode, more than the 1 MB a decode may use \(PRODGRAPH_MAX_DECODE_MB\)/,
        what,
      );
    });
    assert.deepEqual(await snapshot(), before, 'a refused image changed the state');
  });
}
