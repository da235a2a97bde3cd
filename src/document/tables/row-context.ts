import { canonicalUtc } from '../../domain/time.js';
import type { Id } from '../sync/cells.js';

/**
 * What building a table's rows from the document needs: the ids of the objects refs name
 * (stored, or still to be written) and the write's own clock. A sync's context and the
 * first import's loader both provide it, so a row is built one way whichever writes it.
 */
export interface RowContext<I extends Id = Id> {
  readonly now: string;
  readonly productionId: I;
  /** The id of an object the document names (the reference was checked). */
  need(ref: string): I;
  id(ref: string | null | undefined): I | null;
}

/** A document timestamp as the database keeps it (UTC ISO-8601); a missing one stays missing. */
export function iso(ts: string): string;
export function iso(ts: string | null | undefined): string | null;
export function iso(ts: string | null | undefined): string | null {
  return ts ? (canonicalUtc(ts) ?? new Date(ts).toISOString()) : null;
}
export const json = (v: unknown): string => JSON.stringify(v);
/** A list position spaced so a later sync can insert between two objects without moving them. */
export const POSITION_GAP = 16;
