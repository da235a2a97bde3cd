import type { Db } from '../../db/index.js';
import type { Insertable } from 'kysely';
import type { MediaTable } from '../../db/schema.js';

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

export async function insertMedia(db: Db, row: Omit<Insertable<MediaTable>, 'id'>): Promise<number> {
  const got = await db.insertInto('media').values(row).returning('id').executeTakeFirstOrThrow();
  return got.id;
}

export async function setProxy(db: Db, fileId: number, mediaId: number): Promise<void> {
  await db.updateTable('library_files').set({ proxy_media_id: mediaId }).where('id', '=', fileId).execute();
}

export async function deleteMedia(db: Db, productionId: number, mediaId: number): Promise<void> {
  await db.deleteFrom('media').where('production_id', '=', productionId).where('id', '=', mediaId).execute();
}
