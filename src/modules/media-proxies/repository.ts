import type { Db } from '../../db/index.js';

export function liveFileByPath(db: Db, productionId: number, path: string) {
  return db
    .selectFrom('library_files as f')
    .leftJoin('media as m', 'm.id', 'f.proxy_media_id')
    .where('f.production_id', '=', productionId)
    .where('f.retired_at', 'is', null)
    .where('f.path', '=', path)
    .select(['f.id', 'f.proxy_media_id', 'm.storage_key as proxy_key'])
    .executeTakeFirst();
}

export async function setProxy(db: Db, fileId: number, mediaId: number): Promise<void> {
  await db.updateTable('library_files').set({ proxy_media_id: mediaId }).where('id', '=', fileId).execute();
}
