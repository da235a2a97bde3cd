/** Rows per multi-row statement: well under SQLite's 32,766 and PostgreSQL's 65,535 parameters. */
export const CHUNK = 500;

export function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
