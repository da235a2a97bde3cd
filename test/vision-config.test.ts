import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';
import { createEnv, type TestEnv } from './support/env.js';
import { get } from './support/http.js';
import { deref } from './support/openapi.js';

const SECRET = 'sk-test-0123456789abcdef';
const vision = (env: NodeJS.ProcessEnv) => loadConfig({}, env).vision;
const refused = (env: NodeJS.ProcessEnv, message: RegExp) =>
  assert.throws(
    () => vision(env),
    (e: Error) => e instanceof ConfigError && message.test(e.message) && !e.message.includes(SECRET),
  );

describe('vision configuration', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'prodgraph-vision-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('has sensible defaults and no provider until one is configured', () => {
    assert.deepEqual(vision({}), {
      provider: null,
      models: ['image-standard', 'video-standard'],
      tokenLifetimeSeconds: 300,
      timeoutMs: 5000,
      mintsPerMinute: 10,
    });
  });

  it('reads the provider from the environment; the credential never prints', () => {
    const v = vision({
      PRODGRAPH_VISION_TOKEN_URL: 'https://api.provider.example/v1/auth/tokens',
      PRODGRAPH_VISION_CREDENTIAL: SECRET,
      PRODGRAPH_VISION_MODELS: 'flux/dev, veo-3.0',
      PRODGRAPH_VISION_TOKEN_TTL: '120',
      PRODGRAPH_VISION_TIMEOUT_MS: '2500',
      PRODGRAPH_VISION_MINTS_PER_MINUTE: '30',
    });
    assert.equal(v.provider?.name, 'api.provider.example');
    assert.equal(v.provider?.credential.reveal(), SECRET);
    assert.deepEqual(v.models, ['flux/dev', 'veo-3.0']);
    assert.deepEqual([v.tokenLifetimeSeconds, v.timeoutMs, v.mintsPerMinute], [120, 2500, 30]);
    for (const printed of [JSON.stringify(v), inspect(v, { depth: 5 }), String(v.provider?.credential)]) {
      assert.ok(!printed.includes(SECRET), printed);
    }
    const named = vision({
      PRODGRAPH_VISION_TOKEN_URL: 'http://127.0.0.1:9/t',
      PRODGRAPH_VISION_CREDENTIAL: SECRET,
      PRODGRAPH_VISION_PROVIDER: 'Acme Gen',
    });
    assert.equal(named.provider?.name, 'Acme Gen');
  });

  it('reads the credential from a file (one trailing newline dropped), never both ways at once', async () => {
    const file = join(dir, 'credential');
    await writeFile(file, `${SECRET}\n`);
    const v = vision({
      PRODGRAPH_VISION_TOKEN_URL: 'https://p.example/t',
      PRODGRAPH_VISION_CREDENTIAL_FILE: file,
    });
    assert.equal(v.provider?.credential.reveal(), SECRET);
    refused(
      {
        PRODGRAPH_VISION_TOKEN_URL: 'https://p.example/t',
        PRODGRAPH_VISION_CREDENTIAL: SECRET,
        PRODGRAPH_VISION_CREDENTIAL_FILE: file,
      },
      /set only one/,
    );
    refused(
      {
        PRODGRAPH_VISION_TOKEN_URL: 'https://p.example/t',
        PRODGRAPH_VISION_CREDENTIAL_FILE: join(dir, 'nope'),
      },
      /PRODGRAPH_VISION_CREDENTIAL_FILE: cannot read .*nope \(ENOENT\)/,
    );
  });

  it('stops at start-up on a half or bad provider configuration, without quoting the credential', () => {
    refused({ PRODGRAPH_VISION_CREDENTIAL: SECRET }, /PRODGRAPH_VISION_TOKEN_URL: required/);
    refused({ PRODGRAPH_VISION_TOKEN_URL: 'https://p.example/t' }, /PRODGRAPH_VISION_CREDENTIAL .*required/);
    const withUrl = (url: string) => ({
      PRODGRAPH_VISION_TOKEN_URL: url,
      PRODGRAPH_VISION_CREDENTIAL: SECRET,
    });
    refused(withUrl('not a url'), /is not a URL/);
    refused(withUrl('ftp://p.example/t'), /http:\/\/ or https:\/\//);
    refused(withUrl('https://user:pw@p.example/t'), /must not carry a user or password/);
    refused(
      { PRODGRAPH_VISION_TOKEN_URL: 'https://p.example/t', PRODGRAPH_VISION_CREDENTIAL: `${SECRET} x` },
      /visible ASCII/,
    );
  });

  it('wants exactly two distinct model identifiers and bounded numbers', () => {
    refused({ PRODGRAPH_VISION_MODELS: 'only-one' }, /exactly two different models/);
    refused({ PRODGRAPH_VISION_MODELS: 'a,b,c' }, /exactly two different models/);
    refused({ PRODGRAPH_VISION_MODELS: 'a,a' }, /exactly two different models/);
    refused({ PRODGRAPH_VISION_MODELS: 'a,b c' }, /"b c" is not a model identifier/);
    refused(
      { PRODGRAPH_VISION_TOKEN_TTL: '5' },
      /PRODGRAPH_VISION_TOKEN_TTL: 5 is out of range \(10\.\.3600\)/,
    );
    refused({ PRODGRAPH_VISION_TOKEN_TTL: '1e3' }, /not a whole number/);
    refused({ PRODGRAPH_VISION_TIMEOUT_MS: '60001' }, /PRODGRAPH_VISION_TIMEOUT_MS/);
    refused({ PRODGRAPH_VISION_MINTS_PER_MINUTE: '0' }, /PRODGRAPH_VISION_MINTS_PER_MINUTE/);
  });
});

describe('vision routes in the OpenAPI document', () => {
  let env: TestEnv;
  before(async () => {
    env = await createEnv('sqlite', { PRODGRAPH_VISION_MODELS: 'flux-dev,veo-3' });
  });
  after(() => env.close());

  it('documents both routes with every response, and the configured models', async () => {
    const doc = (await get(env.app, '/api/v1/openapi.json')).body;
    const token = doc.paths['/api/v1/vision/session-token'].post;
    assert.deepEqual(Object.keys(token.responses).sort(), [
      '200',
      '400',
      '401',
      '403',
      '415',
      '422',
      '429',
      '500',
      '502',
      '503',
      '507',
    ]);
    const body = deref(doc, token.requestBody.content['application/json'].schema);
    assert.deepEqual(body.properties.model.enum, ['flux-dev', 'veo-3']);
    assert.match(token.description, /Scope `read`/);
    const look = doc.paths['/api/v1/vision/looks/{version_id}/brief'].post;
    assert.deepEqual(Object.keys(look.responses).sort(), [
      '200',
      '401',
      '403',
      '404',
      '422',
      '429',
      '500',
      '503',
      '507',
    ]);
    const brief = deref(doc, look.responses['200'].content['application/json'].schema);
    for (const field of ['palette', 'exposure', 'colour', 'summary', 'method', 'generated_at']) {
      assert.ok(brief.properties[field], `brief documents ${field}`);
    }
  });
});
