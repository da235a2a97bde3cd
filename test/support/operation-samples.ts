import type { LightMyRequestResponse } from 'fastify';
import { gunzipSync } from 'node:zlib';
import sharp from 'sharp';
import { queueMoveTask } from '../../src/modules/storage-tasks/service.js';
import type { TestEnv } from './env.js';
import { multipart } from './multipart.js';
import { ALL_SCOPES, png, type Refs } from './round-trip.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** One request for one operation of the document, and the status it is meant to meet. */
export interface Sample {
  operationId: string;
  method: 'GET' | 'POST' | 'DELETE';
  /** The path as the document writes it (`/api/v1/assets/{node_id}`). */
  path: string;
  status: number;
  send: () => Promise<LightMyRequestResponse>;
}

/** What every group of samples shares: the keys, the refs, the request helpers, what was made. */
interface Kit {
  refs: Refs;
  keys: { wide: string; admin: string; vendor: string };
  db: TestEnv['handle']['db'];
  productionId: number;
  made: Record<string, any>;
  send: (
    method: Sample['method'],
    url: string,
    options?: { token?: string | null; json?: unknown; form?: ReturnType<typeof multipart> },
  ) => Promise<LightMyRequestResponse>;
  /** Keeps what `pick` takes from the answer's JSON (gzip-encoded or not) under `name`. */
  keep: (
    name: string,
    pick: (body: any) => unknown,
  ) => (res: LightMyRequestResponse) => Promise<LightMyRequestResponse>;
}

const A = '/api/v1';

const sample = (
  operationId: string,
  method: Sample['method'],
  path: string,
  status: number,
  send: () => Promise<LightMyRequestResponse>,
): Sample => ({ operationId, method, path, status, send });

/** How the samples are sent: in process (the default), or over HTTP (`injectOver` in prism.ts). */
export interface SampleTransport {
  inject?: (options: {
    method: string;
    url: string;
    headers: Record<string, string>;
    payload?: string | Buffer;
  }) => Promise<LightMyRequestResponse>;
  /** `Accept-Encoding` on every request (default gzip); null sends none. */
  acceptEncoding?: string | null;
  /** The image every upload sends (default: a PNG for the submission, a JPEG for the version). */
  still?: { content: Buffer; filename: string; contentType: string };
}

/**
 * A request for every operation of the document, each sent as a client would (its key,
 * `Accept-Encoding: gzip`), to be run in order: later ones use what earlier ones made (a key, a
 * grant, a webhook). Built on the round-trip production (`importRoundTrip(env, 'film')`).
 */
export async function operationSamples(
  env: TestEnv,
  refs: Refs,
  transport: SampleTransport = {},
): Promise<Sample[]> {
  const inject = transport.inject ?? ((options) => env.app.inject(options));
  const encoding = transport.acceptEncoding === undefined ? 'gzip' : transport.acceptEncoding;
  const keys = {
    wide: await env.mint({ production: 'film', scopes: ALL_SCOPES }),
    admin: await env.mint({ production: 'film', scopes: ['admin'] }),
    vendor: await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' }),
  };
  const { id: productionId } = await env.handle.db
    .selectFrom('productions')
    .where('code', '=', 'film')
    .select('id')
    .executeTakeFirstOrThrow();
  const made: Record<string, any> = {};
  const send: Kit['send'] = (method, url, options = {}) => {
    const token = options.token === undefined ? keys.wide : options.token;
    return inject({
      method,
      url,
      headers: {
        ...(encoding ? { 'accept-encoding': encoding } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(options.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.form?.headers,
      },
      ...(options.json !== undefined ? { payload: JSON.stringify(options.json) } : {}),
      ...(options.form ? { payload: options.form.payload } : {}),
    });
  };
  const keep: Kit['keep'] = (name, pick) => async (res) => {
    const encoded = res.headers['content-encoding'] === 'gzip';
    made[name] = pick(JSON.parse((encoded ? gunzipSync(res.rawPayload) : res.rawPayload).toString('utf8')));
    return res;
  };
  const kit: Kit = { refs, keys, db: env.handle.db, productionId, made, send, keep };
  return [...readSamples(kit), ...(await writeSamples(kit, transport)), ...adminSamples(kit)];
}

/** The service, the reads and the round trip's reads (a vendor's where it has its own). */
function readSamples({ refs, keys, made, send, keep }: Kit): Sample[] {
  const get = (operationId: string, path: string, url = path) =>
    sample(operationId, 'GET', path, 200, () => send('GET', url));
  return [
    sample('getHealth', 'GET', '/healthz', 200, () => send('GET', '/healthz', { token: null })),
    get('getCurrentKey', `${A}/key`),
    get('getProduction', `${A}/production`),
    sample('listDepartments', 'GET', `${A}/departments`, 200, () =>
      send('GET', `${A}/departments`).then(keep('slug', (b) => b[0].slug)),
    ),
    sample('getDepartment', 'GET', `${A}/departments/{slug}`, 200, () =>
      send('GET', `${A}/departments/${made.slug}`),
    ),
    get('listScenes', `${A}/scenes`),
    get('listAssets', `${A}/assets`, `${A}/assets?limit=2`),
    get('getAsset', `${A}/assets/{node_id}`, `${A}/assets/${refs['co-coat']}`),
    get('listShootDays', `${A}/schedule`),
    get('listDeliveries', `${A}/deliveries`),
    get('listApprovals', `${A}/approvals`),
    get('listScriptChanges', `${A}/script-changes`),
    get('listActivity', `${A}/activity`),
    get('listChanges', `${A}/changes`, `${A}/changes?limit=5`),
    get('listJobs', `${A}/jobs`),
    get('listPeople', `${A}/people`),
    sample('getMediaTicket', 'GET', `${A}/media-ticket`, 200, () =>
      send('GET', `${A}/media-ticket`).then(keep('ticket', (b) => b.ticket)),
    ),
    get('listBundles', `${A}/bundles`),
    sample('getSceneBundle', 'GET', `${A}/bundles/scene/{node_id}`, 200, () =>
      send('GET', `${A}/bundles/scene/${refs.sc1}`).then(
        keep('media', (b) => b.assets.flatMap((a: any) => a.released_versions).find((v: any) => v.media_id)),
      ),
    ),
    get(
      'getCharacterBundle',
      `${A}/bundles/character/{node_id}`,
      `${A}/bundles/character/${refs['ch-mara']}`,
    ),
    sample('getMedia', 'GET', `${A}/media/{id}`, 200, () => send('GET', `${A}/media/${made.media.media_id}`)),
    sample('getMediaContent', 'GET', `${A}/media/{id}/content`, 200, () =>
      send('GET', `${A}/media/${made.media.media_id}/content`),
    ),
    sample('getMediaFileByTicket', 'GET', '/media/{path}', 200, () =>
      send('GET', `${made.media.media_path}?t=${encodeURIComponent(made.ticket)}`, { token: null }),
    ),
    sample('listTurnovers', 'GET', `${A}/turnovers`, 200, () =>
      send('GET', `${A}/turnovers`, { token: keys.vendor }),
    ),
    sample('listSubmissions', 'GET', `${A}/submissions`, 200, () =>
      send('GET', `${A}/submissions`, { token: keys.vendor }),
    ),
    sample('getPurchaseOrders', 'GET', `${A}/purchase-orders`, 200, () =>
      send('GET', `${A}/purchase-orders`, { token: keys.vendor }),
    ),
    get('listStorageTasks', `${A}/storage/tasks`),
  ];
}

/** Every write, the storage agent's, vision's and MCP's (and the two /mcp methods it refuses). */
async function writeSamples(
  { refs, keys, db, productionId, send, keep, made }: Kit,
  transport: SampleTransport,
): Promise<Sample[]> {
  const jpeg = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#888' } })
    .jpeg()
    .toBuffer();
  const plate = transport.still ?? {
    content: await png('#246'),
    filename: 'plate.png',
    contentType: 'image/png',
  };
  const version = transport.still ?? { content: jpeg, filename: 'still.jpg', contentType: 'image/jpeg' };
  // the package sample (adminSamples) uploads the same file
  made.still = plate;
  const post = (operationId: string, path: string, status: number, url: string, json?: unknown) =>
    sample(operationId, 'POST', path, status, () => send('POST', url, json === undefined ? {} : { json }));
  return [
    sample('submitTurnover', 'POST', `${A}/turnovers/{id}/submissions`, 200, () =>
      send('POST', `${A}/turnovers/${refs['dl-plates']}/submissions`, {
        token: keys.vendor,
        form: multipart([
          { name: 'title', value: 'Plates v1' },
          { name: 'files', ...plate },
        ]),
      }).then(keep('submission', (b) => b.id)),
    ),
    post('createAsset', `${A}/assets`, 201, `${A}/assets`, { label: 'Sampled prop' }),
    post('addAssetNote', `${A}/assets/{node_id}/notes`, 201, `${A}/assets/${refs['co-coat']}/notes`, {
      text: 'Reads wet on camera',
    }),
    sample('landAssetVersion', 'POST', `${A}/assets/{node_id}/versions`, 201, () =>
      send('POST', `${A}/assets/${refs['co-coat']}/versions`, {
        form: multipart([{ name: 'file', ...version }]),
      }),
    ),
    post(
      'decideApproval',
      `${A}/approvals/{approval_id}/decide`,
      200,
      `${A}/approvals/${refs['ap-jon']}/decide`,
      {
        decision: 'approved',
        decided_by: 'Ben Okafor',
      },
    ),
    post('postStorageEvents', `${A}/storage/events`, 200, `${A}/storage/events`, {
      filespace: 'film-fs',
      events: [
        {
          event_type: 'create',
          path: 'sampled/a.exr',
          source: 'scan',
          dedupe_key: 'sampled-a',
          detected_at: '2026-05-01T10:00:00Z',
        },
      ],
    }),
    post('uploadMediaProxy', `${A}/storage/media-proxy`, 200, `${A}/storage/media-proxy`, {
      filespace: 'film-fs',
      path: 'sampled/a.exr',
      bytes: jpeg.toString('base64'),
    }),
    sample('ackStorageTask', 'POST', `${A}/storage/tasks/ack`, 200, async () => {
      const task = await queueMoveTask(db, {
        productionId,
        from: 'sampled/a.exr',
        to: 'sampled/b.exr',
        approvedBy: 'Ada Admin',
      });
      return send('POST', `${A}/storage/tasks/ack`, { json: { task_id: task.id, ok: true, note: 'moved' } });
    }),
    // no generation provider is configured here: the mint answers 503
    post('createVisionSessionToken', `${A}/vision/session-token`, 503, `${A}/vision/session-token`, {}),
    post(
      'createLookBrief',
      `${A}/vision/looks/{version_id}/brief`,
      200,
      `${A}/vision/looks/${refs['v-coat-1']}/brief`,
    ),
    post('callMcp', '/mcp', 200, '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    sample('openMcpStream', 'GET', '/mcp', 405, () => send('GET', '/mcp', { token: null })),
    sample('endMcpSession', 'DELETE', '/mcp', 405, () => send('DELETE', '/mcp', { token: null })),
  ];
}

/** Administration, each write's record used by the next (archive what was engaged, …). */
function adminSamples({ refs, keys, made, send, keep }: Kit): Sample[] {
  const E = `${A}/admin/engagements`;
  const D = `${A}/admin/deliveries`;
  const as = (method: Sample['method'], url: string, body?: unknown) =>
    send(method, url, { token: keys.admin, ...(body === undefined ? {} : { json: body }) });
  const get = (operationId: string, path: string, url = path) =>
    sample(operationId, 'GET', path, 200, () => as('GET', url));
  const view = `${E}/${refs['eng-pix']}/view`;
  return [
    get('listOrganisations', `${A}/admin/organisations`),
    sample('createOrganisation', 'POST', `${A}/admin/organisations`, 201, () =>
      as('POST', `${A}/admin/organisations`, { name: 'Sampled Pictures' }),
    ),
    sample('addDeliveryFiles', 'POST', `${D}/{id}/files`, 201, () =>
      send('POST', `${D}/${refs['dl-plates']}/files`, {
        token: keys.admin,
        form: multipart([
          { name: 'label', value: 'plate-a.png' },
          { name: 'files', ...(made.still as { content: Buffer; filename: string; contentType: string }) },
        ]),
      }).then(keep('packageFile', (b) => b.files[0].id)),
    ),
    sample('removeDeliveryFile', 'POST', `${D}/{id}/files/{media_id}/remove`, 200, () =>
      as('POST', `${D}/${refs['dl-plates']}/files/${made.packageFile}/remove`),
    ),
    sample('setDeliveryStatus', 'POST', `${D}/{id}/status`, 200, () =>
      as('POST', `${D}/${refs['dl-plates']}/status`, { status: 'sent', note: 'sampled' }),
    ),
    sample('reviewSubmission', 'POST', `${A}/admin/submissions/{id}/review`, 200, () =>
      as('POST', `${A}/admin/submissions/${made.submission}/review`, {
        decision: 'changes_requested',
        note: 'Edge matte chatters',
      }),
    ),
    get('searchGrantTargets', `${A}/admin/grant-targets`, `${A}/admin/grant-targets?kind=scene`),
    get('listEngagements', E),
    sample('createEngagement', 'POST', E, 201, () =>
      as('POST', E, { ref: 'eng-sampled', organisation_id: refs['org-hal'] }).then(
        keep('engagement', (b) => b.id),
      ),
    ),
    sample('archiveEngagement', 'POST', `${E}/{id}/archive`, 200, () =>
      as('POST', `${E}/${made.engagement}/archive`),
    ),
    get('getEngagement', `${E}/{id}`, `${E}/${refs['eng-pix']}`),
    get('getEngagementView', `${E}/{id}/view`, view),
    get(
      'getEngagementSceneBundle',
      `${E}/{id}/view/bundles/scene/{node_id}`,
      `${view}/bundles/scene/${refs.sc1}`,
    ),
    get(
      'getEngagementCharacterBundle',
      `${E}/{id}/view/bundles/character/{node_id}`,
      `${view}/bundles/character/${refs['ch-mara']}`,
    ),
    sample('getEngagementMediaContent', 'GET', `${E}/{id}/view/media/{media_id}/content`, 200, () =>
      as('GET', `${view}/media/${made.media.media_id}/content`),
    ),
    get('listGrants', `${A}/admin/grants`),
    sample('createGrant', 'POST', `${A}/admin/grants`, 201, () =>
      as('POST', `${A}/admin/grants`, { engagement_id: refs['eng-none'], kind: 'own_po' }).then(
        keep('grant', (b) => b.id),
      ),
    ),
    sample('revokeGrant', 'POST', `${A}/admin/grants/{id}/revoke`, 200, () =>
      as('POST', `${A}/admin/grants/${made.grant}/revoke`),
    ),
    get('listKeys', `${A}/admin/keys`),
    sample('createKey', 'POST', `${A}/admin/keys`, 201, () =>
      as('POST', `${A}/admin/keys`, { label: 'sampled' }).then(keep('key', (b) => b.id)),
    ),
    sample('revokeKey', 'POST', `${A}/admin/keys/{id}/revoke`, 200, () =>
      as('POST', `${A}/admin/keys/${made.key}/revoke`),
    ),
    get('listWebhooks', `${A}/admin/webhooks`),
    sample('createWebhook', 'POST', `${A}/admin/webhooks`, 201, () =>
      as('POST', `${A}/admin/webhooks`, { url: 'http://127.0.0.1:9/sampled' }).then(
        keep('webhook', (b) => b.id),
      ),
    ),
    ...(['pause', 'resume'] as const).map((act) =>
      sample(`${act}Webhook`, 'POST', `${A}/admin/webhooks/{id}/${act}`, 200, () =>
        as('POST', `${A}/admin/webhooks/${made.webhook}/${act}`),
      ),
    ),
    sample('listWebhookDeliveries', 'GET', `${A}/admin/webhooks/{id}/deliveries`, 200, () =>
      as('GET', `${A}/admin/webhooks/${made.webhook}/deliveries`),
    ),
    sample('removeWebhook', 'POST', `${A}/admin/webhooks/{id}/remove`, 200, () =>
      as('POST', `${A}/admin/webhooks/${made.webhook}/remove`),
    ),
    sample('getSignInOptions', 'GET', `${A}/auth/sign-in-options`, 200, () =>
      send('GET', `${A}/auth/sign-in-options`, { token: null }),
    ),
    // no identity provider is configured here: the sign-in routes answer 404, as documented
    sample('beginSignIn', 'GET', `${A}/auth/oidc/login`, 404, () =>
      send('GET', `${A}/auth/oidc/login`, { token: null }),
    ),
    sample('finishSignIn', 'GET', `${A}/auth/oidc/callback`, 404, () =>
      send('GET', `${A}/auth/oidc/callback?code=x&state=y`, { token: null }),
    ),
    // a key is no console session
    sample('getConsoleSession', 'GET', `${A}/auth/session`, 404, () => as('GET', `${A}/auth/session`)),
    sample('signOut', 'POST', `${A}/auth/sign-out`, 404, () => as('POST', `${A}/auth/sign-out`)),
    get('listAudit', `${A}/admin/audit`),
    get('listSignInPeople', `${A}/admin/sign-in-people`),
    sample('allowSignInPerson', 'POST', `${A}/admin/sign-in-people`, 200, () =>
      as('POST', `${A}/admin/sign-in-people`, { email: 'sampled@studio.test', role: 'viewer' }).then(
        keep('signIn', (b) => b.id),
      ),
    ),
    sample('withdrawSignInPerson', 'DELETE', `${A}/admin/sign-in-people/{id}`, 204, () =>
      as('DELETE', `${A}/admin/sign-in-people/${made.signIn}`),
    ),
    get('listConsoleSessions', `${A}/admin/sessions`),
    sample('revokeConsoleSession', 'DELETE', `${A}/admin/sessions/{id}`, 404, () =>
      as('DELETE', `${A}/admin/sessions/999999`),
    ),
  ];
}
