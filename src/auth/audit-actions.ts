/**
 * What the audit trail records, `object.verb`. Open to additions (never renamed: exports and
 * filters name them); each says what object its row's `object_type` and `object_id` name.
 */
export const AUDIT_ACTIONS = [
  'organisation.add',
  'engagement.create',
  'engagement.archive',
  'grant.create',
  'grant.revoke',
  'key.mint',
  'key.revoke',
  'webhook.create',
  'webhook.pause',
  'webhook.resume',
  'webhook.remove',
  'delivery.status',
  'package.file_add',
  'package.file_remove',
  'submission.review',
  'media.download',
  'package.download',
  'session.sign_in',
  'session.sign_out',
  'session.refused',
  'session.revoke',
  'sign_in_person.allow',
  'sign_in_person.change',
  'sign_in_person.withdraw',
  'signing_secret.rotate',
  'access.refused',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_OUTCOMES = ['ok', 'refused'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];
