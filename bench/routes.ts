import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Request } from 'autocannon';
import type { Fixture } from './fixture.js';
import type { ReadPlan } from './wrk.js';

/** Everything a route's measurement needs besides the fixture: the scene bundles' current ETags. */
export interface Prepared {
  fixture: Fixture;
  sceneEtags: Map<number, string>;
  /** Distinguishes this run's storage events from any earlier run's (a replay would be a duplicate). */
  runId: string;
}

export interface RouteSpec {
  name: string;
  label: (p: Prepared) => string;
  kind: 'control' | 'read' | 'write';
  /** The status every response must have; anything else marks the row as failed. */
  expect: number;
  /** Concurrent connections, when not the run's default. */
  connections?: number;
  /** Items per request, for routes whose figure of merit is items per second. */
  items?: { perRequest: number; unit: string };
  /** A read: the paths walked in turn and their headers (wrk or autocannon sends them). */
  plan?: (p: Prepared) => ReadPlan;
  /**
   * A write: the requests autocannon sends, bodies built per request. Called once per load (the
   * warm-up, then the measurement), each call with keys of its own: a key the warm-up sent would
   * be answered as a replay, which is not the write being measured.
   */
  requests?: (p: Prepared) => Request[];
  /** A write: how many of the items one answer reports as not new (a replay, a duplicate). */
  repeated?: (body: string, headers: IncomingHttpHeaders) => number;
}

/** A key prefix of one load's own: this run's, and this call's. */
const loadKey = (p: Prepared) => `bench-${p.runId}-${randomBytes(4).toString('hex')}`;

/** The requests autocannon sends for a route (a read's plan walked path by path). */
export function requestsOf(spec: RouteSpec, p: Prepared): Request[] {
  if (spec.requests) return spec.requests(p);
  const plan = spec.plan!(p);
  let n = 0;
  return [
    {
      method: 'GET',
      setupRequest: (req: Request) => {
        const i = n++ % plan.paths.length;
        return { ...req, path: plan.paths[i], headers: { ...plan.headers, ...plan.perPath?.[i] } };
      },
    },
  ];
}

export const EVENTS_PER_BATCH = 1_000;
const API = '/api/v1';

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

function eventBatch(p: Prepared, prefix: string, batch: number): string {
  const at = new Date().toISOString();
  const events = Array.from({ length: EVENTS_PER_BATCH }, (_, i) => ({
    event_type: 'create',
    path: `bench/${prefix}/b${batch}/f${i}.exr`,
    source: 'audit_tail',
    dedupe_key: `${prefix}-${batch}-${i}`,
    detected_at: at,
  }));
  return JSON.stringify({ filespace: p.fixture.filespace, events });
}

/** The route list, in the order measured (reads first, so writes cannot skew them). */
export const ROUTES: RouteSpec[] = [
  {
    name: 'control',
    label: () => 'control: `GET /bench/hello` (same Fastify app, no database)',
    kind: 'control',
    expect: 200,
    plan: () => ({ paths: ['/bench/hello'], headers: {} }),
  },
  {
    name: 'scenes',
    label: (p) => `\`GET /scenes\` (${p.fixture.sceneCount} scenes)`,
    kind: 'read',
    expect: 200,
    plan: (p) => ({ paths: [`${API}/scenes`], headers: auth(p.fixture.wideKey) }),
  },
  {
    name: 'scenes-gzip',
    label: (p) => `\`GET /scenes\` (${p.fixture.sceneCount} scenes), \`Accept-Encoding: gzip\``,
    kind: 'read',
    expect: 200,
    plan: (p) => ({
      paths: [`${API}/scenes`],
      headers: { ...auth(p.fixture.wideKey), 'accept-encoding': 'gzip' },
    }),
  },
  {
    name: 'assets-gzip',
    label: (p) => `\`GET /assets\` (all ${p.fixture.assetCount} rows), \`Accept-Encoding: gzip\``,
    kind: 'read',
    expect: 200,
    plan: (p) => ({
      paths: [`${API}/assets`],
      headers: { ...auth(p.fixture.wideKey), 'accept-encoding': 'gzip' },
    }),
  },
  {
    name: 'assets-department',
    label: (p) =>
      `\`GET /assets?department=${p.fixture.department.slug}\` (${p.fixture.department.assets} rows)`,
    kind: 'read',
    expect: 200,
    plan: (p) => ({
      paths: [`${API}/assets?department=${p.fixture.department.slug}`],
      headers: auth(p.fixture.wideKey),
    }),
  },
  {
    name: 'asset',
    label: () => '`GET /assets/{id}` (characters)',
    kind: 'read',
    expect: 200,
    plan: (p) => ({
      paths: p.fixture.characters.map((id) => `${API}/assets/${id}`),
      headers: auth(p.fixture.wideKey),
    }),
  },
  {
    name: 'production',
    label: () => '`GET /production`',
    kind: 'read',
    expect: 200,
    plan: (p) => ({ paths: [`${API}/production`], headers: auth(p.fixture.wideKey) }),
  },
  {
    name: 'scene-bundle',
    label: () => '`GET /bundles/scene/{id}`, production-wide key',
    kind: 'read',
    expect: 200,
    plan: (p) => ({
      paths: p.fixture.scenes.map((id) => `${API}/bundles/scene/${id}`),
      headers: auth(p.fixture.wideKey),
    }),
  },
  {
    name: 'scene-bundle-304',
    label: () => 'same with a matching `If-None-Match` (304)',
    kind: 'read',
    expect: 304,
    plan: (p) => ({
      paths: p.fixture.scenes.map((id) => `${API}/bundles/scene/${id}`),
      headers: auth(p.fixture.wideKey),
      perPath: p.fixture.scenes.map((id) => ({ 'if-none-match': p.sceneEtags.get(id)! })),
    }),
  },
  {
    name: 'scene-bundle-vendor',
    label: (p) => `scene bundle, engagement-bound key (${p.fixture.vendorGrants} grants)`,
    kind: 'read',
    expect: 200,
    plan: (p) => ({
      paths: p.fixture.vendorScenes.map((id) => `${API}/bundles/scene/${id}`),
      headers: auth(p.fixture.vendorKey),
    }),
  },
  {
    name: 'character-bundle-vendor',
    label: () => '`GET /bundles/character/{id}`, engagement-bound key',
    kind: 'read',
    expect: 200,
    plan: (p) => ({
      paths: p.fixture.vendorCharacters.map((id) => `${API}/bundles/character/${id}`),
      headers: auth(p.fixture.vendorKey),
    }),
  },
  {
    name: 'turnovers',
    label: () => '`GET /turnovers`, engagement-bound key',
    kind: 'read',
    expect: 200,
    plan: (p) => ({ paths: [`${API}/turnovers`], headers: auth(p.fixture.vendorKey) }),
  },
  {
    name: 'purchase-orders',
    label: () => '`GET /purchase-orders`, engagement-bound key',
    kind: 'read',
    expect: 200,
    plan: (p) => ({ paths: [`${API}/purchase-orders`], headers: auth(p.fixture.vendorKey) }),
  },
  {
    name: 'storage-events',
    label: () => `\`POST /storage/events\`, ${EVENTS_PER_BATCH.toLocaleString('en')}-event batches`,
    kind: 'write',
    expect: 200,
    connections: 4,
    items: { perRequest: EVENTS_PER_BATCH, unit: 'events/s' },
    repeated: (body) => (JSON.parse(body) as { duplicates?: number }).duplicates ?? 0,
    requests: (p) => {
      let batch = 0;
      const prefix = loadKey(p);
      return [
        {
          method: 'POST',
          path: `${API}/storage/events`,
          headers: { ...auth(p.fixture.wideKey), 'content-type': 'application/json' },
          setupRequest: (req: Request) => ({ ...req, body: eventBatch(p, prefix, batch++) }),
        },
      ];
    },
  },
  {
    name: 'notes',
    label: () => '`POST /assets/{id}/notes` with an `Idempotency-Key`',
    kind: 'write',
    expect: 201,
    items: { perRequest: 1, unit: 'writes/s' },
    repeated: (_body, headers) => (headers['idempotent-replayed'] === 'true' ? 1 : 0),
    requests: (p) => {
      let n = 0;
      const prefix = loadKey(p);
      return [
        {
          method: 'POST',
          headers: { ...auth(p.fixture.wideKey), 'content-type': 'application/json' },
          setupRequest: (req: Request) => {
            const id = p.fixture.assets[n % p.fixture.assets.length]!;
            // a client retrying safely sends a key with every write: the key's record is
            // written in the note's own transaction, so it is part of what is measured
            return {
              ...req,
              path: `${API}/assets/${id}/notes`,
              headers: { ...req.headers, 'idempotency-key': `${prefix}-note-${n}` },
              body: JSON.stringify({ text: `bench note ${n++}` }),
            };
          },
        },
      ];
    },
  },
];
