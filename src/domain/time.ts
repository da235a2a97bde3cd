/*
 * Timestamps in the one form the service stores and answers (UTC, milliseconds, `Z`:
 * `2026-01-05T10:07:00.000Z`). Documents and storage agents send thousands of timestamps
 * already in that form, or in it without the milliseconds; checking those by arithmetic is
 * several times cheaper than a round trip through `Date` (a tenth of a storage event's cost,
 * and of a large import's).
 */

const UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{3})?Z$/;

/** Days in `month` (1–12) of `year`, by the proleptic Gregorian calendar that `Date` uses. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** True when the fields name a real instant, as a round trip through `Date` would say. */
export function isRealTime(y: string, mo: string, d: string, h: string, mi: string, s: string): boolean {
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(Number(y), month)) return false;
  return Number(h) <= 23 && Number(mi) <= 59 && Number(s) <= 59;
}

/**
 * The stored form of a UTC timestamp written `…T10:07:00Z` or `…T10:07:00.000Z`; undefined
 * for any other form, which the caller reads the general way, and null when it names no
 * real instant (February 30th, 24:00).
 */
export function canonicalUtc(raw: string): string | null | undefined {
  const m = UTC.exec(raw);
  if (!m) return undefined;
  const [, y = '', mo = '', d = '', h = '', mi = '', s = '', ms] = m;
  if (!isRealTime(y, mo, d, h, mi, s)) return null;
  return ms ? raw : `${raw.slice(0, 19)}.000Z`;
}
