/** Small conversions between stored values (see migration 0001) and API values. */

export const nowIso = (): string => new Date().toISOString();

export const toBool = (v: number | boolean | null | undefined): boolean => v === 1 || v === true;

export const fromBool = (v: boolean | undefined | null): 0 | 1 => (v ? 1 : 0);

export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  return JSON.parse(text) as T;
}

/** PostgreSQL returns count(*) as int8; both dialects come back here as number or string. */
export const toInt = (v: number | string | bigint | null | undefined): number => Number(v ?? 0);
