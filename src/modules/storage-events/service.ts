import { actorName, writeScopeOf, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { errors } from '../../errors.js';
import type { ActivityEntry } from '../../db/activity-log.js';
import { isRefused, validateEvent, type RefusedEvent, type ValidEvent } from './validation.js';
import { lockLibrary } from '../storage-library/repository.js';
import { applyToLibrary, assertActiveFilespace } from '../storage-library/service.js';
import { appendActivities } from '../../db/activity-log.js';
import { insertNewEvents } from './repository.js';
import type { StorageEventsBody, StorageEventsResult } from './schemas.js';

/**
 * Records a batch of storage events and applies the new ones to the library, in one
 * transaction. A dedupe key already recorded (earlier, concurrently, or earlier in the same
 * batch) is a duplicate and changes nothing; a bad event is refused on its own.
 */
export async function ingestEvents(
  ctx: AppContext,
  principal: Principal,
  body: StorageEventsBody,
  hooks?: WriteHooks<StorageEventsResult>,
): Promise<StorageEventsResult> {
  await assertActiveFilespace(ctx.db, principal.productionId, body.filespace);
  const limit = ctx.config.limits.eventBatch;
  if (body.events.length > limit)
    throw errors.tooLarge(`events: a batch holds at most ${limit} events (got ${body.events.length})`);

  const refused: RefusedEvent[] = [];
  const fresh: ValidEvent[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  body.events.forEach((raw, index) => {
    const v = validateEvent(raw, index);
    if (isRefused(v)) refused.push(v);
    else if (seen.has(v.dedupeKey)) duplicates++;
    else {
      seen.add(v.dedupeKey);
      fresh.push(v);
    }
  });
  // a keyed request still goes through the write, so its key is recorded (and checked) like any other
  if (fresh.length === 0 && !hooks) return { accepted: 0, duplicates, refused };

  const receivedAt = nowIso();
  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    await lockLibrary(trx, ctx.dialect, principal.productionId);
    const inserted = await insertNewEvents(
      trx,
      fresh.map((e) => ({
        production_id: principal.productionId,
        dedupe_key: e.dedupeKey,
        event_type: e.eventType,
        source: e.source,
        path: e.path,
        to_path: e.toPath,
        detected_at: e.detectedAt,
        received_at: receivedAt,
      })),
    );
    const applied = fresh.filter((e) => inserted.has(e.dedupeKey));
    for (const id of inserted.values()) changes.created('storage_event', id);
    const { created } = await applyToLibrary(
      trx,
      principal.productionId,
      applied.map((e) => ({
        eventType: e.eventType,
        path: e.path,
        toPath: e.toPath,
        at: e.detectedAt,
        size: e.size,
      })),
    );
    await appendActivities(trx, filingEntries(principal, created, body.filespace, receivedAt));
    return { accepted: applied.length, duplicates: duplicates + fresh.length - applied.length, refused };
  });
}

/** One entry per top-level folder per batch: crew want "40 new files under plates", not 40 lines. */
function filingEntries(
  principal: Principal,
  created: string[],
  filespace: string,
  at: string,
): ActivityEntry[] {
  const byFolder = new Map<string, number>();
  for (const path of created) {
    const slash = path.indexOf('/');
    const folder = slash < 0 ? '' : path.slice(0, slash);
    byFolder.set(folder, (byFolder.get(folder) ?? 0) + 1);
  }
  return [...byFolder].map(([folder, n]) => ({
    productionId: principal.productionId,
    actor: actorName(principal),
    verb: 'filed',
    summary: `${n} new ${n === 1 ? 'file' : 'files'} ${folder ? `under ${folder}/` : 'at the root'} of filespace ${filespace}`,
    apiKeyId: principal.keyId,
    personId: principal.personId,
    at,
  }));
}
