import type { Db } from '../../db/index.js';

export function findProduction(db: Db, productionId: number) {
  return db
    .selectFrom('productions as p')
    .where('p.id', '=', productionId)
    .select((eb) => [
      'p.id',
      'p.title',
      'p.logline',
      'p.status',
      'p.phase',
      'p.accent',
      'p.format',
      'p.season_number',
      eb
        .selectFrom('departments')
        .whereRef('production_id', '=', 'p.id')
        .select(eb.fn.countAll().as('n'))
        .as('departments'),
      eb
        .selectFrom('approvals')
        .whereRef('production_id', '=', 'p.id')
        .where('status', '=', 'pending')
        .select(eb.fn.countAll().as('n'))
        .as('open_approvals'),
      eb
        .selectFrom('deliveries')
        .whereRef('production_id', '=', 'p.id')
        .where('status', 'in', ['blocked', 'ready', 'sent'])
        .where('retired_at', 'is', null)
        .select(eb.fn.countAll().as('n'))
        .as('deliveries_in_flight'),
      eb
        .selectFrom('nodes')
        .whereRef('production_id', '=', 'p.id')
        .where('kind', '=', 'scene')
        .where('retired_at', 'is', null)
        .select(eb.fn.countAll().as('n'))
        .as('scenes'),
      eb
        .selectFrom('nodes')
        .whereRef('production_id', '=', 'p.id')
        .where('retired_at', 'is', null)
        .select(eb.fn.countAll().as('n'))
        .as('nodes'),
    ])
    .executeTakeFirst();
}

export function findProductionByCode(db: Db, code: string) {
  return db.selectFrom('productions').where('code', '=', code).selectAll().executeTakeFirst();
}
