import { isOneOf, STORAGE_EVENT_TYPES, STORAGE_SOURCES, type OneOf } from '../../domain/vocabulary.js';
import { textProblem } from '../../domain/text.js';
import { canonicalUtc, isRealTime } from '../../domain/time.js';
import { normaliseLibraryPath } from '../storage-library/paths.js';
import type { StorageEventType } from '../storage-library/service.js';

/** One storage event as it is applied: paths normalised, time in UTC. */
export interface ValidEvent {
  index: number;
  eventType: StorageEventType;
  source: OneOf<typeof STORAGE_SOURCES>;
  path: string;
  toPath: string | null;
  dedupeKey: string;
  detectedAt: string;
  size: number | null;
}

export interface RefusedEvent {
  index: number;
  dedupe_key: string | null;
  reason: string;
}

export const MAX_DEDUPE_KEY = 512;

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** An ISO-8601 timestamp with an explicit zone, as UTC; null when it is not one (Feb 30 included). */
export function utcTimestamp(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  // most agents send what the API answers: checked by arithmetic, no round trip through Date
  const canonical = canonicalUtc(raw);
  if (canonical !== undefined) return canonical;
  const m = TIMESTAMP.exec(raw.trim());
  if (!m) return null;
  const [, y = '', mo = '', d = '', h = '', mi = '', s = '00', frac = '', zone = ''] = m;
  if (!isRealTime(y, mo, d, h, mi, s)) return null;
  // Date keeps milliseconds; agents often send micro- or nanoseconds
  const ms = frac ? frac.slice(0, 4).padEnd(4, '0') : '';
  const t = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${zone}`);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks one event on its own, so one bad event never sinks its batch. The reason names the
 * field, as every validation message of the API does.
 */
export function validateEvent(raw: unknown, index: number): ValidEvent | RefusedEvent {
  if (!isRecord(raw)) return { index, dedupe_key: null, reason: 'event must be an object' };
  const key = raw.dedupe_key;
  const dedupeKey = typeof key === 'string' ? key : null;
  const refuse = (reason: string): RefusedEvent => ({ index, dedupe_key: dedupeKey, reason });

  if (dedupeKey === null || dedupeKey.trim() === '') return refuse('dedupe_key: must be a non-empty string');
  if (dedupeKey.length > MAX_DEDUPE_KEY)
    return refuse(`dedupe_key: must be at most ${MAX_DEDUPE_KEY} characters`);
  const keyText = textProblem(dedupeKey, 'line');
  if (keyText !== null) return refuse(`dedupe_key: ${keyText}`);

  const eventType = raw.event_type;
  if (!isOneOf(STORAGE_EVENT_TYPES, eventType))
    return refuse(`event_type: must be one of ${STORAGE_EVENT_TYPES.join(', ')}`);

  const source = raw.source;
  if (!isOneOf(STORAGE_SOURCES, source))
    return refuse(`source: must be one of ${STORAGE_SOURCES.join(', ')}`);

  const path = normaliseLibraryPath(raw.path);
  if ('reason' in path) return refuse(`path: ${path.reason.replace(/^path /, '')}`);

  let toPath: string | null = null;
  if (eventType === 'move') {
    if (raw.to_path === undefined || raw.to_path === null) return refuse('to_path: is required on a move');
    const to = normaliseLibraryPath(raw.to_path);
    if ('reason' in to) return refuse(`to_path: ${to.reason.replace(/^path /, '')}`);
    if (to.path === path.path) return refuse('to_path: must differ from path');
    toPath = to.path;
  } else if (raw.to_path !== undefined && raw.to_path !== null) {
    return refuse('to_path: only a move carries to_path');
  }

  const detectedAt = utcTimestamp(raw.detected_at);
  if (detectedAt === null)
    return refuse('detected_at: must be an ISO-8601 timestamp with a zone, e.g. 2026-03-01T11:00:00Z');

  let size: number | null = null;
  if (raw.size !== undefined && raw.size !== null) {
    if (typeof raw.size !== 'number' || !Number.isSafeInteger(raw.size) || raw.size < 0)
      return refuse('size: must be a whole number of bytes, 0 or more');
    size = raw.size;
  }

  return {
    index,
    eventType,
    source,
    path: path.path,
    toPath,
    dedupeKey,
    detectedAt,
    size,
  };
}

export const isRefused = (v: ValidEvent | RefusedEvent): v is RefusedEvent => 'reason' in v;
