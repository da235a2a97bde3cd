import type { Generated } from 'kysely';
import type * as V from '../domain/vocabulary.js';
import type { OneOf } from '../domain/vocabulary.js';
import type { ChangeKind, ChangeOp } from './change-log.js';

/*
 * Row types as stored. Timestamps are ISO-8601 UTC text, booleans 0/1, objects JSON text (see
 * migration 0001); rows are mapped to API shapes at the service edge, never returned raw. A column
 * holding a closed vocabulary (NODE_STATUSES and the like) is typed with it, so a read needs no
 * cast and a write of a stray value does not compile. test/schema.test.ts holds this file to the
 * columns a freshly migrated database has, on both dialects.
 */

type Id = Generated<number>;
type Bool = 0 | 1;
/**
 * When the row last changed (migration 0008). Stamped by the write's change log
 * (stampUpdatedAt), never by hand, so inserts may leave it out; never null once committed.
 */
type Stamp = Generated<string | null>;

export interface ProductionsTable {
  id: Id;
  code: string;
  title: string;
  logline: string;
  status: string;
  phase: string;
  accent: OneOf<typeof V.ACCENTS>;
  format: OneOf<typeof V.PRODUCTION_FORMATS>;
  season_number: number | null;
  current_episode_id: number | null;
  filespace: string | null;
  created_at: string;
  /** Bumped by every committed write (migration 0006). */
  revision: Generated<number>;
}

export interface EpisodesTable {
  id: Id;
  production_id: number;
  ref: string | null;
  code: string;
  title: string;
  position: number;
}

export interface OrganisationsTable {
  id: Id;
  production_id: number;
  ref: string | null;
  name: string;
}

export interface DepartmentsTable {
  id: Id;
  production_id: number;
  slug: string;
  name: string;
  cluster: string;
  phases: string;
  mission: string;
  key_roles: string;
  privacy: OneOf<typeof V.PRIVACIES>;
  unveiled: Bool;
  registry: string;
  position: number;
  updated_at: Stamp;
}

export interface DepartmentAccountsTable {
  production_id: number;
  department_id: number;
  account: string;
}

export interface PeopleTable {
  id: Id;
  production_id: number;
  ref: string | null;
  name: string;
  role: string;
  department_id: number | null;
  is_hod: Bool;
  is_admin: Bool;
  email: string | null;
  phone: string | null;
  position: number;
  updated_at: Stamp;
}

export interface NodesTable {
  id: Id;
  production_id: number;
  ref: string | null;
  kind: string;
  label: string;
  status: OneOf<typeof V.SCENE_STATUSES>;
  department_id: number | null;
  position: number;
  number: string | null;
  slugline: string | null;
  synopsis: string | null;
  revision_color: string | null;
  elements: string | null;
  episode_id: number | null;
  created_at: string;
  updated_at: string;
  /** Set when a document sync retired the node (scenes also become omitted); it then leaves every answer. */
  retired_at: Generated<string | null>;
}

export interface EdgesTable {
  id: Id;
  production_id: number;
  from_node_id: number;
  to_node_id: number;
  kind: OneOf<typeof V.EDGE_KINDS>;
  position: number;
}

export interface MediaTable {
  id: Id;
  production_id: number;
  ref: string | null;
  storage_key: string;
  kind: OneOf<typeof V.MEDIA_KINDS>;
  label: string;
  content_type: string;
  size: number | string;
  sha256: string;
  node_id: number | null;
  delivery_id: number | null;
  work_item_id: number | null;
  uploader_engagement_id: number | null;
  created_by: string | null;
  created_at: string;
  updated_at: Stamp;
  /** When a package file (delivery_id set, no work_item_id) was taken out of its package. */
  removed_at: Generated<string | null>;
}

export interface VersionsTable {
  id: Id;
  production_id: number;
  ref: string | null;
  node_id: number;
  version: number;
  variant: string;
  status: string;
  released: Bool;
  archived: Bool;
  note: string | null;
  media_id: number | null;
  created_by: string | null;
  created_by_person_id: number | null;
  created_at: string | null;
  /** `document` (an import wrote it) or `api` (landed through the API). */
  source: Generated<OneOf<typeof V.VERSION_SOURCES>>;
  updated_at: Stamp;
}

export interface VersionNotesTable {
  id: Id;
  production_id: number;
  version_id: number;
  text: string;
  author: string | null;
  created_at: string;
}

export interface IngredientsTable {
  id: Id;
  production_id: number;
  ref: string | null;
  version_id: number;
  kind: string;
  label: string;
  relation: string | null;
  media_id: number | null;
  position: number;
}

export interface ShootDaysTable {
  id: Id;
  production_id: number;
  ref: string | null;
  day_number: number;
  date: string;
  general_call: string | null;
  status: string;
  updated_at: Stamp;
}

export interface ShootStripsTable {
  id: Id;
  production_id: number;
  shoot_day_id: number;
  scene_node_id: number;
  position: number;
}

export interface ApprovalsTable {
  id: Id;
  production_id: number;
  ref: string | null;
  title: string;
  mode: OneOf<typeof V.APPROVAL_MODES>;
  status: OneOf<typeof V.APPROVAL_STATUSES>;
  due: string | null;
  department_id: number | null;
  subject_node_id: number | null;
  subject_version_id: number | null;
  current_step: number;
  created_at: string;
  updated_at: string;
}

export interface ApprovalStepsTable {
  id: Id;
  production_id: number;
  approval_id: number;
  position: number;
  person_id: number | null;
  decision: OneOf<typeof V.STEP_DECISIONS> | null;
  decided_by: string | null;
  note: string | null;
  decided_at: string | null;
}

export interface DepartmentNotesTable {
  id: Id;
  production_id: number;
  ref: string | null;
  department_id: number | null;
  node_id: number | null;
  summary: string;
  created_at: string | null;
  updated_at: Stamp;
}

export interface DeliveriesTable {
  id: Id;
  production_id: number;
  ref: string | null;
  title: string;
  kind: OneOf<typeof V.DELIVERY_KINDS>;
  status: OneOf<typeof V.DELIVERY_STATUSES>;
  due: string | null;
  from_department_id: number | null;
  to_department_id: number | null;
  external_to: string | null;
  spec: string;
  sent_at: string | null;
  gating_approval_id: number | null;
  position: number;
  retired_at: Generated<string | null>;
  updated_at: Stamp;
}

export interface EngagementsTable {
  id: Id;
  production_id: number;
  ref: string | null;
  organisation_id: number;
  created_at: string;
  /** `document` or `admin` (made with the admin CLI or API). */
  source: Generated<OneOf<typeof V.ROW_SOURCES>>;
  retired_at: Generated<string | null>;
  /** `document` when a sync archived it, else the administrator who did. */
  retired_by: Generated<string | null>;
  updated_at: Stamp;
}

export interface EngagementDepartmentsTable {
  engagement_id: number;
  department_id: number;
}

export interface GrantsTable {
  id: Id;
  production_id: number;
  engagement_id: number;
  kind: OneOf<typeof V.GRANT_KINDS>;
  node_id: number | null;
  delivery_id: number | null;
  access: OneOf<typeof V.GRANT_ACCESS> | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  source: Generated<OneOf<typeof V.ROW_SOURCES>>;
  /** `document` when a document revoked it, else the administrator who did. */
  revoked_by: Generated<string | null>;
  updated_at: Stamp;
}

export interface WorkItemsTable {
  id: Id;
  production_id: number;
  delivery_id: number;
  engagement_id: number | null;
  title: string;
  note: string;
  status: OneOf<typeof V.WORK_ITEM_STATUSES>;
  created_by: string | null;
  created_at: string;
  /** The review: its decision is `status`; null until reviewed. */
  review_note: Generated<string | null>;
  reviewed_by: Generated<string | null>;
  reviewed_by_person_id: Generated<number | null>;
  reviewed_at: Generated<string | null>;
  updated_at: Stamp;
}

export interface PurchaseOrdersTable {
  id: Id;
  production_id: number;
  ref: string | null;
  vendor_organisation_id: number | null;
  department_id: number | null;
  account: string;
  description: string;
  amount: number;
  status: OneOf<typeof V.PO_STATUSES>;
  date: string;
  updated_at: Stamp;
}

export interface CostReportsTable {
  id: Id;
  production_id: number;
  week_of: string;
  active: Bool;
}

export interface CostReportLinesTable {
  id: Id;
  production_id: number;
  cost_report_id: number;
  account: string;
  description: string | null;
  budget: number | null;
  actual: number | null;
  committed: number | null;
  position: number;
}

export interface ScriptChangesTable {
  id: Id;
  production_id: number;
  ref: string | null;
  scene_node_id: number | null;
  episode_id: number | null;
  change: string;
  summary: string;
  status: OneOf<typeof V.SCRIPT_CHANGE_STATUSES>;
  detected_at: string;
  updated_at: Stamp;
}

export interface ActivityTable {
  id: Id;
  production_id: number;
  at: string;
  actor: string;
  verb: string;
  summary: string;
  node_id: number | null;
  api_key_id: number | null;
  person_id: number | null;
}

export interface GenerationJobsTable {
  id: Id;
  production_id: number;
  ref: string | null;
  kind: OneOf<typeof V.JOB_KINDS>;
  model: string;
  prompt: string;
  status: string;
  media_id: number | null;
  created_at: string;
  finished_at: string | null;
  updated_at: Stamp;
}

export interface LibraryFilesTable {
  id: Id;
  production_id: number;
  path: string;
  size: number | string | null;
  detected_at: string;
  updated_at: string;
  retired_at: string | null;
  proxy_media_id: number | null;
}

export interface StorageEventsTable {
  id: Id;
  production_id: number;
  dedupe_key: string;
  event_type: OneOf<typeof V.STORAGE_EVENT_TYPES>;
  source: OneOf<typeof V.STORAGE_SOURCES>;
  path: string;
  to_path: string | null;
  detected_at: string;
  received_at: string;
}

export interface StorageTasksTable {
  id: Id;
  production_id: number;
  op: OneOf<typeof V.STORAGE_TASK_OPS>;
  from_path: string;
  to_path: string;
  approved_by: string;
  approved_at: string;
  status: OneOf<typeof V.STORAGE_TASK_STATUSES>;
  note: string | null;
  settled_at: string | null;
  updated_at: Stamp;
}

export interface ApiKeysTable {
  id: Id;
  production_id: number;
  prefix: string;
  hash: string;
  label: string;
  scopes: string;
  engagement_id: number | null;
  person_id: number | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at: string | null;
}

/** The append-only audit trail (recordAudit). */
export interface AuditEventsTable {
  id: Id;
  production_id: number;
  at: string;
  actor: string;
  person_id: number | null;
  key_id: number | null;
  key_prefix: string | null;
  key_label: string | null;
  engagement_id: number | null;
  action: string;
  object_type: string | null;
  object_id: number | null;
  summary: Generated<string>;
  ip: string | null;
  outcome: string;
}

export interface IdempotencyKeysTable {
  id: Id;
  api_key_id: number;
  key: string;
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  created_at: string;
}

export interface VisionLookBriefsTable {
  id: Id;
  production_id: number;
  version_id: number;
  brief: string;
  source_sha256: string;
  created_at: string;
}

export interface ChangesTable {
  id: Id;
  production_id: number;
  revision: number;
  at: string;
  kind: ChangeKind;
  object_id: number;
  op: ChangeOp;
  actor: string | null;
}

/** Request counters shared by the server processes of one database (rateLimits). */
export interface RateLimitsTable {
  key: string;
  /** Unix milliseconds. */
  window_start: number;
  count: number;
}

export interface WebhooksTable {
  id: Id;
  production_id: number;
  url: string;
  /** JSON array of change kinds; null delivers every kind. */
  kinds: string | null;
  secret: string;
  active: Generated<Bool>;
  /** The last change id delivered (or filtered out). */
  cursor: Generated<number>;
  failures: Generated<number>;
  next_attempt_at: string | null;
  last_error: string | null;
  last_delivered_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  created_at: string;
  created_by: string;
  /** Set: the webhook is sent only what this engagement can see. */
  engagement_id: Generated<number | null>;
  /** An engagement webhook's position among its engagement's grant expiries: the instant announced up to… */
  expiries_at: Generated<string | null>;
  /** …and the last grant announced at that instant. */
  expiries_grant_id: Generated<number | null>;
}

export interface WebhookDeliveriesTable {
  id: Id;
  webhook_id: number;
  change_id: number;
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  delivered: Bool;
  /** Set when the attempt announced this grant's expiry (not a change of the log). */
  expired_grant_id: Generated<number | null>;
}

export interface SignInPeopleTable {
  id: Id;
  production_id: number;
  email: string;
  role: OneOf<typeof V.CONSOLE_ROLES>;
  person_id: number | null;
  created_at: string;
  created_by: string;
}

export interface SignInAttemptsTable {
  state_hash: string;
  code_verifier: string;
  nonce: string;
  production_code: string | null;
  expires_at: string;
}

export interface ConsoleSessionsTable {
  id: Id;
  production_id: number;
  token_hash: string;
  csrf_token: string;
  key_id: number;
  sign_in_id: number | null;
  email: string;
  name: string;
  role: OneOf<typeof V.CONSOLE_ROLES>;
  address: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ends_at: string;
  ended_at: string | null;
}

export interface Database {
  productions: ProductionsTable;
  episodes: EpisodesTable;
  organisations: OrganisationsTable;
  departments: DepartmentsTable;
  department_accounts: DepartmentAccountsTable;
  people: PeopleTable;
  nodes: NodesTable;
  edges: EdgesTable;
  media: MediaTable;
  versions: VersionsTable;
  version_notes: VersionNotesTable;
  ingredients: IngredientsTable;
  shoot_days: ShootDaysTable;
  shoot_strips: ShootStripsTable;
  approvals: ApprovalsTable;
  approval_steps: ApprovalStepsTable;
  department_notes: DepartmentNotesTable;
  deliveries: DeliveriesTable;
  engagements: EngagementsTable;
  engagement_departments: EngagementDepartmentsTable;
  grants: GrantsTable;
  work_items: WorkItemsTable;
  purchase_orders: PurchaseOrdersTable;
  cost_reports: CostReportsTable;
  cost_report_lines: CostReportLinesTable;
  script_changes: ScriptChangesTable;
  activity: ActivityTable;
  changes: ChangesTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  signing_secrets: SigningSecretsTable;
  generation_jobs: GenerationJobsTable;
  library_files: LibraryFilesTable;
  storage_events: StorageEventsTable;
  storage_tasks: StorageTasksTable;
  api_keys: ApiKeysTable;
  audit_events: AuditEventsTable;
  idempotency_keys: IdempotencyKeysTable;
  vision_look_briefs: VisionLookBriefsTable;
  rate_limits: RateLimitsTable;
  sign_in_people: SignInPeopleTable;
  sign_in_attempts: SignInAttemptsTable;
  console_sessions: ConsoleSessionsTable;
}

/** The secrets that sign media tickets (migration 0014); the newest generation signs. */
export interface SigningSecretsTable {
  generation: number;
  secret: string;
  created_at: string;
  /** Set by a rotation: verifies until what it signed has expired, then is deleted. */
  retired_at: string | null;
}
