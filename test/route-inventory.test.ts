import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SCOPES } from '../src/domain/vocabulary.js';
import { ERROR_CODES } from '../src/errors.js';
import { createEnv, type TestEnv } from './support/env.js';
import { deref } from './support/openapi.js';

/** Routes that take no key: the base URL (a pointer to /docs), health, the off-plane file route (a ticket instead), the document itself and the console page (it asks for a key itself). */
// GET and DELETE /mcp answer 405 to anyone: there is nothing behind them to protect
const PUBLIC = new Set([
  'GET /',
  'GET /healthz',
  'GET /media/*',
  'GET /api/v1/openapi.json',
  'GET /mcp',
  'DELETE /mcp',
  'GET /console',
  // the console's sign-in with the identity provider: a browser navigation, before any session
  'GET /api/v1/auth/sign-in-options',
  'GET /api/v1/auth/oidc/login',
  'GET /api/v1/auth/oidc/callback',
]);
/** Static files served as they are (the docs UI's and the console's built assets), like /docs itself. */
const staticFile = (url: string) => url.startsWith('/docs') || url.startsWith('/console/assets/');
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/*
 * POST /mcp takes any valid key (each tool then applies its REST twin's scope and surface), and its
 * body is a JSON-RPC envelope whose extra members JSON-RPC 2.0 does not refuse.
 */
// GET /api/v1/key tells any valid key about itself (its scopes, production, engagement).
// GET /api/v1/auth/session and POST /api/v1/auth/sign-out: any console session (a key is 404).
const ANY_KEY = new Set([
  'POST /mcp',
  'GET /api/v1/key',
  'GET /api/v1/auth/session',
  'POST /api/v1/auth/sign-out',
]);

interface Operation {
  operationId?: string;
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  security?: unknown[];
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

/** `/assets/:node_id` and `/media/*` as the document writes them (the wildcard is named `path`). */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');

/**
 * Every operation's id: a method name in every generated client, so stable from now on. A new
 * route takes a camelCase verb + noun id and is added here; a missing or duplicate id fails.
 */
const OPERATION_IDS: Record<string, string> = {
  'GET /healthz': 'getHealth',
  'GET /media/{path}': 'getMediaFileByTicket',
  'POST /mcp': 'callMcp',
  'GET /mcp': 'openMcpStream',
  'DELETE /mcp': 'endMcpSession',
  'GET /api/v1/production': 'getProduction',
  'GET /api/v1/departments': 'listDepartments',
  'GET /api/v1/departments/{slug}': 'getDepartment',
  'GET /api/v1/scenes': 'listScenes',
  'GET /api/v1/assets': 'listAssets',
  'GET /api/v1/assets/{node_id}': 'getAsset',
  'GET /api/v1/schedule': 'listShootDays',
  'GET /api/v1/deliveries': 'listDeliveries',
  'GET /api/v1/approvals': 'listApprovals',
  'GET /api/v1/script-changes': 'listScriptChanges',
  'GET /api/v1/activity': 'listActivity',
  'GET /api/v1/changes': 'listChanges',
  'GET /api/v1/jobs': 'listJobs',
  'GET /api/v1/people': 'listPeople',
  'GET /api/v1/media-ticket': 'getMediaTicket',
  'POST /api/v1/assets': 'createAsset',
  'POST /api/v1/assets/{node_id}/notes': 'addAssetNote',
  'POST /api/v1/assets/{node_id}/versions': 'landAssetVersion',
  'POST /api/v1/approvals/{approval_id}/decide': 'decideApproval',
  'POST /api/v1/storage/events': 'postStorageEvents',
  'POST /api/v1/storage/media-proxy': 'uploadMediaProxy',
  'GET /api/v1/storage/tasks': 'listStorageTasks',
  'POST /api/v1/storage/tasks/ack': 'ackStorageTask',
  'GET /api/v1/bundles': 'listBundles',
  'GET /api/v1/bundles/scene/{node_id}': 'getSceneBundle',
  'GET /api/v1/bundles/character/{node_id}': 'getCharacterBundle',
  'GET /api/v1/turnovers': 'listTurnovers',
  'POST /api/v1/turnovers/{id}/submissions': 'submitTurnover',
  'GET /api/v1/submissions': 'listSubmissions',
  'GET /api/v1/media/{id}': 'getMedia',
  'GET /api/v1/media/{id}/content': 'getMediaContent',
  'GET /api/v1/purchase-orders': 'getPurchaseOrders',
  'POST /api/v1/vision/session-token': 'createVisionSessionToken',
  'POST /api/v1/vision/looks/{version_id}/brief': 'createLookBrief',
  'GET /api/v1/admin/audit': 'listAudit',
  'GET /api/v1/admin/engagements': 'listEngagements',
  'GET /api/v1/admin/engagements/{id}': 'getEngagement',
  'POST /api/v1/admin/engagements': 'createEngagement',
  'POST /api/v1/admin/engagements/{id}/archive': 'archiveEngagement',
  'GET /api/v1/admin/grants': 'listGrants',
  'POST /api/v1/admin/grants': 'createGrant',
  'POST /api/v1/admin/grants/{id}/revoke': 'revokeGrant',
  'GET /api/v1/admin/keys': 'listKeys',
  'POST /api/v1/admin/keys': 'createKey',
  'POST /api/v1/admin/keys/{id}/revoke': 'revokeKey',
  'GET /api/v1/admin/webhooks': 'listWebhooks',
  'POST /api/v1/admin/webhooks': 'createWebhook',
  'POST /api/v1/admin/webhooks/{id}/pause': 'pauseWebhook',
  'POST /api/v1/admin/webhooks/{id}/resume': 'resumeWebhook',
  'POST /api/v1/admin/webhooks/{id}/remove': 'removeWebhook',
  'GET /api/v1/admin/webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'GET /api/v1/admin/organisations': 'listOrganisations',
  'POST /api/v1/admin/organisations': 'createOrganisation',
  'POST /api/v1/admin/deliveries/{id}/files': 'addDeliveryFiles',
  'POST /api/v1/admin/deliveries/{id}/files/{media_id}/remove': 'removeDeliveryFile',
  'POST /api/v1/admin/deliveries/{id}/status': 'setDeliveryStatus',
  'POST /api/v1/admin/submissions/{id}/review': 'reviewSubmission',
  'GET /api/v1/admin/grant-targets': 'searchGrantTargets',
  'GET /api/v1/admin/engagements/{id}/view': 'getEngagementView',
  'GET /api/v1/admin/engagements/{id}/view/bundles/scene/{node_id}': 'getEngagementSceneBundle',
  'GET /api/v1/admin/engagements/{id}/view/bundles/character/{node_id}': 'getEngagementCharacterBundle',
  'GET /api/v1/admin/engagements/{id}/view/media/{media_id}/content': 'getEngagementMediaContent',
  'GET /api/v1/key': 'getCurrentKey',
  'GET /api/v1/auth/sign-in-options': 'getSignInOptions',
  'GET /api/v1/auth/oidc/login': 'beginSignIn',
  'GET /api/v1/auth/oidc/callback': 'finishSignIn',
  'GET /api/v1/auth/session': 'getConsoleSession',
  'POST /api/v1/auth/sign-out': 'signOut',
  'GET /api/v1/admin/sign-in-people': 'listSignInPeople',
  'POST /api/v1/admin/sign-in-people': 'allowSignInPerson',
  'DELETE /api/v1/admin/sign-in-people/{id}': 'withdrawSignInPerson',
  'GET /api/v1/admin/sessions': 'listConsoleSessions',
  'DELETE /api/v1/admin/sessions/{id}': 'revokeConsoleSession',
};

/** camelCase verb + noun: a lower-case verb, then one or more capitalised words. */
const OPERATION_ID = /^[a-z]+(?:[A-Z][a-z0-9]*)+$/;

// One app answers for both databases: the routes do not depend on the dialect.
describe('route inventory: Fastify routes, declared auth and the OpenAPI document agree', () => {
  let env: TestEnv;
  let doc: {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Record<string, unknown>> };
  };
  const errorBody = () =>
    doc.components.schemas.ErrorBody as {
      required?: string[];
      properties?: { code?: { enum?: string[] } };
    };
  before(async () => {
    env = await createEnv('sqlite');
    doc = env.app.swagger() as unknown as typeof doc;
  });
  after(() => env.close());

  const served = () =>
    env.app.routeTable.filter((r) => !staticFile(r.url) && !r.hidden && r.method !== 'OPTIONS');

  it('every registered route is in the OpenAPI document, and every documented operation is served', () => {
    const registered = new Set(served().map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`));
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops)
          .filter((m) => METHODS.includes(m))
          .map((m) => `${m} ${path}`),
      ),
    );
    assert.deepEqual(
      [...registered].filter((r) => !documented.has(r)),
      [],
      'served but not documented',
    );
    assert.deepEqual(
      [...documented].filter((d) => !registered.has(d)),
      [],
      'documented but not served',
    );
    assert.ok(registered.size >= 30, `only ${registered.size} routes`);
  });

  it('every operation has its stable operationId (camelCase verb + noun), none missing, none twice', () => {
    const ids = new Map<string, string>();
    const seen: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!METHODS.includes(method)) continue;
        const name = `${method.toUpperCase()} ${path}`;
        assert.ok(op.operationId, `${name}: no operationId`);
        assert.match(op.operationId, OPERATION_ID, `${name}: ${op.operationId} is not camelCase verb + noun`);
        ids.set(name, op.operationId);
        seen.push(op.operationId);
      }
    }
    const twice = seen.filter((id, i) => seen.indexOf(id) !== i);
    assert.deepEqual(twice, [], 'operationIds used twice');
    assert.deepEqual(
      Object.fromEntries([...ids].sort()),
      Object.fromEntries(Object.entries(OPERATION_IDS).sort()),
    );
    // the route table carries the same ids (the checks that read it name operations by them)
    for (const r of served()) {
      assert.equal(r.operationId, OPERATION_IDS[`${r.method} ${openApiPath(r.url)}`], `${r.method} ${r.url}`);
    }
  });

  it('path parameters: each one named in its path, each one in the path declared', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      for (const [method, op] of Object.entries(ops)) {
        if (!METHODS.includes(method)) continue;
        const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
        assert.deepEqual(declared.map((p) => p.name).sort(), inPath, `${method} ${path}`);
        for (const p of declared) assert.equal(p.required, true, `${method} ${path} ${p.name}`);
      }
    }
  });

  it('every route declares its auth: scopes and surface, or public for the few that take no key', () => {
    for (const r of env.app.routeTable.filter((t) => !staticFile(t.url))) {
      const name = `${r.method} ${r.url}`;
      if (PUBLIC.has(name)) {
        assert.equal(r.auth, 'public', name);
        continue;
      }
      assert.ok(r.auth && r.auth !== 'public', `${name} declares no scope and surface`);
      assert.ok(r.auth.scopes.length > 0 || ANY_KEY.has(name), `${name}: no scope`);
      for (const s of r.auth.scopes) assert.ok((SCOPES as readonly string[]).includes(s), `${name}: ${s}`);
      assert.ok(['production', 'round-trip'].includes(r.auth.surface), `${name}: surface ${r.auth.surface}`);
    }
  });

  it('the document states each operation’s key, its refusals as ErrorBody, and closed JSON bodies', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!METHODS.includes(method)) continue;
        const name = `${method.toUpperCase()} ${path}`;
        const keyed = (path.startsWith('/api/v1/') && !PUBLIC.has(name)) || ANY_KEY.has(name);
        if (keyed) {
          assert.deepEqual(op.security, [{ bearerAuth: [] }], name);
          for (const status of ['401', '403']) assert.ok(op.responses?.[status], `${name}: no ${status}`);
        } else {
          // a route that takes no key says so, rather than leaving readers and linters to guess
          assert.deepEqual(op.security, [], `${name}: a public route declares security: []`);
        }
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          if (Number(status) < 400) continue;
          // one ErrorBody schema, named rather than repeated, so every client has one error type;
          // the MCP transport's own 400 is a JSON-RPC error body, and documented as one too
          const refusal = response.content?.['application/json']?.schema;
          const expected =
            name === 'POST /mcp' && status === '400'
              ? {
                  anyOf: [
                    { $ref: '#/components/schemas/JsonRpcResponse' },
                    { $ref: '#/components/schemas/ErrorBody' },
                  ],
                }
              : { $ref: '#/components/schemas/ErrorBody' };
          assert.deepEqual(refusal, expected, `${name} ${status}`);
          const schema = errorBody();
          assert.deepEqual(schema.required, ['detail', 'code'], `${name} ${status}`);
          assert.deepEqual(schema?.properties?.code?.enum, Object.keys(ERROR_CODES), `${name} ${status}`);
        }
        const json = deref(doc, op.requestBody?.content?.['application/json']?.schema);
        if (json && !ANY_KEY.has(name))
          assert.equal(json.additionalProperties, false, `${name}: a JSON body must refuse unknown fields`);
      }
    }
  });
});
