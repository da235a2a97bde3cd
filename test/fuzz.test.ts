import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ERROR_CODES } from '../src/errors.js';
import { depthOver } from '../src/http/json-body.js';
import { DIALECTS, createEnv, type TestEnv } from './support/env.js';
import { operationsOf, requestsFor, type FuzzRequest, type Keys } from './support/fuzz/requests.js';
import type { Plausible } from './support/fuzz/schema-values.js';
import { snapshotter, type Snapshot } from './support/fuzz/state.js';
import { jpeg } from './support/write.js';
import { findProductionByCode } from '../src/modules/production/repository.js';
import { queueMoveTask } from '../src/modules/storage-tasks/service.js';
import { Receiver } from './support/receiver.js';
import { plausibleTargets } from './support/fuzz/targets.js';
import { fuzzProduction, progressiveJpeg, seedMedia } from './support/fuzz/media.js';
import { decodeBudget, mediaLookalikes, ticketProperty, webhookProperty } from './support/fuzz/properties.js';

/*
 * Property-based fuzzing of every operation in the OpenAPI document (a route added to the
 * document is fuzzed without anyone touching this file). Invariants, for every request:
 * - never a 5xx;
 * - every answer that is not a success carries JSON `{detail, code}` with a catalogue code;
 * - a refused request (4xx) and any GET leave every table's row count and the media folder as
 *   they were;
 * - a request carrying a progressive JPEG over the decode budget to the media proxy is refused
 *   (413 too_large when it got as far as the image), never decoded.
 * Then properties of hostile clients, each over generated requests: out-of-reach and missing
 * media answer a vendor alike (status, body, headers, statements); bogus media tickets are
 * refused without being counted and never lock a valid ticket out; webhook targets at the
 * metadata service in any spelling are refused, and loopback ones are never reached.
 *
 * Budget: PRODGRAPH_FUZZ_RUNS requests per operation and property, seed PRODGRAPH_FUZZ_SEED
 * (fixed by default, so CI is repeatable). A failure prints the seed and the request; rerun
 * with the same seed and runs to replay it. `npm test` runs SUITE_RUNS; `npm run test:fuzz`
 * runs the full budget, 80. With the same seed a smaller budget runs the first requests of the
 * larger one (fast-check draws run n alike whatever numRuns is), and SUITE_RUNS still reaches
 * every failure the fuzz has caught, each shown by undoing its fix on the seed: a 416 answer
 * carrying the file's Content-Disposition (GET /api/v1/media/{id}/content, request 12 of the
 * operations' property); refused requests writing audit rows (GET /api/v1/production, request 3);
 * the metadata address spelt as an IPv6 form carrying it (6to4, NAT64, …) subscribed as a
 * webhook (request 9 of the webhook targets' property).
 */
const SUITE_RUNS = 20;
const RUNS = Number(process.env.PRODGRAPH_FUZZ_RUNS ?? SUITE_RUNS);
const SEED = Number(process.env.PRODGRAPH_FUZZ_SEED ?? 20_261_123);

const CODES = new Set(Object.keys(ERROR_CODES));

/** fast-check's report, and the assertion that failed (kept as its cause). */
function failureOf(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  const detail = cause instanceof Error ? `\n${cause.message}` : '';
  return `${String((err as Error).message).slice(0, 3000)}${detail.slice(0, 3000)}`;
}

/** Whether a body holds the image, as bytes (multipart) or base64 (JSON). */
const carries = (payload: Buffer, image: Buffer): boolean =>
  payload.includes(image) || payload.includes(image.toString('base64'));

function describeRequest(r: FuzzRequest): string {
  const body = r.payload ? r.payload.subarray(0, 300).toString('latin1') : '';
  return `${r.method} ${r.url.slice(0, 300)} ${JSON.stringify(r.headers).slice(0, 300)} ${JSON.stringify(body)}`;
}

for (const dialect of DIALECTS) {
  describe(`fuzz every OpenAPI operation [${dialect}]`, () => {
    let env: TestEnv;
    let keys: Keys;
    let plausible: Plausible;
    let image: Buffer;
    let progressive: Buffer;
    let snapshot: () => Promise<Snapshot>;
    let seeded: Awaited<ReturnType<typeof seedMedia>>;
    // a loopback receiver: webhook targets point at it, and nothing may ever reach it
    let receiver: Receiver;
    let decodeRefusals = 0;
    let stillVersion: number;
    const statuses = new Map<string, number>();
    const leaks: string[] = [];
    let logLines = 0;
    const watchLine = (line: string) => {
      logLines++;
      const secrets = keys ? [keys.wide, keys.vendor, keys.readOnly, keys.admin, 'sk-fuzz-credential'] : [];
      if (secrets.some((k) => line.includes(k)) && leaks.length < 5) leaks.push(line.slice(0, 2000));
    };
    // a generation provider that always mints, so the token route is fuzzed past its 503 (no provider)
    let provider: Server;

    before(async () => {
      provider = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ token: 'tok_fuzz', expires_in: 300 }));
        });
      });
      await new Promise<void>((done) => provider.listen(0, '127.0.0.1', done));
      env = await createEnv(
        dialect,
        {
          PRODGRAPH_VISION_TOKEN_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/tokens`,
          PRODGRAPH_VISION_CREDENTIAL: 'sk-fuzz-credential',
          // GET /changes?wait=N would hold each run for N seconds: the fuzz checks answers, not waiting
          PRODGRAPH_FEED_MAX_WAIT_SECONDS: '0',
          // every line at every level is searched for the keys the requests carry
          PRODGRAPH_LOG_LEVEL: 'trace',
          // a budget the progressive JPEG below exceeds (a 1024² one needs ~3 MB), the fixture's fits
          PRODGRAPH_MAX_DECODE_MB: '1',
        },
        { logStream: { write: (line) => void watchLine(line) } },
      );
      image = await jpeg(3);
      progressive = await progressiveJpeg(1024);
      const { refs } = await env.import(await fuzzProduction(env.dir, image, progressive));
      stillVersion = refs['v-progressive']!;
      keys = {
        wide: await env.mint({
          production: 'fuzz',
          scopes: ['read', 'write', 'submit:turnover', 'read:money'],
        }),
        vendor: await env.mint({
          production: 'fuzz',
          scopes: ['read', 'submit:turnover', 'read:money'],
          engagement: 'eng-pix',
        }),
        readOnly: await env.mint({ production: 'fuzz', scopes: ['read'] }),
        admin: await env.mint({ production: 'fuzz', scopes: ['admin'] }),
      };
      receiver = await new Receiver().start();
      const receiverPort = Number(new URL(receiver.url).port);
      // media of every kind, in and out of the vendor's reach, before the fuzz adds its own
      seeded = await seedMedia(env, refs, keys, image);
      const ids = Object.values(refs);
      const production = await findProductionByCode(env.handle.db, 'fuzz');
      await queueMoveTask(env.handle.db, {
        productionId: production!.id,
        from: 'plates/r1/sh010.exr',
        to: 'plates/r1/sh011.exr',
        approvedBy: 'fuzz',
      });
      const library = ['plates/r1/sh010.exr', 'plates/r1/sh011.exr', 'plates/r2/new.exr'];
      plausible = {
        strings: [
          'fuzz-fs',
          ...library,
          'costume',
          'vfx',
          'character',
          'Ana Ruiz',
          'k-1',
          '2026-03-01T11:00:00Z',
        ],
        ids: { min: 1, max: Math.max(...ids) + 2 },
        byName: {
          filespace: ['fuzz-fs'],
          path: library,
          to_path: library,
          event_type: ['create', 'modify', 'delete', 'move'],
          source: ['audit_tail', 'scan', 'manual'],
          dedupe_key: ['k-1', 'k-2', 'k-3'],
          detected_at: ['2026-03-01T11:00:00Z', '2026-03-02T09:30:00+01:00'],
          size: [0, 1024, 81234567],
          bytes: [image.toString('base64'), progressive.toString('base64')],
          url: plausibleTargets(receiverPort),
          decided_by: ['Ana Ruiz', 'Ben Okafor'],
          department: ['costume', 'vfx'],
          kind: ['character', 'prop'],
          title: ['Comp v1'],
          task_id: ids.slice(0, 1).concat([1, 2]),
        },
      };
      snapshot = await snapshotter(env);
    });

    after(async () => {
      const summary = [...statuses.entries()].sort().map(([k, n]) => `${k}×${n}`);
      console.log(`fuzz [${dialect}] seed ${SEED}, ${RUNS} runs per operation: ${summary.join(' ')}`);
      await env.close();
      await receiver.close();
      provider.closeAllConnections();
      await new Promise((done) => provider.close(done));
    });

    it('every operation: never a 5xx, always {detail, code} when refused, and a refusal writes nothing', async () => {
      const doc = env.app.swagger() as unknown as Parameters<typeof operationsOf>[0];
      const operations = operationsOf(doc);
      assert.ok(operations.length >= 30, `only ${operations.length} operations in the document`);
      for (const op of operations) {
        const property = fc.asyncProperty(
          requestsFor(op, keys, plausible, [image, progressive]),
          async (req) => {
            const before = await snapshot();
            let res;
            try {
              res = await env.app.inject({
                method: req.method as 'GET',
                url: req.url,
                headers: req.headers,
                ...(req.payload !== undefined ? { payload: req.payload } : {}),
              });
            } catch (err) {
              // light-my-request refuses header values no HTTP client can send; the socket tests cover those
              if ((err as NodeJS.ErrnoException).code === 'ERR_INVALID_CHAR') return;
              throw err;
            }
            const status = res.statusCode;
            statuses.set(String(status), (statuses.get(String(status)) ?? 0) + 1);
            assert.ok(status < 500, `${status} ${res.body.slice(0, 300)}`);
            if (status >= 300 && status !== 304) {
              assert.match(
                String(res.headers['content-type']),
                /^application\/json/,
                `${status} ${res.body}`,
              );
              const body = JSON.parse(res.body) as { detail?: unknown; code?: unknown };
              assert.equal(typeof body.detail, 'string', res.body);
              assert.ok((body.detail as string).length > 0, res.body);
              assert.ok(CODES.has(String(body.code)), `unknown code: ${res.body}`);
            }
            const disposition = res.headers['content-disposition'];
            if (disposition !== undefined) {
              // a stored file: shown in place only when it cannot run, and never outside a sandboxed policy
              assert.match(String(res.headers['content-security-policy']), /default-src 'none'/, req.url);
              // (a 304 has no body and no Content-Type: the cached answer's stands)
              if (/^inline/.test(String(disposition)) && status !== 304) {
                assert.match(
                  String(res.headers['content-type']),
                  /^(image\/(?!svg)|video\/|application\/pdf)/,
                );
              }
            }
            if (
              op.path.endsWith('/storage/media-proxy') &&
              req.payload &&
              carries(req.payload, progressive)
            ) {
              // over the decode budget: refused from its header, never decoded (nor stored)
              assert.ok(status >= 400, `a progressive JPEG over the decode budget answered ${status}`);
              if (status === 413 && JSON.parse(res.body).detail.includes('PRODGRAPH_MAX_DECODE_MB')) {
                assert.equal(JSON.parse(res.body).code, 'too_large');
                decodeRefusals++;
              }
            }
            if (req.method !== 'GET' && req.payload && depthOver(req.payload.toString('utf8')) > 0) {
              // too deep is refused before it is parsed: 400, unless the request was refused before its body was read
              assert.ok(
                [400, 401, 403, 404, 405, 413, 415].includes(status),
                `a body nested too deep answered ${status} ${res.body.slice(0, 300)}`,
              );
              if (status === 400) assert.equal(JSON.parse(res.body).code, 'malformed_request');
            }
            if (status >= 400 || req.method === 'GET') {
              assert.deepEqual(
                await snapshot(),
                before,
                `${status} ${res.body.slice(0, 300)} changed the state`,
              );
            }
          },
        );
        try {
          await fc.assert(property, { seed: SEED, numRuns: RUNS, endOnFailure: true });
        } catch (err) {
          const failing = (err as { counterexample?: [FuzzRequest] }).counterexample?.[0];
          throw new Error(
            `${op.method} ${op.path} failed (replay: PRODGRAPH_FUZZ_SEED=${SEED} PRODGRAPH_FUZZ_RUNS=${RUNS})\n` +
              (failing ? `request: ${describeRequest(failing)}\n` : '') +
              failureOf(err),
          );
        }
      }
      console.log(
        `fuzz [${dialect}]: ${logLines} log lines (trace) searched for every key; ` +
          `${decodeRefusals} progressive JPEGs refused over the decode budget`,
      );
      assert.deepEqual(leaks, [], 'a key reached a log line');
      assert.equal(receiver.got.length, 0, 'a webhook reached the loopback receiver');
    });

    const replay = async <T>(what: string, property: fc.IAsyncProperty<[T]>, examples: T[] = []) => {
      try {
        await fc.assert(property, {
          seed: SEED,
          numRuns: RUNS,
          endOnFailure: true,
          examples: examples.map((e) => [e] as [T]),
        });
      } catch (err) {
        throw new Error(
          `${what} failed (replay: PRODGRAPH_FUZZ_SEED=${SEED} PRODGRAPH_FUZZ_RUNS=${RUNS})\n` +
            failureOf(err),
        );
      }
    };

    it('images over the decode budget, several at once: 413 from the media proxy, 422 from the look brief, nothing stored', async () => {
      const larger = await progressiveJpeg(2048);
      await replay(
        'decode budget',
        decodeBudget(env, keys.wide, snapshot, [progressive, larger], stillVersion),
      );
    });

    it('a vendor: media out of reach and media that does not exist answer alike, with the same statements', async () => {
      const { property, examples, hidden } = await mediaLookalikes(env, keys.vendor);
      await replay('media out of reach vs missing', property, examples);
      console.log(`fuzz [${dialect}]: ${hidden()} out-of-reach media compared with missing ones`);
      assert.ok(hidden() >= seeded.hidden, `only ${hidden()} out-of-reach answers compared`);
    });

    it('bogus media tickets: refused without RateLimit headers, never counted, never locking a valid ticket out', async () => {
      const { property, afterwards, close } = await ticketProperty(env, keys.readOnly);
      try {
        await replay('bogus media tickets', property);
        await afterwards();
      } finally {
        await close();
      }
    });

    it('webhook targets: the metadata service in any spelling refused (422), loopback subscribed but never reached', async () => {
      const { property, afterwards } = webhookProperty(env, keys, receiver);
      await replay('webhook targets', property);
      await afterwards();
    });
  });
}
