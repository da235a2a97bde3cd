import { sql, type Kysely } from 'kysely';

/*
 * Frozen once shipped. The turnover both ways.
 *
 * - A delivery's **package** is the media rows with its `delivery_id` and no `work_item_id`;
 *   `media.removed_at` marks a file taken out of the package (the row stays for history).
 * - A submission (`work_items`) carries its **review**: the decision is its `status`
 *   (`accepted` or `changes_requested`), with the note, the reviewer and when. `updated_at`
 *   lets the turnover list and the change feed see a review.
 * - A webhook may be subscribed **for an engagement** (`webhooks.engagement_id`): it is sent only
 *   what that engagement can see.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('media').addColumn('removed_at', 'text').execute();
  await db.schema
    .createIndex('media_delivery')
    .on('media')
    .columns(['delivery_id', 'work_item_id'])
    .execute();
  for (const column of ['review_note', 'reviewed_by', 'reviewed_at', 'updated_at']) {
    await db.schema.alterTable('work_items').addColumn(column, 'text').execute();
  }
  await db.schema.alterTable('work_items').addColumn('reviewed_by_person_id', 'integer').execute();
  await sql`update work_items set updated_at = created_at`.execute(db);
  await db.schema
    .alterTable('webhooks')
    .addColumn('engagement_id', 'integer', (c) => c.references('engagements.id').onDelete('cascade'))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
