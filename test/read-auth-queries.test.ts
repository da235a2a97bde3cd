import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { revokeKey } from '../src/auth/key-service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { contactLeaks, demoContacts, loadDemo, recordingGet } from './support/read.js';

/**
 * Queries each route runs, the key lookup of the auth hook included (1 query). The same on
 * both demo productions: the count depends on the route, never on the production's size.
 */
const ROUTES: Array<{ url: (r: Record<string, number>) => string; queries: number }> = [
  { url: () => '/api/v1/production', queries: 2 },
  { url: () => '/api/v1/scenes', queries: 2 },
  { url: () => '/api/v1/assets', queries: 2 },
  { url: () => '/api/v1/assets?department=costume&kind=costume&status=active&released=true', queries: 3 },
  { url: (r) => `/api/v1/assets/${r.char}`, queries: 7 },
  { url: () => '/api/v1/schedule', queries: 4 },
  { url: (r) => `/api/v1/schedule?episode_id=${r.ep}`, queries: 4 },
  // the rows, their packages, their newest submissions and those submissions' files
  { url: () => '/api/v1/deliveries', queries: 5 },
  { url: () => '/api/v1/approvals', queries: 3 },
  { url: () => '/api/v1/approvals?status=pending', queries: 3 },
  { url: () => '/api/v1/script-changes', queries: 3 },
  { url: () => '/api/v1/script-changes?status=all&all_episodes=true', queries: 3 },
  { url: () => '/api/v1/activity?limit=200', queries: 2 },
  { url: () => '/api/v1/jobs?limit=200', queries: 2 },
  { url: () => '/api/v1/people', queries: 2 },
  { url: () => '/api/v1/media-ticket', queries: 1 },
];

/**
 * Queries since `start`, leaving out the auth hook's fire-and-forget `last_used_at` write
 * (once a minute per key; on PostgreSQL it can land inside the next request's window).
 */
const routeQueries = (env: TestEnv, start: number): number =>
  env.queries.sql.slice(start).filter((q) => !/set "last_used_at"/.test(q)).length;

for (const dialect of DIALECTS) {
  describe(`read surface: refusals and query counts [${dialect}]`, () => {
    let env: TestEnv;
    const refs: Record<'series' | 'film', Record<string, number>> = { series: {}, film: {} };
    const tokens: Record<string, string> = {};
    const get = recordingGet();

    before(async () => {
      // counts what each route costs to assemble; a kept answer's cost is counted in
      // answer-cache.test.ts and round-trip-bundles.test.ts
      env = await createEnv(dialect, { PRODGRAPH_ANSWER_CACHE_MB: '0' });
      const s = (await loadDemo(env, 'episodic')).refs;
      const f = (await loadDemo(env, 'single')).refs;
      refs.series = { char: s['ch-mara']!, ep: s.ep102! };
      refs.film = { char: f[Object.keys(f).find((k) => k.startsWith('ch-'))!]!, ep: 1 };
      tokens.series = await env.mint({ production: 'nightfall', scopes: ['read'] });
      tokens.film = await env.mint({ production: 'lanternfall', scopes: ['read'] });
      tokens.writer = await env.mint({ production: 'nightfall', scopes: ['write'] });
      tokens.money = await env.mint({ production: 'nightfall', scopes: ['read:money', 'submit:turnover'] });
      tokens.vendor = await env.mint({
        production: 'nightfall',
        engagement: 'eng-pixel',
        scopes: ['read', 'write', 'submit:turnover', 'read:money'],
      });
      tokens.revoked = await env.mint({ production: 'nightfall', scopes: ['read'] });
      const revoked = await env.handle.db
        .selectFrom('api_keys')
        .select('id')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      await revokeKey(env.handle.db, String(revoked.id));
    });
    after(() => env.close());

    it('every read route: 401 without a key, with a malformed one or a revoked one', async () => {
      for (const route of ROUTES) {
        const url = route.url(refs.series);
        for (const headers of [
          {},
          { authorization: 'Basic abc' },
          { authorization: `Bearer ${tokens.revoked}` },
        ]) {
          const r = await env.app.inject({ url, headers });
          assert.equal(r.statusCode, 401, url);
          assert.ok(JSON.parse(r.body).detail);
        }
      }
    });

    it('every read route: 403 for a key without read, and for an engagement-bound key whatever its scopes', async () => {
      for (const route of ROUTES) {
        const url = route.url(refs.series);
        for (const who of ['writer', 'money', 'vendor']) {
          const r = await get(env.app, url, tokens[who]);
          assert.equal(r.status, 403, `${who} ${url}`);
          assert.ok(r.body.detail);
        }
      }
    });

    it('the refusals come before validation: 401/403 even with a bad query', async () => {
      assert.equal((await get(env.app, '/api/v1/activity?limit=0')).status, 401);
      assert.equal((await get(env.app, '/api/v1/assets?status=nope', tokens.vendor)).status, 403);
      assert.equal((await get(env.app, '/api/v1/assets/abc', tokens.writer)).status, 403);
    });

    it('each route runs a fixed number of queries, the same on both demo productions', async () => {
      const measured: string[] = [];
      for (const which of ['series', 'film'] as const) {
        const token = tokens[which]!;
        await get(env.app, '/api/v1/production', token); // the once-a-minute last_used_at write
        for (const route of ROUTES) {
          const url = route.url(refs[which]);
          const start = env.queries.sql.length;
          const r = await get(env.app, url, token);
          assert.equal(r.status, 200, url);
          env.queries.count = routeQueries(env, start);
          assert.equal(
            env.queries.count,
            route.queries,
            `${which} ${url}: ${env.queries.sql.slice(-env.queries.count).join(' | ')}`,
          );
          if (which === 'series') measured.push(`${url} ${env.queries.count}`);
        }
        // the off-plane file route: ticket's key check + the media row
        const ticket = (await get(env.app, '/api/v1/media-ticket', token)).body.ticket;
        const record = (await get(env.app, `/api/v1/assets/${refs[which].char}`, token)).body;
        const path = record.versions.find((v: { released: boolean }) => v.released).media_path;
        const start = env.queries.sql.length;
        const file = await env.app.inject({ url: `${path}?t=${ticket}` });
        assert.equal(file.statusCode, 200);
        assert.equal(routeQueries(env, start), 2);
      }
      assert.equal(measured.length, ROUTES.length);
    });

    it("another production's ids answer 404 like unknown ones", async () => {
      const foreign = await get(env.app, `/api/v1/assets/${refs.film.char}`, tokens.series);
      const unknown = await get(env.app, '/api/v1/assets/987654', tokens.series);
      assert.equal(foreign.status, 404);
      assert.deepEqual(foreign.body, unknown.body);
      const own = await get(env.app, `/api/v1/assets/${refs.film.char}`, tokens.film);
      assert.equal(own.status, 200);
      const filmEpisode = await get(env.app, `/api/v1/schedule?episode_id=${refs.series.ep}`, tokens.film);
      assert.equal(filmEpisode.status, 200, 'a single production ignores episode_id');
    });

    it('no response of this file carries an email or a phone from the fixtures', () => {
      assert.deepEqual(
        get.seen.flatMap((x) => contactLeaks(x.body, demoContacts(), x.url)),
        [],
      );
    });
  });
}
