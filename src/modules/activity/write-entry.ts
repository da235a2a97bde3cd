import { keyActor, type Principal } from '../../auth/principal.js';
import type { ActivityEntry } from '../../db/activity-log.js';

/** How the feed names whoever made a write through the API (the change feed names them alike). */
export const activityActor = keyActor;

/** The activity entry of a write made by `principal`. */
export const entryFor = (
  p: Principal,
  verb: string,
  summary: string,
  nodeId: number | null,
  at: string,
): ActivityEntry => ({
  productionId: p.productionId,
  actor: activityActor(p),
  verb,
  summary,
  nodeId,
  apiKeyId: p.keyId,
  personId: p.personId,
  at,
});

/** Long free text shortened for a one-line feed summary. */
export const clip = (text: string, max = 120): string =>
  text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
