import { PostgresAdapter, sql, type Kysely, type CreateTableBuilder } from 'kysely';

/*
 * Frozen: never edit a migration that has shipped; add the next number instead.
 * Portable on SQLite and PostgreSQL: timestamps are ISO-8601 UTC text (lexically ordered),
 * booleans are 0/1 integers, free-form objects are JSON text, money is double precision.
 */

type Builder = CreateTableBuilder<string, never>;

const isPostgres = (db: Kysely<unknown>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const idType = pg ? 'serial' : 'integer';
  const table = (name: string): Builder =>
    db.schema
      .createTable(name)
      .addColumn('id', idType, (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()));
  const prod = (b: Builder): Builder =>
    b.addColumn('production_id', 'integer', (c) =>
      c.notNull().references('productions.id').onDelete('cascade'),
    );
  const ref = (b: Builder): Builder => b.addColumn('ref', 'text');
  const bool = (b: Builder, name: string, dflt: 0 | 1): Builder =>
    b.addColumn(name, 'integer', (c) => c.notNull().defaultTo(dflt));
  const index = (name: string, tbl: string, cols: string[], unique = false) => {
    let b = db.schema.createIndex(name).on(tbl).columns(cols);
    if (unique) b = b.unique();
    return b.execute();
  };

  await table('productions')
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('logline', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('phase', 'text', (c) => c.notNull())
    .addColumn('accent', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('season_number', 'integer')
    .addColumn('current_episode_id', 'integer')
    .addColumn('filespace', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await ref(prod(table('episodes')))
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('position', 'integer', (c) => c.notNull())
    .execute();

  await ref(prod(table('organisations')))
    .addColumn('name', 'text', (c) => c.notNull())
    .execute();

  await prod(table('departments'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('cluster', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('phases', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('mission', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('key_roles', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('privacy', 'text', (c) => c.notNull().defaultTo('open'))
    .addColumn('unveiled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('registry', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .execute();
  await index('departments_production_slug', 'departments', ['production_id', 'slug'], true);

  await db.schema
    .createTable('department_accounts')
    .addColumn('production_id', 'integer', (c) =>
      c.notNull().references('productions.id').onDelete('cascade'),
    )
    .addColumn('department_id', 'integer', (c) =>
      c.notNull().references('departments.id').onDelete('cascade'),
    )
    .addColumn('account', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('department_accounts_pk', ['department_id', 'account'])
    .execute();

  await bool(bool(ref(prod(table('people'))), 'is_hod', 0), 'is_admin', 0)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('department_id', 'integer', (c) => c.references('departments.id').onDelete('set null'))
    // Contact details are stored for the app's own use and never leave the service.
    .addColumn('email', 'text')
    .addColumn('phone', 'text')
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await index('people_department', 'people', ['department_id']);
  await index('people_production', 'people', ['production_id']);

  // Graph nodes: scenes and every asset (characters, costumes, locations, …).
  await ref(prod(table('nodes')))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('department_id', 'integer', (c) => c.references('departments.id').onDelete('set null'))
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('number', 'text')
    .addColumn('slugline', 'text')
    .addColumn('synopsis', 'text')
    .addColumn('revision_color', 'text')
    .addColumn('elements', 'text')
    .addColumn('episode_id', 'integer', (c) => c.references('episodes.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await index('nodes_production_kind', 'nodes', ['production_id', 'kind', 'position']);
  await index('nodes_production_department', 'nodes', ['production_id', 'department_id']);
  await index('nodes_production_status', 'nodes', ['production_id', 'status']);

  // scene -uses-> asset, character -wears-> costume
  await prod(table('edges'))
    .addColumn('from_node_id', 'integer', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('to_node_id', 'integer', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await index('edges_from', 'edges', ['from_node_id', 'kind', 'to_node_id'], true);
  await index('edges_to', 'edges', ['to_node_id', 'kind']);

  await ref(prod(table('media')))
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('node_id', 'integer', (c) => c.references('nodes.id').onDelete('set null'))
    .addColumn('delivery_id', 'integer')
    .addColumn('work_item_id', 'integer')
    .addColumn('uploader_engagement_id', 'integer')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await index('media_production', 'media', ['production_id']);
  await index('media_work_item', 'media', ['work_item_id']);
  await index('media_storage_key', 'media', ['storage_key'], true);

  await bool(bool(ref(prod(table('versions'))), 'released', 0), 'archived', 0)
    .addColumn('node_id', 'integer', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('media_id', 'integer', (c) => c.references('media.id').onDelete('set null'))
    .addColumn('created_by', 'text')
    .addColumn('created_by_person_id', 'integer', (c) => c.references('people.id').onDelete('set null'))
    .addColumn('created_at', 'text')
    .execute();
  // The unique pair is what makes two concurrent uploads to one asset get two numbers.
  await index('versions_node_version', 'versions', ['node_id', 'version'], true);
  await index('versions_production_released', 'versions', ['production_id', 'released']);

  await prod(table('version_notes'))
    .addColumn('version_id', 'integer', (c) => c.notNull().references('versions.id').onDelete('cascade'))
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('author', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await index('version_notes_version', 'version_notes', ['version_id']);

  await ref(prod(table('ingredients')))
    .addColumn('version_id', 'integer', (c) => c.notNull().references('versions.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('relation', 'text')
    .addColumn('media_id', 'integer', (c) => c.references('media.id').onDelete('set null'))
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await index('ingredients_version', 'ingredients', ['version_id']);

  await ref(prod(table('shoot_days')))
    .addColumn('day_number', 'integer', (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('general_call', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .execute();
  await index('shoot_days_production', 'shoot_days', ['production_id', 'day_number']);

  await prod(table('shoot_strips'))
    .addColumn('shoot_day_id', 'integer', (c) => c.notNull().references('shoot_days.id').onDelete('cascade'))
    .addColumn('scene_node_id', 'integer', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .execute();
  await index('shoot_strips_day', 'shoot_strips', ['shoot_day_id', 'position']);
  await index('shoot_strips_scene', 'shoot_strips', ['scene_node_id']);

  await ref(prod(table('approvals')))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('due', 'text')
    .addColumn('department_id', 'integer', (c) => c.references('departments.id').onDelete('set null'))
    .addColumn('subject_node_id', 'integer', (c) => c.references('nodes.id').onDelete('set null'))
    .addColumn('subject_version_id', 'integer', (c) => c.references('versions.id').onDelete('set null'))
    .addColumn('current_step', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await index('approvals_production_status', 'approvals', ['production_id', 'status']);
  await index('approvals_subject_node', 'approvals', ['subject_node_id']);

  await prod(table('approval_steps'))
    .addColumn('approval_id', 'integer', (c) => c.notNull().references('approvals.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('person_id', 'integer', (c) => c.references('people.id').onDelete('set null'))
    .addColumn('decision', 'text')
    .addColumn('decided_by', 'text')
    .addColumn('note', 'text')
    .addColumn('decided_at', 'text')
    .execute();
  await index('approval_steps_approval', 'approval_steps', ['approval_id', 'position'], true);

  await ref(prod(table('department_notes')))
    .addColumn('department_id', 'integer', (c) => c.references('departments.id').onDelete('set null'))
    .addColumn('node_id', 'integer', (c) => c.references('nodes.id').onDelete('cascade'))
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text')
    .execute();
  await index('department_notes_node', 'department_notes', ['node_id']);

  await ref(prod(table('deliveries')))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('due', 'text')
    .addColumn('from_department_id', 'integer', (c) => c.references('departments.id').onDelete('set null'))
    .addColumn('to_department_id', 'integer', (c) => c.references('departments.id').onDelete('set null'))
    .addColumn('external_to', 'text')
    .addColumn('spec', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('sent_at', 'text')
    .addColumn('gating_approval_id', 'integer', (c) => c.references('approvals.id').onDelete('set null'))
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await index('deliveries_production', 'deliveries', ['production_id']);

  await ref(prod(table('engagements')))
    .addColumn('organisation_id', 'integer', (c) =>
      c.notNull().references('organisations.id').onDelete('cascade'),
    )
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('engagement_departments')
    .addColumn('engagement_id', 'integer', (c) =>
      c.notNull().references('engagements.id').onDelete('cascade'),
    )
    .addColumn('department_id', 'integer', (c) =>
      c.notNull().references('departments.id').onDelete('cascade'),
    )
    .addPrimaryKeyConstraint('engagement_departments_pk', ['engagement_id', 'department_id'])
    .execute();

  // Live = revoked_at is null and (expires_at is null or in the future), judged at request time.
  await prod(table('grants'))
    .addColumn('engagement_id', 'integer', (c) =>
      c.notNull().references('engagements.id').onDelete('cascade'),
    )
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('node_id', 'integer', (c) => c.references('nodes.id').onDelete('cascade'))
    .addColumn('delivery_id', 'integer', (c) => c.references('deliveries.id').onDelete('cascade'))
    .addColumn('access', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await index('grants_engagement', 'grants', ['engagement_id', 'kind']);

  await prod(table('work_items'))
    .addColumn('delivery_id', 'integer', (c) => c.notNull().references('deliveries.id').onDelete('cascade'))
    .addColumn('engagement_id', 'integer', (c) => c.references('engagements.id').onDelete('set null'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await index('work_items_delivery', 'work_items', ['delivery_id']);

  await ref(prod(table('purchase_orders')))
    .addColumn('vendor_organisation_id', 'integer', (c) =>
      c.references('organisations.id').onDelete('set null'),
    )
    .addColumn('department_id', 'integer', (c) => c.references('departments.id').onDelete('set null'))
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('amount', 'double precision', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull())
    .execute();
  await index('purchase_orders_vendor', 'purchase_orders', ['production_id', 'vendor_organisation_id']);

  await bool(prod(table('cost_reports')), 'active', 0)
    .addColumn('week_of', 'text', (c) => c.notNull())
    .execute();

  await prod(table('cost_report_lines'))
    .addColumn('cost_report_id', 'integer', (c) =>
      c.notNull().references('cost_reports.id').onDelete('cascade'),
    )
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('budget', 'double precision')
    .addColumn('actual', 'double precision')
    .addColumn('committed', 'double precision')
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await index('cost_report_lines_report', 'cost_report_lines', ['cost_report_id', 'account']);

  await ref(prod(table('script_changes')))
    .addColumn('scene_node_id', 'integer', (c) => c.references('nodes.id').onDelete('cascade'))
    .addColumn('episode_id', 'integer', (c) => c.references('episodes.id').onDelete('set null'))
    .addColumn('change', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('detected_at', 'text', (c) => c.notNull())
    .execute();
  await index('script_changes_production', 'script_changes', ['production_id', 'status']);

  await prod(table('activity'))
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('verb', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('node_id', 'integer', (c) => c.references('nodes.id').onDelete('set null'))
    .addColumn('api_key_id', 'integer')
    .addColumn('person_id', 'integer', (c) => c.references('people.id').onDelete('set null'))
    .execute();
  await index('activity_production_at', 'activity', ['production_id', 'at', 'id']);

  await ref(prod(table('generation_jobs')))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('prompt', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('media_id', 'integer', (c) => c.references('media.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await index('generation_jobs_production', 'generation_jobs', ['production_id', 'created_at']);

  // One row per live path; a retired (deleted) path keeps its history row.
  await prod(table('library_files'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint')
    .addColumn('detected_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'text')
    .addColumn('proxy_media_id', 'integer', (c) => c.references('media.id').onDelete('set null'))
    .execute();
  await db.schema
    .createIndex('library_files_live_path')
    .on('library_files')
    .columns(['production_id', 'path'])
    .unique()
    .where(sql.ref('retired_at'), 'is', null)
    .execute();

  // The unique dedupe key is what makes replays (even concurrent ones) count once.
  await prod(table('storage_events'))
    .addColumn('dedupe_key', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('to_path', 'text')
    .addColumn('detected_at', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .execute();
  await index('storage_events_dedupe', 'storage_events', ['production_id', 'dedupe_key'], true);

  await prod(table('storage_tasks'))
    .addColumn('op', 'text', (c) => c.notNull())
    .addColumn('from_path', 'text', (c) => c.notNull())
    .addColumn('to_path', 'text', (c) => c.notNull())
    .addColumn('approved_by', 'text', (c) => c.notNull())
    .addColumn('approved_at', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('settled_at', 'text')
    .execute();
  await index('storage_tasks_production_status', 'storage_tasks', ['production_id', 'status', 'id']);

  await prod(table('api_keys'))
    .addColumn('prefix', 'text', (c) => c.notNull().unique())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('engagement_id', 'integer', (c) => c.references('engagements.id').onDelete('cascade'))
    .addColumn('person_id', 'integer', (c) => c.references('people.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();

  // Retry safety for write POSTs: one row per (API key, Idempotency-Key).
  await table('idempotency_keys')
    .addColumn('api_key_id', 'integer', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await index('idempotency_keys_key', 'idempotency_keys', ['api_key_id', 'key'], true);

  await prod(table('vision_look_briefs'))
    .addColumn('version_id', 'integer', (c) => c.notNull().references('versions.id').onDelete('cascade'))
    .addColumn('brief', 'text', (c) => c.notNull())
    .addColumn('source_sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await index('vision_look_briefs_version', 'vision_look_briefs', ['version_id', 'source_sha256'], true);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
