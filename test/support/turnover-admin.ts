import { Readable } from 'node:stream';
import { inWriteTransaction } from '../../src/db/write-hooks.js';
import { nowIso } from '../../src/db/values.js';
import { commitStaged, mediaKindOf, type StagedObject } from '../../src/media/store.js';
import type { TestEnv } from './env.js';

/*
 * The production side of a turnover, written as its admin routes write it: one write each,
 * through inWriteTransaction, with the change kinds those routes record (a status move is
 * `delivery` updated; a package file added is `media` created, taken out `media` updated; a
 * review is `submission` updated). For the vendor-side tests.
 */

const scope = { actor: 'coordinator' };

async function productionOf(env: TestEnv, deliveryId: number): Promise<number> {
  const d = await env.handle.db
    .selectFrom('deliveries')
    .where('id', '=', deliveryId)
    .select('production_id')
    .executeTakeFirstOrThrow();
  return d.production_id;
}

/** Adds a file to a delivery's package (a media row with its delivery_id and no work item). */
export async function addPackageFile(
  env: TestEnv,
  deliveryId: number,
  label: string,
  bytes: Buffer,
): Promise<{ id: number; sha256: string; size: number; content_type: string }> {
  const pid = await productionOf(env, deliveryId);
  let object: StagedObject | undefined;
  return commitStaged(
    () => (object ? [object] : []),
    async () => {
      object = await env.store.stage(pid, Readable.from([bytes]), { filename: label });
      const staged = object;
      return inWriteTransaction(
        env.handle.db,
        { productionId: pid, ...scope },
        undefined,
        async (trx, changes) => {
          const at = nowIso();
          const { id } = await trx
            .insertInto('media')
            .values({
              production_id: pid,
              ref: null,
              storage_key: staged.key,
              kind: mediaKindOf(staged.contentType),
              label,
              content_type: staged.contentType,
              size: staged.size,
              sha256: staged.sha256,
              node_id: null,
              delivery_id: deliveryId,
              work_item_id: null,
              uploader_engagement_id: null,
              created_by: scope.actor,
              created_at: at,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          changes.created('media', id);
          return { id, sha256: staged.sha256, size: staged.size, content_type: staged.contentType };
        },
      );
    },
  );
}

/** Takes a file out of its package (the row stays, with removed_at). */
export async function removePackageFile(env: TestEnv, mediaId: number): Promise<void> {
  const m = await env.handle.db
    .selectFrom('media')
    .where('id', '=', mediaId)
    .select('production_id')
    .executeTakeFirstOrThrow();
  await inWriteTransaction(
    env.handle.db,
    { productionId: m.production_id, ...scope },
    undefined,
    async (trx, changes) => {
      await trx.updateTable('media').set({ removed_at: nowIso() }).where('id', '=', mediaId).execute();
      changes.updated('media', mediaId);
    },
  );
}

/** Moves a delivery to `status` (`sent` stamps sent_at). */
export async function setDeliveryStatus(
  env: TestEnv,
  deliveryId: number,
  status: 'draft' | 'blocked' | 'ready' | 'sent' | 'accepted',
): Promise<void> {
  const pid = await productionOf(env, deliveryId);
  await inWriteTransaction(
    env.handle.db,
    { productionId: pid, ...scope },
    undefined,
    async (trx, changes) => {
      await trx
        .updateTable('deliveries')
        .set(status === 'sent' ? { status, sent_at: nowIso() } : { status })
        .where('id', '=', deliveryId)
        .execute();
      changes.updated('delivery', deliveryId);
    },
  );
}

/** Reviews a submission: its status becomes the decision, with the note, reviewer and time. */
export async function reviewSubmission(
  env: TestEnv,
  submissionId: number,
  decision: 'accepted' | 'changes_requested',
  note: string,
  reviewedBy = 'Ada Okafor',
): Promise<void> {
  const w = await env.handle.db
    .selectFrom('work_items')
    .where('id', '=', submissionId)
    .select('production_id')
    .executeTakeFirstOrThrow();
  await inWriteTransaction(
    env.handle.db,
    { productionId: w.production_id, ...scope },
    undefined,
    async (trx, changes) => {
      await trx
        .updateTable('work_items')
        .set({ status: decision, review_note: note, reviewed_by: reviewedBy, reviewed_at: nowIso() })
        .where('id', '=', submissionId)
        .execute();
      changes.updated('submission', submissionId);
    },
  );
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
