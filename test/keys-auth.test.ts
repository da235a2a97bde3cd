import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { authenticate, KeyUsage, mintKey, parseScopes, revokeKey } from '../src/auth/key-service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call, get } from './support/http.js';

for (const dialect of DIALECTS) {
  describe(`keys [${dialect}]`, () => {
    let env: TestEnv;
    before(async () => {
      env = await createEnv(dialect);
      const make = new Factory(env.handle.db);
      const keys = await make.production({ code: 'keys' });
      const pix = await make.organisation(keys.id, { name: 'Pixelworks Ltd' });
      await make.engagement(keys.id, pix.id, { ref: 'eng-pix' });
      await make.person(keys.id, { ref: 'p-ana', name: 'Ana Ruiz' });
    });
    after(() => env.close());

    it('mints a recognisable high-entropy token shown once; the database keeps only prefix and hash', async () => {
      const key = await mintKey(env.handle.db, { production: 'keys', label: 'farm' });
      assert.match(key.token, /^pgk_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{43}[A-Za-z0-9]{6}$/);
      assert.ok(key.token.startsWith(key.prefix));
      const rows = await env.handle.db.selectFrom('api_keys').selectAll().execute();
      const dump = JSON.stringify(rows);
      assert.equal(dump.includes(key.token), false, 'the token is nowhere in the database');
      assert.equal(dump.includes(key.token.slice(key.prefix.length + 1)), false, 'nor is its secret part');
      const row = rows.find((r) => r.id === key.id)!;
      assert.equal(row.prefix, key.prefix);
      assert.match(row.hash, /^[0-9a-f]{64}$/);
    });

    it('defaults to read and write (read alone for a vendor key); other scopes only when asked', async () => {
      const plain = await mintKey(env.handle.db, { production: 'keys', label: 'plain' });
      assert.deepEqual(plain.scopes, ['read', 'write']);
      const vendor = await mintKey(env.handle.db, { production: 'keys', label: 'v', engagement: 'eng-pix' });
      assert.deepEqual(vendor.scopes, ['read'], 'write buys a vendor key nothing');
      assert.equal(parseScopes(''), undefined);
      assert.deepEqual(parseScopes('read:money,submit:turnover'), ['read:money', 'submit:turnover']);
      assert.throws(() => parseScopes('read,root'), /unknown scope "root"/);
      await assert.rejects(
        () =>
          mintKey(env.handle.db, {
            production: 'keys',
            label: 'x',
            engagement: 'eng-pix',
            scopes: ['admin'],
          }),
        /an engagement-bound key cannot hold the "admin" scope/,
      );
    });

    it('binds a key to an engagement or a person of its production, refusing unknown refs', async () => {
      const bound = await mintKey(env.handle.db, {
        production: 'keys',
        label: 'vendor',
        engagement: 'eng-pix',
      });
      const principal = await authenticate(env.handle.db, bound.token);
      assert.ok(principal?.engagementId);
      const personal = await mintKey(env.handle.db, { production: 'keys', label: 'ana', person: 'p-ana' });
      assert.equal((await authenticate(env.handle.db, personal.token))?.personName, 'Ana Ruiz');
      await assert.rejects(
        () => mintKey(env.handle.db, { production: 'keys', label: 'x', engagement: 'eng-nope' }),
        /no engagement "eng-nope"/,
      );
      await assert.rejects(
        () => mintKey(env.handle.db, { production: 'nope', label: 'x' }),
        /no production with code "nope"/,
      );
      await assert.rejects(
        () => mintKey(env.handle.db, { production: 'keys', label: '  ' }),
        /non-empty --label/,
      );
    });

    it('revocation takes effect on the very next request', async () => {
      const key = await mintKey(env.handle.db, { production: 'keys', label: 'soon revoked' });
      assert.equal((await get(env.app, '/api/v1/production', key.token)).status, 200);
      await revokeKey(env.handle.db, key.prefix);
      const r = await get(env.app, '/api/v1/production', key.token);
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { detail: 'unknown or revoked API key', code: 'unauthorized' });
      await assert.rejects(() => revokeKey(env.handle.db, 'pgk_nothere'), /no key "pgk_nothere"/);
    });

    it('keeps last_used_at without writing on every request', async () => {
      const key = await mintKey(env.handle.db, { production: 'keys', label: 'busy' });
      env.queries.sql.length = 0;
      for (let i = 0; i < 5; i++)
        assert.equal((await get(env.app, '/api/v1/departments', key.token)).status, 200);
      const writes = env.queries.sql.filter((s) => /^update "api_keys"/i.test(s));
      assert.equal(writes.length, 1, 'one write for five uses');
      // the write is fire-and-forget; a fresh tracker flushes deterministically
      const usage = new KeyUsage(env.handle.db, 60_000);
      usage.used(key.id);
      await usage.flush();
      const row = await env.handle.db
        .selectFrom('api_keys')
        .where('id', '=', key.id)
        .select('last_used_at')
        .executeTakeFirstOrThrow();
      assert.ok(row.last_used_at && Date.now() - Date.parse(row.last_used_at) < 60_000);
    });

    if (dialect === 'postgres') {
      it('the key lookup is prepared once per connection, and revocation still holds on the next request', async () => {
        const key = await mintKey(env.handle.db, { production: 'keys', label: 'prepared' });
        for (let i = 0; i < 3; i++)
          assert.equal((await get(env.app, '/api/v1/departments', key.token)).status, 200);
        // each connection keeps its own prepared statements: ask every connection of the pool
        // (five in tests) at once, each held by a transaction of its own until all have asked
        const held = Array.from({ length: 5 }, () =>
          env.handle.db.transaction().execute(async (trx) => {
            await sql`select pg_sleep(0.1)`.execute(trx);
            const { rows } = await sql<{ statement: string }>`
              select statement from pg_prepared_statements where name like 'prodgraph_%'`.execute(trx);
            return rows;
          }),
        );
        const rows = (await Promise.all(held)).flat();
        assert.ok(
          rows.some((r) => r.statement.includes('"api_keys"."prefix" = any($1)')),
          JSON.stringify(rows),
        );
        await revokeKey(env.handle.db, String(key.id));
        assert.equal((await get(env.app, '/api/v1/departments', key.token)).status, 401);
      });

      it('requests arriving together share one key lookup, each judged by its own key', async () => {
        const live = await mintKey(env.handle.db, { production: 'keys', label: 'live' });
        const other = await mintKey(env.handle.db, { production: 'keys', label: 'other', scopes: ['write'] });
        const revoked = await mintKey(env.handle.db, { production: 'keys', label: 'gone' });
        await revokeKey(env.handle.db, String(revoked.id));
        const unknown = (await mintKey(env.handle.db, { production: 'keys', label: 'x' })).token;
        await env.handle.db.deleteFrom('api_keys').where('label', '=', 'x').execute();
        const start = env.queries.sql.length;
        const tokens = [live, other, revoked, live, { token: unknown }, other, live];
        const answers = await Promise.all(
          tokens.map((k) => get(env.app, '/api/v1/departments', k.token).then((r) => r.status)),
        );
        assert.deepEqual(answers, [200, 403, 401, 200, 401, 403, 200]);
        const lookups = env.queries.sql.slice(start).filter((q) => q.includes('= any($1)'));
        assert.equal(lookups.length, 1, 'one statement for the seven requests');
      });
    }
  });

  describe(`auth order on the first routes [${dialect}]`, () => {
    let env: TestEnv;
    const tokens: Record<string, string> = {};
    before(async () => {
      env = await createEnv(dialect);
      const make = new Factory(env.handle.db);
      for (const code of ['mine', 'theirs']) {
        const production = await make.production({ code });
        await make.department(production.id, { slug: 'costume', name: 'Costume' });
        const pix = await make.organisation(production.id, { name: 'Pixelworks Ltd' });
        await make.engagement(production.id, pix.id, { ref: 'eng-pix' });
      }
      tokens.read = await env.mint({ production: 'mine', scopes: ['read'] });
      tokens.writeOnly = await env.mint({ production: 'mine', scopes: ['write'] });
      tokens.money = await env.mint({ production: 'mine', scopes: ['read:money', 'submit:turnover'] });
      tokens.vendorAll = await env.mint({
        production: 'mine',
        engagement: 'eng-pix',
        scopes: ['read', 'write', 'submit:turnover', 'read:money'],
      });
      tokens.revoked = await env.mint({ production: 'mine' });
      await revokeKey(env.handle.db, tokens.revoked);
      tokens.theirs = await env.mint({ production: 'theirs' });
    });
    after(() => env.close());

    const unauthorized = { status: 401 };
    const cases: Array<[string, () => Record<string, string>, { status: number; detail?: RegExp }]> = [
      ['no header', () => ({}), { ...unauthorized, detail: /missing or invalid API key/ }],
      [
        'a Basic header',
        () => ({ authorization: 'Basic dXNlcjpwYXNz' }),
        { ...unauthorized, detail: /malformed Authorization header/ },
      ],
      [
        'Bearer with no token',
        () => ({ authorization: 'Bearer ' }),
        { ...unauthorized, detail: /malformed/ },
      ],
      [
        'Bearer with two words',
        () => ({ authorization: `Bearer ${tokens.read} extra` }),
        { ...unauthorized, detail: /malformed/ },
      ],
      [
        'an unknown key',
        () => ({ authorization: 'Bearer pgk_AAAAAAAA_' + 'a'.repeat(43) }),
        { ...unauthorized, detail: /unknown or revoked/ },
      ],
      [
        'a garbage token',
        () => ({ authorization: 'Bearer hunter2' }),
        { ...unauthorized, detail: /unknown or revoked/ },
      ],
      [
        'a tampered secret',
        () => ({
          authorization: `Bearer ${tokens.read!.slice(0, -1)}${tokens.read!.endsWith('a') ? 'b' : 'a'}`,
        }),
        { ...unauthorized, detail: /unknown or revoked/ },
      ],
      [
        'a revoked key',
        () => ({ authorization: `Bearer ${tokens.revoked}` }),
        { ...unauthorized, detail: /unknown or revoked/ },
      ],
      [
        'a key without read',
        () => ({ authorization: `Bearer ${tokens.writeOnly}` }),
        { status: 403, detail: /lacks the "read" scope/ },
      ],
      [
        'a key with only money and submit scopes',
        () => ({ authorization: `Bearer ${tokens.money}` }),
        { status: 403, detail: /lacks the "read" scope/ },
      ],
      [
        'an engagement-bound key with every scope',
        () => ({ authorization: `Bearer ${tokens.vendorAll}` }),
        { status: 403, detail: /bound to a vendor engagement/ },
      ],
      ['the scheme word in lower case', () => ({ authorization: `bearer ${tokens.read}` }), { status: 200 }],
      ['a read key', () => ({ authorization: `Bearer ${tokens.read}` }), { status: 200 }],
    ];

    for (const url of ['/api/v1/production', '/api/v1/departments', '/api/v1/departments/costume']) {
      for (const [name, headers, expected] of cases) {
        it(`${url} with ${name} → ${expected.status}`, async () => {
          const r = await call(env.app, 'GET', url, { headers: headers() });
          assert.equal(r.status, expected.status, r.text);
          if (expected.detail) {
            assert.match(r.body.detail, expected.detail);
            assert.deepEqual(Object.keys(r.body), ['detail', 'code']);
          }
          if (expected.status === 401) {
            assert.match(String(r.headers['www-authenticate']), /^Bearer/);
            assert.equal(r.body.code, 'unauthorized');
          }
        });
      }
    }

    it('a key of another production sees its own production, never this one', async () => {
      const mine = await get(env.app, '/api/v1/production', tokens.read);
      const theirs = await get(env.app, '/api/v1/production', tokens.theirs);
      assert.equal(mine.body.title, 'Test mine');
      assert.equal(theirs.body.title, 'Test theirs');
      assert.notEqual(mine.body.id, theirs.body.id);
    });

    it('401 comes before 404 on an unknown department, 403 before it too', async () => {
      assert.equal((await get(env.app, '/api/v1/departments/nope')).status, 401);
      assert.equal((await get(env.app, '/api/v1/departments/nope', tokens.writeOnly)).status, 403);
      assert.equal((await get(env.app, '/api/v1/departments/nope', tokens.read)).status, 404);
    });
  });
}
