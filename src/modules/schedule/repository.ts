import type { Db } from '../../db/index.js';

export function listDays(db: Db, productionId: number) {
  return db
    .selectFrom('shoot_days')
    .where('production_id', '=', productionId)
    .select(['id', 'day_number', 'date', 'general_call', 'status', 'updated_at'])
    .orderBy('day_number')
    .orderBy('date')
    .orderBy('id')
    .execute();
}

export function listStrips(db: Db, productionId: number) {
  return db
    .selectFrom('shoot_strips as st')
    .innerJoin('nodes as s', 's.id', 'st.scene_node_id')
    .leftJoin('episodes as e', 'e.id', 's.episode_id')
    .where('st.production_id', '=', productionId)
    .where('s.retired_at', 'is', null)
    .select(['st.shoot_day_id', 's.id', 's.number', 's.slugline', 's.episode_id', 'e.code as episode_code'])
    .orderBy('st.shoot_day_id')
    .orderBy('st.position')
    .orderBy('st.id')
    .execute();
}
