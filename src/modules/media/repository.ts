import type { Db } from '../../db/index.js';

export function findMedia(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('media')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .select([
      'id',
      'production_id',
      'storage_key',
      'kind',
      'label',
      'content_type',
      'size',
      'sha256',
      'node_id',
      'delivery_id',
      'work_item_id',
      'uploader_engagement_id',
      'created_by',
      'created_at',
      'updated_at',
    ])
    .executeTakeFirst();
}
