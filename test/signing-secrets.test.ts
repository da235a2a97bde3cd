import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp, type App } from '../src/app.js';
import { mediaPathOf } from '../src/media/paths.js';
import { prodgraph, prodgraphHere } from './support/cli.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { loadDemo } from './support/read.js';
import { dbArgOf, startServer, type ServerProcess } from './support/server-process.js';

/*
 * Media tickets are signed with a secret kept in the database, so a ticket minted by one server
 * is good on every other on the same database, with nothing set by the operator; `prodgraph
 * secrets rotate` makes a new one that every server accepts at once, while tickets signed
 * before keep working until they expire. Two apps on one SQLite file; two server processes on
 * one PostgreSQL schema.
 */

/** One server of a deployment, as a client sees it. */
interface Server {
  get(path: string, token?: string): Promise<{ status: number; body: string }>;
}

const inProcess = (app: App): Server => ({
  async get(path, token) {
    const r = await app.inject({ url: path, headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: r.statusCode, body: r.body };
  },
});

const overHttp = (server: ServerProcess): Server => ({
  async get(path, token) {
    const r = await fetch(`${server.url}${path}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    return { status: r.status, body: await r.text() };
  },
});

for (const dialect of DIALECTS) {
  describe(`signing secrets shared through the database [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;
    let path: string;
    let cli: { PRODGRAPH_DB: string; PRODGRAPH_MEDIA: string };
    const closers: Array<() => Promise<unknown>> = [];

    /** Another server on the env's database: an app of its own (SQLite), or a process (PostgreSQL). */
    const another = async (): Promise<Server> => {
      if (dialect === 'sqlite') {
        const app = await buildApp({ config: env.config, logger: false });
        closers.push(() => app.close());
        return inProcess(app);
      }
      const server = await startServer(env);
      closers.push(async () => {
        server.child.kill('SIGTERM');
        await server.exited;
      });
      return overHttp(server);
    };
    const ticketFrom = async (server: Server) => {
      const r = await server.get('/api/v1/media-ticket', token);
      assert.equal(r.status, 200, r.body);
      return (JSON.parse(r.body) as { ticket: string }).ticket;
    };
    const fileStatus = async (server: Server, ticket: string) =>
      (await server.get(`${path}?t=${encodeURIComponent(ticket)}`)).status;

    before(async () => {
      env = await createEnv(dialect);
      await loadDemo(env, 'single');
      token = await env.mint({ production: 'lanternfall', scopes: ['read'] });
      const media = await env.handle.db
        .selectFrom('media')
        .select('storage_key')
        .where('storage_key', 'is not', null)
        .orderBy('id')
        .executeTakeFirstOrThrow();
      path = mediaPathOf(media.storage_key)!;
      cli = { PRODGRAPH_DB: dbArgOf(env), PRODGRAPH_MEDIA: env.config.mediaDir };
    });
    after(async () => {
      for (const close of closers) await close();
      await env?.close();
    });

    it('a ticket minted on one server is good on another, and after a rotation old and new tickets are good on both', async () => {
      const a = inProcess(env.app);
      const b = await another();
      const old = await ticketFrom(a);
      assert.equal(await fileStatus(a, old), 200);
      assert.equal(await fileStatus(b, old), 200, 'minted on a, shown to b');
      assert.equal(await fileStatus(a, await ticketFrom(b)), 200, 'minted on b, shown to a');

      const rotated = await prodgraph(['secrets', 'rotate', '--json'], cli);
      assert.equal(rotated.code, 0, rotated.stderr);
      const { generation } = JSON.parse(rotated.stdout) as { generation: number };
      assert.ok(generation >= 2);
      assert.ok(!rotated.stdout.includes('secret":'), 'the secret is never printed');

      // a server started after the rotation signs with the new secret: a and b take its tickets
      const c = await another();
      const fresh = await ticketFrom(c);
      assert.notEqual(fresh.split('.')[3], old.split('.')[3]);
      for (const [name, server] of [
        ['a', a],
        ['b', b],
        ['c', c],
      ] as const) {
        assert.equal(await fileStatus(server, fresh), 200, `a new ticket on ${name}`);
        assert.equal(await fileStatus(server, old), 200, `an old ticket on ${name}, until it expires`);
      }
      // a forged signature is still refused everywhere
      const forged = `${old.slice(0, old.lastIndexOf('.') + 1)}${'A'.repeat(43)}`;
      for (const server of [a, b, c]) assert.equal(await fileStatus(server, forged), 401);
    });

    it('a secret retired longer ago than a ticket lives no longer verifies, and is deleted by the next rotation', async () => {
      const a = inProcess(env.app);
      const old = await ticketFrom(a);
      const rows = await env.handle.db.selectFrom('signing_secrets').select('generation').execute();
      assert.equal((await prodgraphHere(['secrets', 'rotate'], cli)).code, 0);
      // the generations before were retired 20 minutes ago, past the longest ticket's life
      const past = new Date(Date.now() - 20 * 60_000).toISOString();
      await env.handle.db
        .updateTable('signing_secrets')
        .set({ retired_at: past })
        .where(
          'generation',
          'in',
          rows.map((r) => r.generation),
        )
        .execute();
      const b = await another();
      assert.equal(await fileStatus(b, old), 401, 'signed by a secret retired too long ago');
      assert.equal(await fileStatus(b, await ticketFrom(b)), 200);
      assert.equal((await prodgraphHere(['secrets', 'rotate'], cli)).code, 0);
      const left = await env.handle.db.selectFrom('signing_secrets').select('generation').execute();
      assert.equal(left.length, 2, 'the signing secret and the one it just retired');
    });

    it('doctor and the start-up line say how tickets are signed, never the secret', async () => {
      const secrets = (await env.handle.db.selectFrom('signing_secrets').select('secret').execute()).map(
        (r) => r.secret,
      );
      const doctor = await prodgraphHere(['doctor', '--json'], cli);
      const finding = (
        JSON.parse(doctor.stdout) as { findings: Array<{ check: string; level: string; detail: string }> }
      ).findings.find((f) => f.check === 'ticket signing');
      assert.equal(finding?.level, 'ok');
      assert.match(
        finding.detail,
        /^the database's secret, shared by every server on it: generation \d+, made \S+ \(\d+ s ago\); 1 retired/,
      );
      const text = await prodgraphHere(['doctor'], cli);
      assert.match(text.stdout, /ok {4}ticket signing: the database's secret/);
      const fromEnv = await prodgraph(['doctor'], { ...cli, PRODGRAPH_TICKET_SECRET: 'x'.repeat(32) });
      assert.match(fromEnv.stdout, /ok {4}ticket signing: PRODGRAPH_TICKET_SECRET, from the environment/);
      for (const s of secrets) assert.ok(!doctor.stdout.includes(s) && !text.stdout.includes(s));
      const server = await startServer(env);
      closers.push(async () => {
        server.child.kill('SIGTERM');
        await server.exited;
      });
      const line = server.output.find((l) => l.includes('media tickets signed with'));
      assert.match(line ?? '', /the database's secret, shared by every server on it: generation \d+/);
      for (const s of secrets) assert.ok(!server.output.join('\n').includes(s));
    });
  });
}
