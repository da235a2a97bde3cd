import type { Db } from '../db/index.js';
import type { AuditActor } from './audit-actor.js';
import type { AuditAction, AuditOutcome } from './audit-actions.js';
import { allProductionIds, insertAuditRow } from './audit-repository.js';

/** One audit row to write. */
export interface AuditEntry {
  productionId: number;
  actor: AuditActor;
  action: AuditAction;
  /** The object acted on (`grant` 12, `media` 40, `key` 7); none for an action on no one object. */
  object?: { type: string; id: number | null };
  /** The engagement the object belongs to, when it does (a grant's, a key's); else the actor's. */
  engagementId?: number | null;
  /** A line for people: names and refs, never a token, ticket, cookie or secret. */
  summary?: string;
  /** Default `ok`; `refused` when the action was attempted and turned down. */
  outcome?: AuditOutcome;
}

/**
 * Writes one audit row. Call it with the transaction of the change it records (a `trx` from
 * inWriteTransaction), so the row commits or rolls back with the change; a download, which
 * changes nothing, writes it alone. The time is the database's.
 */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  const { actor } = entry;
  await insertAuditRow(db, {
    production_id: entry.productionId,
    actor: actor.actor,
    person_id: actor.personId,
    key_id: actor.keyId,
    key_prefix: actor.keyPrefix,
    key_label: actor.keyLabel,
    engagement_id: entry.engagementId ?? actor.engagementId,
    action: entry.action,
    object_type: entry.object?.type ?? null,
    object_id: entry.object?.id ?? null,
    summary: entry.summary ?? '',
    ip: actor.ip,
    outcome: entry.outcome ?? 'ok',
  });
}

/**
 * Writes one row of an action on the whole installation (no one production's) into the trail of
 * every production, since each production's admins read only their own trail.
 */
export async function recordInstallationAudit(
  db: Db,
  entry: Omit<AuditEntry, 'productionId'>,
): Promise<void> {
  for (const productionId of await allProductionIds(db)) await recordAudit(db, { ...entry, productionId });
}
