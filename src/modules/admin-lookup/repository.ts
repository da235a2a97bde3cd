import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../db/index.js';

export function organisationRows(db: Db, productionId: number) {
  return db
    .selectFrom('organisations as o')
    .where('o.production_id', '=', productionId)
    .select((eb) => [
      'o.id',
      'o.ref',
      'o.name',
      eb
        .selectFrom('engagements as e')
        .whereRef('e.organisation_id', '=', 'o.id')
        .where('e.retired_at', 'is', null)
        .select(eb.fn.countAll().as('n'))
        .as('engagements'),
    ])
    .orderBy('o.name')
    .orderBy('o.id')
    .execute();
}

/** `text` as a LIKE pattern matching itself literally (the same escape on both databases). */
const literal = (text: string) => text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);

/** lower(column) LIKE pattern, with backslash as the escape on SQLite and PostgreSQL alike. */
const like = (column: string, pattern: string): Expression<SqlBool> =>
  sql<SqlBool>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;

export function findScenes(db: Db, productionId: number, q: string, limit: number) {
  let query = db
    .selectFrom('nodes as n')
    .leftJoin('episodes as ep', 'ep.id', 'n.episode_id')
    .where('n.production_id', '=', productionId)
    .where('n.kind', '=', 'scene')
    .where('n.retired_at', 'is', null);
  if (q !== '') {
    const text = literal(q);
    query = query.where((eb) => eb.or([like('n.number', `${text}%`), like('n.slugline', `%${text}%`)]));
  }
  return query
    .select(['n.id', 'n.number', 'n.slugline as label', 'n.status', 'ep.code as episode_code'])
    .orderBy('n.position')
    .orderBy('n.id')
    .limit(limit)
    .execute();
}

export function findCharacters(db: Db, productionId: number, q: string, limit: number) {
  let query = db
    .selectFrom('nodes')
    .where('production_id', '=', productionId)
    .where('kind', '=', 'character')
    .where('retired_at', 'is', null);
  if (q !== '') query = query.where(like('label', `%${literal(q)}%`));
  return query.select(['id', 'label', 'status']).orderBy('position').orderBy('id').limit(limit).execute();
}

export function findDeliveries(db: Db, productionId: number, q: string, limit: number) {
  let query = db
    .selectFrom('deliveries')
    .where('production_id', '=', productionId)
    // only an external delivery can be granted to a vendor
    .where('kind', '=', 'external')
    .where('retired_at', 'is', null);
  if (q !== '') query = query.where(like('title', `%${literal(q)}%`));
  return query
    .select(['id', 'title as label', 'status'])
    .orderBy('position')
    .orderBy('id')
    .limit(limit)
    .execute();
}
