import type { DbHandle } from '../db/index.js';
import type { Database } from '../db/schema.js';
import { CliError } from './args.js';

/*
 * The CLI names objects by the document's ref or by the API's id: a ref is looked up first,
 * so a ref made of digits ("12") still means the object with that ref; `id:12` is always the id.
 * Scenes are named otherwise, by what a person reads (resolveScene).
 */

type Kind = 'character' | 'delivery' | 'engagement' | 'organisation' | 'person';

/** The table each kind lives in; characters are the nodes of kind `character`. */
const TABLES = {
  character: 'nodes',
  delivery: 'deliveries',
  engagement: 'engagements',
  organisation: 'organisations',
  person: 'people',
} satisfies Record<Kind, keyof Database>;

async function byRefOrId(
  h: DbHandle,
  productionId: number,
  kind: Kind,
  refOrId: string,
): Promise<number | null> {
  const table = TABLES[kind];
  const base = () => {
    let q = h.db.selectFrom(table).where('production_id', '=', productionId).select('id');
    if (kind === 'character') q = q.where('kind', '=', 'character');
    return q;
  };
  const explicit = /^id:(\d{1,9})$/.exec(refOrId);
  if (explicit) {
    const byId = await base().where('id', '=', Number(explicit[1])).executeTakeFirst();
    return byId?.id ?? null;
  }
  const byRef = await base().where('ref', '=', refOrId).executeTakeFirst();
  if (byRef) return byRef.id;
  if (/^\d{1,9}$/.test(refOrId)) {
    const byId = await base().where('id', '=', Number(refOrId)).executeTakeFirst();
    if (byId) return byId.id;
  }
  return null;
}

export async function resolveId(
  h: DbHandle,
  productionId: number,
  code: string,
  kind: Kind,
  refOrId: string,
): Promise<number> {
  const id = await byRefOrId(h, productionId, kind, refOrId);
  if (id === null) throw new CliError(`no ${kind} "${refOrId}" in production "${code}"`);
  return id;
}
