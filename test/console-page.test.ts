import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { CONSOLE_DIR, loadConsole } from '../src/modules/console/files.js';
import { consoleRoutes } from '../src/modules/console/routes.js';
import { createEnv, type TestEnv } from './support/env.js';

/** The console page as the server sends it: its policy, its assets, and nothing inline. */
describe('GET /console: one page, its built assets, a strict content security policy', () => {
  let env: TestEnv;
  before(async () => {
    // `npm ci` builds it (prepare); a checkout that has not built yet builds it here
    if (!existsSync(join(CONSOLE_DIR, 'manifest.json')))
      execFileSync(process.execPath, ['console/build.mjs']);
    env = await createEnv('sqlite');
  });
  after(() => env.close());

  it('serves the page under a CSP that allows only its own script, style and server, and no framing', async () => {
    const r = await env.app.inject({ url: '/console' });
    assert.equal(r.statusCode, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    const csp = String(r.headers['content-security-policy']);
    const directives = Object.fromEntries(
      csp.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name, values.join(' ')];
      }),
    );
    assert.equal(directives['default-src'], "'none'");
    assert.equal(directives['script-src'], "'self'");
    assert.equal(directives['style-src'], "'self'");
    assert.equal(directives['connect-src'], "'self'");
    assert.equal(directives['img-src'], "'self' blob:");
    assert.equal(directives['frame-ancestors'], "'none'");
    assert.equal(r.headers['x-frame-options'], 'DENY');
    assert.equal(r.headers['referrer-policy'], 'no-referrer');
    assert.equal(r.headers['cache-control'], 'no-cache');
    // no inline script or style, nothing from another host
    assert.doesNotMatch(r.body, /<script(?![^>]*\bsrc=)[^>]*>/);
    assert.doesNotMatch(r.body, /<style|style=/);
    assert.doesNotMatch(r.body, /https?:\/\//);
    const refs = [...r.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(refs.length >= 3);
    for (const ref of refs) assert.match(ref, /^\/console\/assets\/[\w.-]+$/);
  });

  it('sends the assets gzipped to a browser that takes it, cached for good, and 404s any other name', async () => {
    const page = await env.app.inject({ url: '/console', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(page.headers['content-encoding'], 'gzip');
    const html = gunzipSync(page.rawPayload).toString('utf8');
    const script = /src="([^"]+\.js)"/.exec(html)![1]!;
    const zipped = await env.app.inject({ url: script, headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(zipped.statusCode, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.match(String(zipped.headers['cache-control']), /immutable/);
    assert.match(String(zipped.headers['content-type']), /javascript/);
    const plain = await env.app.inject({ url: script });
    assert.equal(gunzipSync(zipped.rawPayload).length, plain.rawPayload.length);
    for (const url of [
      '/console/assets/nope.js',
      '/console/assets/manifest.json',
      '/console/assets/index.html',
    ]) {
      const r = await env.app.inject({ url });
      assert.equal(r.statusCode, 404, url);
      assert.ok(JSON.parse(r.body).detail, url);
    }
  });

  it('the base URL names the console for a script', async () => {
    const r = await env.app.inject({ url: '/' });
    assert.equal(JSON.parse(r.body).console, '/console');
  });

  it('says how to build it when the build is missing, instead of a blank page', async () => {
    assert.equal(await loadConsole(join(env.dir, 'nothing-here')), null);
    const bare = Fastify();
    await bare.register(consoleRoutes, { dir: join(env.dir, 'nothing-here') });
    const r = await bare.inject({ url: '/console' });
    assert.equal(r.statusCode, 503);
    assert.match(r.body, /npm run build/);
    assert.ok(r.headers['content-security-policy']);
    await bare.close();
  });
});
