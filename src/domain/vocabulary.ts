/**
 * Closed vocabularies: the only values these fields ever hold. Where a client or a document
 * supplies one, anything else is refused (a 422 naming the field, an import error naming the
 * document path); the row types of `Database` use them, so a stray value does not compile.
 */

export const PRODUCTION_FORMATS = ['single', 'episodic'] as const;
export const ACCENTS = [
  'slate',
  'red',
  'orange',
  'amber',
  'green',
  'teal',
  'cyan',
  'blue',
  'indigo',
  'violet',
  'rose',
] as const;
export const NODE_STATUSES = ['planned', 'active', 'blocked', 'done'] as const;
export const SCENE_STATUSES = [...NODE_STATUSES, 'omitted'] as const;
export const DELIVERY_STATUSES = ['draft', 'blocked', 'ready', 'sent', 'accepted'] as const;
export const DELIVERY_KINDS = ['external', 'internal'] as const;
export const PO_STATUSES = ['open', 'partial', 'closed'] as const;
export const APPROVAL_STATUSES = ['pending', 'approved', 'changes_requested', 'rejected'] as const;
export const APPROVAL_MODES = ['decision', 'chain'] as const;
/** What a decided approval step records. */
export const STEP_DECISIONS = ['approved', 'changes'] as const;
export const SCRIPT_CHANGE_STATUSES = ['pending', 'approved', 'dismissed'] as const;
export const PRIVACIES = ['open', 'restricted'] as const;
export const GRANT_KINDS = ['scene', 'character', 'delivery', 'own_po'] as const;
export const GRANT_ACCESS = ['read', 'submit'] as const;
export const STORAGE_EVENT_TYPES = ['create', 'modify', 'delete', 'move'] as const;
export const STORAGE_SOURCES = ['audit_tail', 'scan', 'manual'] as const;
export const JOB_KINDS = ['image', 'video'] as const;
/**
 * `admin` (engagements, grants and keys over HTTP) and `metrics` (the server's Prometheus
 * metrics, a scraper's scope) are never a default and never on an engagement-bound key.
 */
export const SCOPES = ['read', 'write', 'submit:turnover', 'read:money', 'admin', 'metrics'] as const;
/**
 * A signed-in person's role in the console: `admin` manages everything (vendors, keys, webhooks,
 * reviews); `coordinator` everything but keys, webhooks and sign-in; `viewer` browses.
 */
export const CONSOLE_ROLES = ['admin', 'coordinator', 'viewer'] as const;

/** What made a row the document does not own alone: an import, or the admin CLI and API. */
export const ROW_SOURCES = ['document', 'admin'] as const;
/** What made a version: an import, or an upload through the API. */
export const VERSION_SOURCES = ['document', 'api'] as const;
/** What the API shows as a media object's kind, from its sniffed content type. */
export const MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'file'] as const;
/** A vendor's submission on a turnover. */
export const WORK_ITEM_STATUSES = ['submitted', 'accepted', 'changes_requested'] as const;
/** What a review decides about a submission (its status becomes the decision). */
export const REVIEW_DECISIONS = ['accepted', 'changes_requested'] as const;
/** Operations the storage agent is asked to make on the filespace, and how each ended. */
export const STORAGE_TASK_OPS = ['move'] as const;
export const STORAGE_TASK_STATUSES = ['pending', 'done', 'failed'] as const;

/** Edge kinds of the graph: scene uses asset, character wears costume. */
export const EDGE_USES = 'uses';
export const EDGE_WEARS = 'wears';
export const EDGE_KINDS = [EDGE_USES, EDGE_WEARS] as const;

/** One value of a closed vocabulary: `OneOf<typeof GRANT_KINDS>` is `'scene' | 'character' | …`. */
export type OneOf<T extends readonly string[]> = T[number];
/** Whether `value` is one of `list`'s values (and, to the compiler, of its type). */
export const isOneOf = <T extends readonly string[]>(list: T, value: unknown): value is T[number] =>
  typeof value === 'string' && list.includes(value);
export type Scope = OneOf<typeof SCOPES>;
export type ConsoleRole = OneOf<typeof CONSOLE_ROLES>;
export type GrantKind = OneOf<typeof GRANT_KINDS>;
export type MediaKind = OneOf<typeof MEDIA_KINDS>;
export type DeliveryStatus = OneOf<typeof DELIVERY_STATUSES>;
export type ReviewDecision = OneOf<typeof REVIEW_DECISIONS>;
