import assert from 'node:assert/strict';
import { inWriteTransaction } from '../../src/db/write-hooks.js';
import { nowIso } from '../../src/db/values.js';
import type { TestEnv } from './env.js';
import { call } from './http.js';
import { multipart } from './multipart.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/*
 * The production side of a turnover, through its admin routes (an admin key minted once per
 * production): a package's files added and taken out, a delivery's status moved, a submission
 * reviewed. For the vendor-side tests. Grants and their expiry have helpers below written
 * through inWriteTransaction, as the admin grant routes record them (an expiry a moment ahead
 * has no route: POST /admin/grants takes only a future one, and no route edits it).
 */

const scope = { actor: 'coordinator' };
/** The label of the admin key these helpers act with: a review records it as the reviewer. */
export const DESK = 'Turnover desk';

const adminKeys = new WeakMap<TestEnv, Map<number, Promise<string>>>();

async function productionOf(env: TestEnv, deliveryId: number): Promise<number> {
  const d = await env.handle.db
    .selectFrom('deliveries')
    .where('id', '=', deliveryId)
    .select('production_id')
    .executeTakeFirstOrThrow();
  return d.production_id;
}

/** An admin key of the production (minted on first use). */
function adminOf(env: TestEnv, productionId: number): Promise<string> {
  let keys = adminKeys.get(env);
  if (!keys) adminKeys.set(env, (keys = new Map()));
  let key = keys.get(productionId);
  if (!key) {
    key = (async () => {
      const p = await env.handle.db
        .selectFrom('productions')
        .where('id', '=', productionId)
        .select('code')
        .executeTakeFirstOrThrow();
      return env.mint({ production: p.code, scopes: ['admin'], label: DESK });
    })();
    keys.set(productionId, key);
  }
  return key;
}

async function ok(
  env: TestEnv,
  productionId: number,
  url: string,
  body?: unknown,
  expected = 200,
): Promise<any> {
  const r = await call(env.app, 'POST', url, { token: await adminOf(env, productionId), body });
  assert.equal(r.status, expected, `${url}: ${r.text}`);
  return r.body;
}

/** Adds a file to a delivery's package: POST /admin/deliveries/{id}/files. */
export async function addPackageFile(
  env: TestEnv,
  deliveryId: number,
  label: string,
  bytes: Buffer,
): Promise<{ id: number; sha256: string; size: number; content_type: string }> {
  const pid = await productionOf(env, deliveryId);
  const form = multipart([
    { name: 'label', value: label },
    { name: 'files', filename: label, content: bytes },
  ]);
  const r = await env.app.inject({
    method: 'POST',
    url: `/api/v1/admin/deliveries/${deliveryId}/files`,
    payload: form.payload,
    headers: { ...form.headers, authorization: `Bearer ${await adminOf(env, pid)}` },
  });
  assert.equal(r.statusCode, 201, r.body);
  const [file] = JSON.parse(r.body).files;
  return { id: file.id, sha256: file.sha256, size: file.size, content_type: file.content_type };
}

/** Takes a file out of its package (the row stays): POST /admin/deliveries/{id}/files/{media_id}/remove. */
export async function removePackageFile(env: TestEnv, mediaId: number): Promise<void> {
  const m = await env.handle.db
    .selectFrom('media')
    .where('id', '=', mediaId)
    .select(['production_id', 'delivery_id'])
    .executeTakeFirstOrThrow();
  await ok(env, m.production_id, `/api/v1/admin/deliveries/${m.delivery_id}/files/${mediaId}/remove`);
}

/** Moves a delivery to `status` by the transition table: POST /admin/deliveries/{id}/status. */
export async function setDeliveryStatus(
  env: TestEnv,
  deliveryId: number,
  status: 'draft' | 'blocked' | 'ready' | 'sent' | 'accepted',
): Promise<void> {
  const pid = await productionOf(env, deliveryId);
  await ok(env, pid, `/api/v1/admin/deliveries/${deliveryId}/status`, { status });
}

/** Reviews a submission as the admin key (its label is the reviewer): POST /admin/submissions/{id}/review. */
export async function reviewSubmission(
  env: TestEnv,
  submissionId: number,
  decision: 'accepted' | 'changes_requested',
  note: string,
): Promise<void> {
  const w = await env.handle.db
    .selectFrom('work_items')
    .where('id', '=', submissionId)
    .select('production_id')
    .executeTakeFirstOrThrow();
  await ok(env, w.production_id, `/api/v1/admin/submissions/${submissionId}/review`, { decision, note });
}

/** Grants an engagement read or submit access to a delivery (as the admin grant route records it). */
export async function grantDelivery(
  env: TestEnv,
  engagementId: number,
  deliveryId: number,
  access: 'read' | 'submit',
  expiresAt: string | null = null,
): Promise<number> {
  const pid = await productionOf(env, deliveryId);
  return inWriteTransaction(
    env.handle.db,
    { productionId: pid, ...scope },
    undefined,
    async (trx, changes) => {
      const { id } = await trx
        .insertInto('grants')
        .values({
          production_id: pid,
          engagement_id: engagementId,
          kind: 'delivery',
          node_id: null,
          delivery_id: deliveryId,
          access,
          expires_at: expiresAt,
          revoked_at: null,
          created_at: nowIso(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      changes.created('grant', id);
      return id;
    },
  );
}

/** Sets (or clears) a grant's expiry. */
export async function setGrantExpiry(env: TestEnv, grantId: number, expiresAt: string | null): Promise<void> {
  const g = await env.handle.db
    .selectFrom('grants')
    .where('id', '=', grantId)
    .select('production_id')
    .executeTakeFirstOrThrow();
  await inWriteTransaction(
    env.handle.db,
    { productionId: g.production_id, ...scope },
    undefined,
    async (trx, changes) => {
      await trx.updateTable('grants').set({ expires_at: expiresAt }).where('id', '=', grantId).execute();
      changes.updated('grant', grantId);
    },
  );
}

/** Revokes a grant (as the admin route does: the change is the grant retired). */
export async function revokeGrant(env: TestEnv, grantId: number): Promise<void> {
  const g = await env.handle.db
    .selectFrom('grants')
    .where('id', '=', grantId)
    .select('production_id')
    .executeTakeFirstOrThrow();
  await inWriteTransaction(
    env.handle.db,
    { productionId: g.production_id, ...scope },
    undefined,
    async (trx, changes) => {
      await trx
        .updateTable('grants')
        .set({ revoked_at: nowIso(), revoked_by: scope.actor })
        .where('id', '=', grantId)
        .execute();
      changes.retired('grant', grantId);
    },
  );
}
