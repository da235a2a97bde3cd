/*
 * What the API made has no ref (an asset created through it, a landed version). An export
 * names such an object `<prefix>-<id>`, with `-x` appended while that is taken, so an edited
 * export can refer to it (an approval on a landed version); a sync of that document into the
 * same database finds the object by that name again, and never changes it.
 */

export const madeUpRef = (prefix: string, id: number): string => `${prefix}-${id}`;

/** The id a made-up ref names, or null when the ref is the document's own. */
export function madeUpId(prefix: string, ref: string | null | undefined): number | null {
  if (!ref?.startsWith(`${prefix}-`)) return null;
  const m = /^(\d{1,15})(?:-x)*$/.exec(ref.slice(prefix.length + 1));
  return m ? Number(m[1]) : null;
}

/** The key a sync pairs an API-made row by: the same whichever made-up ref names it. */
export const apiKey = (id: number): string => `api:${id}`;
