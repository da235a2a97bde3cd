import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { operatorActor } from '../src/auth/audit-actor.js';
import { allowPerson, productionIdOf } from '../src/modules/sign-in-admin/service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call, type Reply } from './support/http.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  startProvider,
  throughProvider,
  type TestProvider,
} from './support/oidc-provider.js';

/*
 * Console sign-in against a real OpenID provider (oidc-provider on loopback): the server side of
 * the flow, through the app, with the provider's own login and consent pages walked as a browser
 * would. Sessions are the database's rows; what a person notices is the cookie, the answers, and
 * a refusal.
 */

const PUBLIC = 'http://127.0.0.1:8181';
const TLS_PUBLIC = 'https://console.studio.test';
const CALLBACK = '/api/v1/auth/oidc/callback';

const cookiesOf = (r: Reply): string[] => {
  const v = r.headers['set-cookie'];
  return v === undefined ? [] : Array.isArray(v) ? v : [String(v)];
};
const cookieNamed = (r: Reply, name: string) => cookiesOf(r).find((c) => c.startsWith(`${name}=`));
const valueOf = (cookie: string | undefined) => cookie?.split(';')[0]!.split('=').slice(1).join('=') ?? '';

for (const dialect of DIALECTS) {
  describe(`console sign-in with OpenID Connect [${dialect}]`, () => {
    let provider: TestProvider;
    let env: TestEnv;
    let tls: TestEnv;
    let adminKey: string;

    const envFor = (publicUrl: string, issuer: string, extra: Record<string, string> = {}) =>
      createEnv(dialect, {
        ...extra,
        PRODGRAPH_OIDC_ISSUER: issuer,
        PRODGRAPH_OIDC_CLIENT_ID: CLIENT_ID,
        PRODGRAPH_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        PRODGRAPH_PUBLIC_URL: publicUrl,
        PRODGRAPH_OIDC_ALLOWED_DOMAINS: 'studio.test',
      });

    async function seed(e: TestEnv) {
      const make = new Factory(e.handle.db);
      const prod = await make.production({ code: 'film' });
      await make.person(prod.id, { ref: 'p-ana', name: 'Ana Ruiz' });
      await make.person(prod.id, { ref: 'p-carl', name: 'Carl Ito-Person', email: 'Carl@studio.test' });
      const id = await productionIdOf(e.handle.db, 'film');
      await allowPerson(
        e.handle.db,
        id,
        { email: 'ana@studio.test', role: 'admin', person: 'p-ana' },
        operatorActor('test'),
      );
      await allowPerson(
        e.handle.db,
        id,
        { email: 'carl@studio.test', role: 'coordinator' },
        operatorActor('test'),
      );
      await allowPerson(e.handle.db, id, { email: 'vic@studio.test', role: 'viewer' }, operatorActor('test'));
      await allowPerson(e.handle.db, id, { email: 'eve@outside.test', role: 'admin' }, operatorActor('test'));
      await allowPerson(e.handle.db, id, { email: 'ulla@studio.test', role: 'admin' }, operatorActor('test'));
    }

    before(async () => {
      provider = await startProvider([PUBLIC + CALLBACK, TLS_PUBLIC + CALLBACK]);
      env = await envFor(PUBLIC, provider.issuer);
      tls = await envFor(TLS_PUBLIC, provider.issuer, { PRODGRAPH_OIDC_REQUIRED_GROUPS: 'post,editorial' });
      await seed(env);
      await seed(tls);
      // carl may also sign in to a second production of this installation
      const second = await new Factory(tls.handle.db).production({ code: 'film2' });
      await allowPerson(
        tls.handle.db,
        second.id,
        { email: 'carl@studio.test', role: 'viewer' },
        operatorActor('test'),
      );
      adminKey = await env.mint({ production: 'film', scopes: ['read', 'admin'] });
    });
    after(async () => {
      await env?.close();
      await tls?.close();
      await provider?.close();
    });

    /** Signs `login` in through the provider; the callback's answer. */
    async function signIn(
      e: TestEnv,
      login: string,
      publicUrl = PUBLIC,
      sessionCookie?: string,
      query = '',
    ): Promise<Reply> {
      const start = await call(e.app, 'GET', `/api/v1/auth/oidc/login${query}`);
      assert.equal(start.status, 302);
      const state = cookieNamed(start, 'prodgraph_sign_in');
      assert.ok(state, 'the sign-in keeps its state in a cookie');
      const back = await throughProvider(String(start.headers.location), login, publicUrl);
      const url = new URL(back);
      assert.equal(url.pathname, CALLBACK);
      const cookie = [
        `prodgraph_sign_in=${valueOf(state)}`,
        ...(sessionCookie ? [`prodgraph_session=${sessionCookie}`] : []),
      ];
      return call(e.app, 'GET', url.pathname + url.search, { headers: { cookie: cookie.join('; ') } });
    }

    const withSession = (token: string, extra: Record<string, string> = {}) => ({
      headers: { cookie: `prodgraph_session=${token}`, ...extra },
    });

    async function signedIn(login: string) {
      const r = await signIn(env, login);
      assert.equal(r.status, 302);
      assert.equal(r.headers.location, `${PUBLIC}/console`);
      const token = valueOf(cookieNamed(r, 'prodgraph_session'));
      const me = await call(env.app, 'GET', '/api/v1/auth/session', withSession(token));
      assert.equal(me.status, 200);
      return { token, csrf: me.body.csrf_token as string, me: me.body, reply: r };
    }

    it('signs a mapped person in: an HttpOnly, SameSite=Strict session cookie, and the console as that person and role', async () => {
      const { token, me, reply } = await signedIn('ana');
      const cookie = cookieNamed(reply, 'prodgraph_session')!;
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Strict/);
      assert.match(cookie, /Path=\//);
      assert.doesNotMatch(cookie, /Secure/, 'plain http on loopback: no Secure flag');
      assert.equal(me.role, 'admin');
      assert.equal(me.email, 'ana@studio.test');
      assert.equal(me.name, 'Ana Ruiz', "the production's person, not the provider's name");
      const rows = await env.handle.db.selectFrom('console_sessions').selectAll().execute();
      assert.equal(JSON.stringify(rows).includes(token), false, 'the token is nowhere in the database');
      const engagements = await call(env.app, 'GET', '/api/v1/admin/engagements', withSession(token));
      assert.equal(engagements.status, 200);
    });

    it('tells the console an identity provider is configured', async () => {
      const r = await call(env.app, 'GET', '/api/v1/auth/sign-in-options');
      assert.deepEqual(r.body, { identity_provider: true, signed_in: false });
      const { token } = await signedIn('vic');
      const with_ = await call(env.app, 'GET', '/api/v1/auth/sign-in-options', withSession(token));
      assert.deepEqual(with_.body, { identity_provider: true, signed_in: true });
    });

    it('marks the cookie Secure when the public URL is https', async () => {
      const r = await signIn(tls, 'ana', TLS_PUBLIC);
      assert.equal(r.status, 302);
      assert.match(cookieNamed(r, 'prodgraph_session')!, /; Secure/);
    });

    it('refuses a person in none of the required groups', async () => {
      const r = await signIn(tls, 'vic', TLS_PUBLIC);
      assert.equal(r.headers.location, `${TLS_PUBLIC}/console#/sign-in-refused/group`);
      assert.equal(cookieNamed(r, 'prodgraph_session'), undefined);
    });

    it('asks which production when a person may sign in to several, and signs in to the one named', async () => {
      const r = await signIn(tls, 'carl', TLS_PUBLIC);
      assert.equal(r.headers.location, `${TLS_PUBLIC}/console#/sign-in-refused/choose_production`);
      const named = await signIn(tls, 'carl', TLS_PUBLIC, undefined, '?production=film2');
      const token = valueOf(cookieNamed(named, 'prodgraph_session'));
      const me = await call(tls.app, 'GET', '/api/v1/auth/session', withSession(token));
      assert.equal(me.body.role, 'viewer', "film2's role, not film's");
    });

    it('refuses a cookie-authenticated write without the CSRF token, or from another origin', async () => {
      const { token, csrf } = await signedIn('ana');
      const body = { email: 'new@studio.test', role: 'viewer' };
      const bare = await call(env.app, 'POST', '/api/v1/admin/sign-in-people', {
        body,
        ...withSession(token),
      });
      assert.equal(bare.status, 403);
      assert.equal(bare.body.code, 'csrf_refused');
      const wrong = await call(env.app, 'POST', '/api/v1/admin/sign-in-people', {
        body,
        ...withSession(token, { 'x-csrf-token': 'x'.repeat(csrf.length) }),
      });
      assert.equal(wrong.body.code, 'csrf_refused');
      const foreign = await call(env.app, 'POST', '/api/v1/admin/sign-in-people', {
        body,
        ...withSession(token, { 'x-csrf-token': csrf, origin: 'https://evil.example' }),
      });
      assert.equal(foreign.body.code, 'csrf_refused');
      const list = await call(env.app, 'GET', '/api/v1/admin/sign-in-people', { token: adminKey });
      assert.equal(
        list.body.some((p: { email: string }) => p.email === 'new@studio.test'),
        false,
        'nothing changed',
      );
      const good = await call(env.app, 'POST', '/api/v1/admin/sign-in-people', {
        body,
        ...withSession(token, { 'x-csrf-token': csrf, origin: PUBLIC }),
      });
      assert.equal(good.status, 200);
      assert.equal(good.body.email, 'new@studio.test');
    });

    it('gives a new session at every sign-in and ends the one the browser came with (no fixation)', async () => {
      const first = await signedIn('ana');
      const again = await signIn(env, 'ana', PUBLIC, first.token);
      const second = valueOf(cookieNamed(again, 'prodgraph_session'));
      assert.ok(second && second !== first.token);
      assert.equal(
        (await call(env.app, 'GET', '/api/v1/auth/session', withSession(first.token))).status,
        401,
      );
      assert.equal((await call(env.app, 'GET', '/api/v1/auth/session', withSession(second))).status, 200);
      // a token planted in the browser that is no session at all is simply replaced
      const planted = await signIn(env, 'ana', PUBLIC, 'planted-token-an-attacker-chose-123456');
      assert.notEqual(
        valueOf(cookieNamed(planted, 'prodgraph_session')),
        'planted-token-an-attacker-chose-123456',
      );
    });

    it('refuses an identity no one allowed, outside the allowed domains, or with an unverified email', async () => {
      for (const [login, reason] of [
        ['una', 'not_allowed'],
        ['eve', 'domain'],
        ['ulla', 'unverified_email'],
      ] as const) {
        const r = await signIn(env, login);
        assert.equal(r.status, 302);
        assert.equal(r.headers.location, `${PUBLIC}/console#/sign-in-refused/${reason}`, login);
        assert.equal(cookieNamed(r, 'prodgraph_session'), undefined, `${login}: no session`);
      }
    });

    it('refuses a return the browser did not start (state not its own)', async () => {
      const r = await call(env.app, 'GET', `${CALLBACK}?code=abc&state=someone-elses`);
      assert.equal(r.headers.location, `${PUBLIC}/console#/sign-in-refused/no_attempt`);
    });

    it('maps roles to what the routes allow: a coordinator manages vendors but not keys or webhooks; a viewer browses', async () => {
      const carl = await signedIn('carl');
      assert.equal(carl.me.role, 'coordinator');
      assert.equal(carl.me.email, 'carl@studio.test', 'emails compare in lower case');
      assert.equal(
        carl.me.name,
        'Carl Ito-Person',
        "allowed without --person: the production's person with that email",
      );
      assert.equal(
        (await call(env.app, 'GET', '/api/v1/admin/engagements', withSession(carl.token))).status,
        200,
      );
      for (const path of ['/api/v1/admin/keys', '/api/v1/admin/webhooks', '/api/v1/admin/sessions']) {
        const r = await call(env.app, 'GET', path, withSession(carl.token));
        assert.equal(r.status, 403, path);
      }
      const vic = await signedIn('vic');
      assert.equal((await call(env.app, 'GET', '/api/v1/production', withSession(vic.token))).status, 200);
      const refused = await call(env.app, 'GET', '/api/v1/admin/engagements', withSession(vic.token));
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'scope_missing');
    });

    it('records what is done through a session under its person', async () => {
      const { token, csrf } = await signedIn('ana');
      const made = await call(env.app, 'POST', '/api/v1/admin/organisations', {
        body: { name: 'Halide FX' },
        ...withSession(token, { 'x-csrf-token': csrf }),
      });
      assert.equal(made.status, 201);
      const activity = await call(env.app, 'GET', '/api/v1/activity', withSession(token));
      const entry = activity.body.find((a: { summary: string }) => a.summary.includes('Halide FX'));
      assert.ok(entry, 'the write is in the activity feed');
      assert.match(entry.actor, /^Ana Ruiz\b/, "the production's person, not a key's label");
      const row = await env.handle.db
        .selectFrom('activity')
        .innerJoin('people', 'people.id', 'activity.person_id')
        .where('activity.summary', 'like', '%Halide FX%')
        .select('people.ref')
        .executeTakeFirstOrThrow();
      assert.equal(row.ref, 'p-ana');
    });

    it('signs out at the server: the same cookie is refused afterwards', async () => {
      const { token, csrf } = await signedIn('ana');
      const noCsrf = await call(env.app, 'POST', '/api/v1/auth/sign-out', withSession(token));
      assert.equal(noCsrf.status, 403);
      const out = await call(
        env.app,
        'POST',
        '/api/v1/auth/sign-out',
        withSession(token, { 'x-csrf-token': csrf }),
      );
      assert.equal(out.status, 204);
      assert.match(cookieNamed(out, 'prodgraph_session')!, /Max-Age=0/);
      const after = await call(env.app, 'GET', '/api/v1/auth/session', withSession(token));
      assert.equal(after.status, 401);
    });

    it('lists live sessions to an admin, who can end one at the server', async () => {
      const { token } = await signedIn('vic');
      const list = await call(env.app, 'GET', '/api/v1/admin/sessions', { token: adminKey });
      assert.equal(list.status, 200);
      const mine = list.body.find((s: { email: string }) => s.email === 'vic@studio.test');
      assert.ok(mine);
      assert.equal(JSON.stringify(list.body).includes(token), false);
      const keys = await call(env.app, 'GET', '/api/v1/admin/keys', { token: adminKey });
      assert.equal(
        keys.body.some((k: { label: string }) => k.label.startsWith('console sign-in')),
        false,
        'a session is not a key',
      );
      const end = await call(env.app, 'DELETE', `/api/v1/admin/sessions/${mine.id}`, { token: adminKey });
      assert.equal(end.status, 204);
      assert.equal((await call(env.app, 'GET', '/api/v1/production', withSession(token))).status, 401);
    });

    it('ends an idle session, and slides the end of one in use', async () => {
      const { token, me } = await signedIn('vic');
      const soon = new Date(Date.now() + 60_000).toISOString();
      await env.handle.db
        .updateTable('console_sessions')
        .set({ expires_at: soon })
        .where('id', '=', me.id)
        .execute();
      assert.equal((await call(env.app, 'GET', '/api/v1/production', withSession(token))).status, 200);
      const slid = await env.handle.db
        .selectFrom('console_sessions')
        .where('id', '=', me.id)
        .select('expires_at')
        .executeTakeFirstOrThrow();
      assert.ok(slid.expires_at > soon, 'used near its end: pushed ahead');
      const past = new Date(Date.now() - 1000).toISOString();
      await env.handle.db
        .updateTable('console_sessions')
        .set({ expires_at: past })
        .where('id', '=', me.id)
        .execute();
      const idle = await call(env.app, 'GET', '/api/v1/production', withSession(token));
      assert.equal(idle.status, 401);
    });

    it("judges a session's end by the database's clock, not the host's: a server whose clock runs ahead keeps it", async () => {
      const { token } = await signedIn('vic');
      // two hours ahead: past the idle end by this host's clock; one of several servers may be
      mock.timers.enable({ apis: ['Date'], now: Date.now() + 2 * 3600_000 });
      try {
        assert.equal((await call(env.app, 'GET', '/api/v1/production', withSession(token))).status, 200);
      } finally {
        mock.timers.reset();
      }
    });

    it('withdrawing a person ends their sessions at once', async () => {
      const { token, csrf } = await signedIn('ana');
      const vic = await signedIn('vic');
      const list = await call(env.app, 'GET', '/api/v1/admin/sign-in-people', withSession(token));
      const row = list.body.find((p: { email: string }) => p.email === 'vic@studio.test');
      const gone = await call(
        env.app,
        'DELETE',
        `/api/v1/admin/sign-in-people/${row.id}`,
        withSession(token, { 'x-csrf-token': csrf }),
      );
      assert.equal(gone.status, 204);
      assert.equal((await call(env.app, 'GET', '/api/v1/production', withSession(vic.token))).status, 401);
      assert.equal(
        (await signIn(env, 'vic')).headers.location,
        `${PUBLIC}/console#/sign-in-refused/not_allowed`,
      );
    });

    // ---- the audit trail of sign-in

    /** The audit rows written since `fromId`, oldest first. */
    const auditSince = (e: TestEnv, fromId: number) =>
      e.handle.db.selectFrom('audit_events').where('id', '>', fromId).selectAll().orderBy('id').execute();
    const lastAuditId = async (e: TestEnv) => {
      const r = await e.handle.db
        .selectFrom('audit_events')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirst();
      return Number(r?.id ?? 0);
    };
    /** No column of any row holds a token, a cookie's value, the CSRF token, a code or a state. */
    function holdsNoSecret(rows: object[], ...secrets: string[]) {
      const text = JSON.stringify(rows);
      for (const s of secrets.filter((x) => x.length > 0))
        assert.equal(text.includes(s), false, `holds ${s}`);
      assert.doesNotMatch(text, /code=|state=|prodgraph_session|prodgraph_sign_in/);
    }
    const anaActor = 'Ana Ruiz <ana@studio.test> (console, admin)';
    const anaPersonId = async () =>
      (
        await env.handle.db
          .selectFrom('people')
          .where('ref', '=', 'p-ana')
          .select('id')
          .executeTakeFirstOrThrow()
      ).id;

    it('audits a sign-in, a sign-out and an admin ending a session: one row each, under the person, with the address', async () => {
      const from = await lastAuditId(env);
      const ana = await signedIn('ana');
      const signedInRows = await auditSince(env, from);
      assert.deepEqual(
        signedInRows.map((r) => [r.action, r.outcome, r.actor, r.object_type, r.object_id]),
        [['session.sign_in', 'ok', anaActor, 'session', ana.me.id]],
      );
      assert.equal(signedInRows[0]!.person_id, await anaPersonId());
      assert.equal(signedInRows[0]!.ip, '127.0.0.1');
      assert.ok(signedInRows[0]!.key_prefix, "the session's own key, by prefix");

      const mid = await lastAuditId(env);
      const out = await call(
        env.app,
        'POST',
        '/api/v1/auth/sign-out',
        withSession(ana.token, { 'x-csrf-token': ana.csrf }),
      );
      assert.equal(out.status, 204);
      const outRows = await auditSince(env, mid);
      assert.deepEqual(
        outRows.map((r) => [r.action, r.outcome, r.actor, r.object_id, r.ip]),
        [['session.sign_out', 'ok', anaActor, ana.me.id, '127.0.0.1']],
      );
      assert.equal(outRows[0]!.person_id, await anaPersonId());

      const carl = await signedIn('carl');
      const beforeRevoke = await lastAuditId(env);
      const end = await call(env.app, 'DELETE', `/api/v1/admin/sessions/${carl.me.id}`, { token: adminKey });
      assert.equal(end.status, 204);
      const again = await call(env.app, 'DELETE', `/api/v1/admin/sessions/${carl.me.id}`, {
        token: adminKey,
      });
      assert.equal(again.status, 404, 'already ended');
      const revoked = await auditSince(env, beforeRevoke);
      assert.deepEqual(
        revoked.map((r) => [r.action, r.outcome, r.object_type, r.object_id, r.person_id]),
        [['session.revoke', 'ok', 'session', carl.me.id, null]],
        'one row, for the ending that happened',
      );
      assert.match(revoked[0]!.summary, /carl@studio\.test/);
      assert.equal(revoked[0]!.key_label, 'test key', "the admin's key");
      holdsNoSecret(
        [...signedInRows, ...outRows, ...revoked],
        ana.token,
        ana.csrf,
        carl.token,
        carl.csrf,
        adminKey,
      );
    });

    it('audits each refused sign-in with its reason and the email the provider gave, never the code or state', async () => {
      const from = await lastAuditId(env);
      const r = await signIn(env, 'eve');
      assert.equal(r.headers.location, `${PUBLIC}/console#/sign-in-refused/domain`);
      const callback = new URL(
        String(
          (await call(env.app, 'GET', `${CALLBACK}?code=abc123secret&state=someone-elses`)).headers.location,
        ),
      );
      assert.match(callback.hash, /no_attempt/);
      const refused = await auditSince(env, from);
      assert.deepEqual(
        refused.map((x) => [x.action, x.outcome, x.actor, x.person_id, x.ip]),
        [
          ['session.refused', 'refused', 'eve@outside.test', null, '127.0.0.1'],
          ['session.refused', 'refused', 'unidentified (console sign-in)', null, '127.0.0.1'],
        ],
        'one row each: this installation has one production',
      );
      assert.match(refused[0]!.summary, /\bdomain\b/);
      assert.match(refused[1]!.summary, /\bno_attempt\b/);
      holdsNoSecret(refused, 'abc123secret', 'someone-elses');
      // seen by the production's admin, filtered by action
      const listed = await call(env.app, 'GET', '/api/v1/admin/audit?action=session.refused', {
        token: adminKey,
      });
      assert.ok(listed.body.some((x: { actor: string }) => x.actor === 'eve@outside.test'));
    });

    it('audits an unknown email under every production here, and a named production under that one only', async () => {
      const from = await lastAuditId(tls);
      const unknown = await signIn(tls, 'una', TLS_PUBLIC);
      assert.match(String(unknown.headers.location), /not_allowed$/);
      const rows = await auditSince(tls, from);
      const productions = await tls.handle.db.selectFrom('productions').select('id').orderBy('id').execute();
      assert.deepEqual(
        rows.map((x) => [x.action, x.production_id, x.actor]),
        productions.map((p) => ['session.refused', p.id, 'una@studio.test']),
      );
      const mid = await lastAuditId(tls);
      const named = await signIn(tls, 'una', TLS_PUBLIC, undefined, '?production=film2');
      assert.match(String(named.headers.location), /not_allowed$/);
      const film2 = productions.at(-1)!.id;
      assert.deepEqual(
        (await auditSince(tls, mid)).map((x) => [x.production_id, x.outcome]),
        [[film2, 'refused']],
      );
    });

    it("audits allowing, changing and withdrawing a person's sign-in through the API, under the admin", async () => {
      const ana = await signedIn('ana');
      const from = await lastAuditId(env);
      const write = (method: 'POST' | 'DELETE', url: string, body?: unknown) =>
        call(env.app, method, url, { body, ...withSession(ana.token, { 'x-csrf-token': ana.csrf }) });
      const allowed = await write('POST', '/api/v1/admin/sign-in-people', {
        email: 'wes@studio.test',
        role: 'viewer',
      });
      assert.equal(allowed.status, 200);
      assert.equal(
        (await write('POST', '/api/v1/admin/sign-in-people', { email: 'wes@studio.test', role: 'viewer' }))
          .status,
        200,
      );
      await write('POST', '/api/v1/admin/sign-in-people', { email: 'wes@studio.test', role: 'coordinator' });
      assert.equal((await write('DELETE', `/api/v1/admin/sign-in-people/${allowed.body.id}`)).status, 204);
      const rows = await auditSince(env, from);
      assert.deepEqual(
        rows.map((r) => [r.action, r.actor, r.object_type, r.object_id]),
        [
          ['sign_in_person.allow', anaActor, 'sign_in_person', allowed.body.id],
          ['sign_in_person.change', anaActor, 'sign_in_person', allowed.body.id],
          ['sign_in_person.withdraw', anaActor, 'sign_in_person', allowed.body.id],
        ],
        'allowing again just so changes nothing and writes nothing',
      );
      for (const r of rows) assert.equal(r.person_id, await anaPersonId());
      assert.match(rows[1]!.summary, /coordinator.*was viewer/);
      const listed = await call(env.app, 'GET', '/api/v1/admin/sign-in-people', { token: adminKey });
      assert.equal(
        listed.body.some((p: { email: string }) => p.email === 'wes@studio.test'),
        false,
      );
      holdsNoSecret(rows, ana.token, ana.csrf);
    });

    it('binds a key minted by a signed-in person to that person only, never to another', async () => {
      const ana = await signedIn('ana');
      const me = await anaPersonId();
      const other = await env.handle.db
        .selectFrom('people')
        .where('id', '<>', me)
        .select('id')
        .executeTakeFirstOrThrow();
      const mint = (body: Record<string, unknown>) =>
        call(env.app, 'POST', '/api/v1/admin/keys', {
          body: { label: 'ana: render farm', ...body },
          ...withSession(ana.token, { 'x-csrf-token': ana.csrf }),
        });
      const someoneElse = await mint({ person_id: other.id });
      assert.equal(someoneElse.status, 422, someoneElse.text);
      assert.equal(someoneElse.body.field, 'person_id');
      const own = await mint({ person_id: me });
      assert.equal(own.status, 201, own.text);
      assert.equal(own.body.person_id, me);
      const tool = await mint({});
      assert.equal(tool.status, 201, tool.text);
      assert.equal(tool.body.person_id, null);
    });

    it('audits a write made through a session under its person', async () => {
      const ana = await signedIn('ana');
      const made = await call(env.app, 'POST', '/api/v1/admin/organisations', {
        body: { name: 'Audited Pixels' },
        ...withSession(ana.token, { 'x-csrf-token': ana.csrf }),
      });
      assert.equal(made.status, 201);
      const listed = await call(
        env.app,
        'GET',
        '/api/v1/admin/audit?action=organisation.add',
        withSession(ana.token),
      );
      const row = listed.body.find((r: { summary: string }) => r.summary.includes('Audited Pixels'));
      assert.ok(row);
      assert.equal(row.actor, anaActor);
      assert.equal(row.person_id, await anaPersonId());
      assert.equal(row.ip, '127.0.0.1');
      const filtered = await call(
        env.app,
        'GET',
        `/api/v1/admin/audit?actor=${encodeURIComponent(anaActor)}`,
        withSession(ana.token),
      );
      assert.ok(
        filtered.body.some((r: { id: number }) => r.id === row.id),
        'the actor filter finds the person',
      );
    });
  });
}
