/** Closed vocabularies (decisions.md); anything else is refused with 422 or a path-precise import error. */

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
/** `admin` (engagements, grants and keys over HTTP) is never a default and never on an engagement-bound key. */
export const SCOPES = ['read', 'write', 'submit:turnover', 'read:money', 'admin'] as const;

export type Scope = (typeof SCOPES)[number];
export type GrantKind = (typeof GRANT_KINDS)[number];

/** Edge kinds of the graph: scene uses asset, character wears costume. */
export const EDGE_USES = 'uses';
export const EDGE_WEARS = 'wears';
