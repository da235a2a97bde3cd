import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, type ApiError, type ProdgraphClient } from '../clients/typescript/src/index.js';
import { refusalWatcher } from '../console/src/api/refusals.js';
import { createEnv, type TestEnv } from './support/env.js';
import { importRoundTrip } from './support/round-trip.js';

/*
 * How the console hears that its key was revoked while a page is open, against a real server.
 * The page signs out saying why in the server's own words, so a refusal it cannot read the
 * words of (the request was cancelled before its body was read) must not be the one that tells.
 * The browser suite drives the same path through the page; timing there cannot pin this case.
 * Client-side only: the server's answers are the same on both databases, so SQLite alone.
 */
describe('console: a key refused while the page is open', () => {
  let env: TestEnv;
  let baseUrl: string;

  before(async () => {
    env = await createEnv('sqlite');
    await importRoundTrip(env, 'film');
    await env.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
  });
  after(() => env.close());

  /** A client with a key revoked at once, and what its watcher has told. */
  async function revokedClient(): Promise<{ api: ProdgraphClient; told: ApiError[] }> {
    const key = await env.mint({ production: 'film', scopes: ['read'] });
    await env.handle.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date().toISOString() })
      .where('prefix', '=', key.split('_').slice(0, 2).join('_'))
      .execute();
    const told: ApiError[] = [];
    const api = createClient({ baseUrl, key, retries: 0 });
    api.use(refusalWatcher((error) => told.push(error)));
    return { api, told };
  }

  it('tells once, with the server’s words, however many requests are refused at once', async () => {
    const { api, told } = await revokedClient();
    await Promise.all([api.GET('/api/v1/turnovers'), api.GET('/api/v1/production'), api.GET('/api/v1/key')]);
    await api.GET('/api/v1/turnovers');
    assert.equal(told.length, 1);
    assert.equal(told[0]?.status, 401);
    assert.equal(told[0]?.code, 'unauthorized');
    assert.equal(told[0]?.detail, 'unknown or revoked API key');
  });

  it('a refused request cancelled before its body was read tells nothing; the next refused one tells why', async () => {
    const { api, told } = await revokedClient();
    const cancel = new AbortController();
    // registered later, so it sees the answer first (onResponse runs last-registered first):
    // the page leaves between the answer's arrival and the reading of its body
    const leave = { onResponse: () => void cancel.abort() };
    api.use(leave);
    await assert.rejects(api.GET('/api/v1/turnovers', { signal: cancel.signal }), { name: 'AbortError' });
    assert.equal(told.length, 0, 'no sign-out without the server’s words');
    api.eject(leave);

    await api.GET('/api/v1/turnovers');
    assert.equal(told.length, 1);
    assert.equal(told[0]?.detail, 'unknown or revoked API key');
  });
});
