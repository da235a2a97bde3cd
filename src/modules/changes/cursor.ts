import { errors } from '../../errors.js';

/*
 * A feed cursor is the id of the last change a client has seen, wrapped so clients treat it as
 * opaque (the encoding may change within v1; a cursor once issued stays valid). Change ids
 * are never reused and the log is never pruned, so a cursor survives restarts and re-imports.
 */
const PREFIX = 'c1.';

export const encodeCursor = (changeId: number): string =>
  PREFIX + Buffer.from(String(changeId), 'utf8').toString('base64url');

/** The change id a cursor names; anything this feed did not issue is 422 naming `field`. */
export function decodeCursor(cursor: string, field = 'after'): number {
  const refuse = () =>
    errors.invalid(
      field,
      'is not a cursor this feed issued (pass back a `cursor` or `next_cursor` as given)',
    );
  if (!cursor.startsWith(PREFIX)) throw refuse();
  const body = cursor.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]{1,24}$/.test(body)) throw refuse();
  const text = Buffer.from(body, 'base64url').toString('utf8');
  if (!/^(0|[1-9]\d{0,15})$/.test(text) || encodeCursor(Number(text)) !== cursor) throw refuse();
  const id = Number(text);
  if (!Number.isSafeInteger(id)) throw refuse();
  return id;
}
