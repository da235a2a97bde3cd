import { isLive } from '../../auth/clamp.js';
import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/index.js';
import { nowIso, parseJson, toInt } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import type { Scope } from '../../domain/vocabulary.js';
import { errors } from '../../errors.js';
import { KeyError, mintKeyById } from '../../auth/key-service.js';
import { groupBy } from '../../util/group-by.js';
import { appendActivity } from '../../db/activity-log.js';
import { actorOf, operatorActor, type AuditActor } from '../../auth/audit-actor.js';
import type { AuditAction } from '../../auth/audit-actions.js';
import { recordAudit } from '../../auth/audit-record.js';
import { activityActor } from '../activity/write-entry.js';
import * as repo from './repository.js';
import type { ApiKey, Engagement, Grant, MintedKey, NewEngagement, NewGrant, NewKey } from './schemas.js';

/*
 * Vendor access and keys without a re-import: the admin CLI and the admin API call these, so
 * both follow one set of rules. Every change is one transaction with its activity entry, and
 * the clamp judges grants on every request, so a change holds from the very next request.
 */

/** Who makes an admin change: a key (over HTTP) or a person at the CLI. */
export interface AdminActor {
  name: string;
  apiKeyId: number | null;
  personId: number | null;
  /** How the audit trail names the actor; absent: an operator known only by `name`. */
  audit?: AuditActor;
  /** A person signed in to the console (a session, not a key): the person of this production they are, or null. */
  signedIn?: { personId: number | null };
}

export const actorOfPrincipal = (p: Principal): AdminActor => ({
  name: activityActor(p),
  apiKeyId: p.keyId,
  personId: p.personId,
  audit: actorOf(p),
  ...(p.session ? { signedIn: { personId: p.person?.id ?? null } } : {}),
});

/** The audit row of an admin change, in the change's transaction. */
export function auditAdmin(
  db: Db,
  productionId: number,
  actor: AdminActor,
  action: AuditAction,
  object: { type: string; id: number; engagementId?: number | null },
  summary: string,
) {
  return recordAudit(db, {
    productionId,
    actor: actor.audit ?? operatorActor(actor.name),
    action,
    object: { type: object.type, id: object.id },
    engagementId: object.engagementId ?? null,
    summary,
  });
}

function record(db: Db, productionId: number, actor: AdminActor, verb: string, summary: string, at: string) {
  return appendActivity(db, {
    productionId,
    actor: actor.name,
    verb,
    summary,
    apiKeyId: actor.apiKeyId,
    personId: actor.personId,
    at,
  });
}

// ---- engagements

export async function listEngagements(
  db: Db,
  productionId: number,
  options: { includeArchived?: boolean; ids?: number[] } = {},
): Promise<Engagement[]> {
  const [rows, departments, grants] = await Promise.all([
    repo.engagementRows(db, productionId, options.ids),
    repo.engagementDepartments(db, productionId),
    repo.grantRows(db, productionId),
  ]);
  const slugs = groupBy(departments, (d) => d.engagement_id);
  const now = new Date();
  const live = new Map<number, number>();
  for (const g of grants)
    if (grantIsLive(g, now)) live.set(g.engagement_id, (live.get(g.engagement_id) ?? 0) + 1);
  return rows
    .filter((e) => options.includeArchived || e.retired_at === null)
    .map((e) => ({
      id: e.id,
      ref: e.ref,
      organisation: { id: e.organisation_id, ref: e.organisation_ref, name: e.organisation_name },
      departments: (slugs.get(e.id) ?? []).map((d) => d.slug),
      source: e.source === 'admin' ? 'admin' : 'document',
      live_grants: live.get(e.id) ?? 0,
      keys: toInt(e.keys),
      created_at: e.created_at,
      archived_at: e.retired_at,
    }));
}

/** One engagement, archived or not; 404 when the production has none by that id. */
export async function oneEngagement(db: Db, productionId: number, id: number): Promise<Engagement> {
  const [e] = await listEngagements(db, productionId, { includeArchived: true, ids: [id] });
  if (!e) throw errors.notFound('engagement');
  return e;
}

export async function addEngagement(
  db: Db,
  productionId: number,
  actor: AdminActor,
  input: NewEngagement,
  hooks?: WriteHooks<Engagement>,
): Promise<Engagement> {
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx, changes) => {
    const taken = await repo.refOwner(trx, productionId, input.ref);
    if (taken) throw errors.conflict(`ref: "${input.ref}" already names ${taken} in this production`);
    const org = await repo.organisationById(trx, productionId, input.organisation_id);
    if (!org)
      throw errors.invalid('organisation_id', `no organisation ${input.organisation_id} in this production`);
    const slugs = [...new Set(input.departments ?? [])];
    const depts = slugs.length ? await repo.departmentsBySlug(trx, productionId, slugs) : [];
    const missing = slugs.find((s) => !depts.some((d) => d.slug === s));
    if (missing !== undefined)
      throw errors.invalid('departments', `no department "${missing}" in this production`);
    const at = nowIso();
    const id = await repo.insertEngagement(trx, {
      production_id: productionId,
      ref: input.ref,
      organisation_id: org.id,
      created_at: at,
      source: 'admin',
    });
    await repo.insertEngagementDepartments(
      trx,
      id,
      depts.map((d) => d.id),
    );
    changes.created('engagement', id);
    const summary = `engagement "${input.ref}" for ${org.name}`;
    await record(trx, productionId, actor, 'engaged', summary, at);
    await auditAdmin(
      trx,
      productionId,
      actor,
      'engagement.create',
      { type: 'engagement', id, engagementId: id },
      summary,
    );
    return oneEngagement(trx, productionId, id);
  });
}

export async function archiveEngagement(
  db: Db,
  productionId: number,
  actor: AdminActor,
  id: number,
  hooks?: WriteHooks<Engagement>,
): Promise<Engagement> {
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx, changes) => {
    const at = nowIso();
    const moved = await repo.retireEngagement(trx, productionId, id, { at, by: actor.name });
    const e = await oneEngagement(trx, productionId, id);
    // archiving an archived engagement changes nothing and records nothing
    if (moved) changes.retired('engagement', id);
    const summary = `engagement "${e.ref ?? e.id}" (${e.organisation.name})`;
    if (moved) await record(trx, productionId, actor, 'archived', summary, at);
    await auditAdmin(
      trx,
      productionId,
      actor,
      'engagement.archive',
      { type: 'engagement', id, engagementId: id },
      moved ? summary : `${summary}, already archived`,
    );
    return e;
  });
}

// ---- grants

const grantIsLive = (g: repo.GrantRow, now: Date): boolean =>
  isLive(g, now) &&
  g.engagement_retired_at === null &&
  (g.node_id === null || g.node_retired_at === null) &&
  (g.delivery_id === null || g.delivery_retired_at === null);

const toGrant = (g: repo.GrantRow, now: Date): Grant => ({
  id: g.id,
  engagement_id: g.engagement_id,
  engagement_ref: g.engagement_ref,
  kind: g.kind,
  node_id: g.node_id,
  node_label: g.node_label ?? null,
  episode_code: g.episode_code ?? null,
  delivery_id: g.delivery_id,
  delivery_title: g.delivery_title ?? null,
  access: g.access ?? null,
  expires_at: g.expires_at,
  revoked_at: g.revoked_at,
  live: grantIsLive(g, now),
  source: g.source === 'admin' ? 'admin' : 'document',
  created_at: g.created_at,
});

export async function listGrants(
  db: Db,
  productionId: number,
  options: { engagementId?: number; includeInactive?: boolean } = {},
): Promise<Grant[]> {
  const now = new Date();
  const rows = await repo.grantRows(db, productionId, { engagementId: options.engagementId });
  return rows.map((g) => toGrant(g, now)).filter((g) => options.includeInactive || g.live);
}

async function oneGrant(db: Db, productionId: number, id: number): Promise<Grant> {
  const [g] = await repo.grantRows(db, productionId, { ids: [id] });
  if (!g) throw errors.notFound('grant');
  return toGrant(g, new Date());
}

const describeGrant = (g: Grant): string => {
  const target =
    g.kind === 'own_po'
      ? 'its own purchase orders'
      : g.kind === 'delivery'
        ? `${g.access} on delivery "${g.delivery_title}"`
        : `${g.kind} "${g.node_label}"`;
  return `${target} for engagement "${g.engagement_ref ?? g.engagement_id}"`;
};

const grantObject = (g: Grant) => ({ type: 'grant', id: g.id, engagementId: g.engagement_id });

/** A new grant once checked: its expiry, and the node or delivery its kind names (null when none). */
interface CheckedGrant {
  expires: string | null;
  nodeId: number | null;
  deliveryId: number | null;
}

/** A grant's shape checked before any query: the fields its kind needs, and only those; its expiry. */
function checkNewGrant(input: NewGrant): CheckedGrant {
  const kind = input.kind;
  const a = kind === 'own_po' ? 'an own_po' : `a ${kind}`;
  const needsNode = kind === 'scene' || kind === 'character';
  if (needsNode && input.node_id === undefined)
    throw errors.invalid('node_id', `is required on a ${kind} grant`);
  if (!needsNode && input.node_id !== undefined) throw errors.invalid('node_id', `${a} grant names no node`);
  if (kind === 'delivery') {
    if (input.delivery_id === undefined)
      throw errors.invalid('delivery_id', 'is required on a delivery grant');
    if (input.access === undefined)
      throw errors.invalid('access', 'is required on a delivery grant (read or submit)');
  } else {
    if (input.delivery_id !== undefined) throw errors.invalid('delivery_id', `${a} grant names no delivery`);
    if (input.access !== undefined) throw errors.invalid('access', 'only a delivery grant has an access');
  }
  const targets = { nodeId: input.node_id ?? null, deliveryId: input.delivery_id ?? null };
  if (!input.expires_at) return { expires: null, ...targets };
  const t = Date.parse(input.expires_at);
  if (!Number.isFinite(t)) throw errors.invalid('expires_at', 'must be a valid date-time');
  if (t <= Date.now()) throw errors.invalid('expires_at', 'must be in the future');
  return { expires: new Date(t).toISOString(), ...targets };
}

/** What the grant names exists in the production and is live: the engagement, and its node or delivery. */
async function grantTargets(trx: Db, productionId: number, input: NewGrant, checked: CheckedGrant) {
  const { kind } = input;
  const { nodeId, deliveryId } = checked;
  const e = await repo.engagementById(trx, productionId, input.engagement_id);
  if (!e) throw errors.invalid('engagement_id', `no engagement ${input.engagement_id} in this production`);
  if (e.retired_at !== null)
    throw errors.invalid('engagement_id', `engagement "${e.ref ?? e.id}" is archived`);
  if (nodeId !== null) {
    const n = await repo.liveNode(trx, productionId, nodeId);
    const fits = n && (kind === 'scene' ? n.kind === 'scene' : n.kind === 'character');
    if (!fits) throw errors.invalid('node_id', `no ${kind} ${nodeId} in this production`);
  }
  if (deliveryId !== null) {
    const d = await repo.liveDelivery(trx, productionId, deliveryId);
    if (!d) throw errors.invalid('delivery_id', `no delivery ${deliveryId} in this production`);
    // an internal delivery goes from one department to another: no vendor is ever its recipient
    if (d.kind === 'internal')
      throw errors.invalid(
        'delivery_id',
        `"${d.title}" is an internal delivery (department to department); only an external delivery can be granted to a vendor engagement`,
      );
  }
  return e;
}

export async function addGrant(
  db: Db,
  productionId: number,
  actor: AdminActor,
  input: NewGrant,
  hooks?: WriteHooks<Grant>,
): Promise<Grant> {
  const checked = checkNewGrant(input);
  const { expires } = checked;
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx, changes) => {
    const e = await grantTargets(trx, productionId, input, checked);
    const now = new Date();
    const same = (await repo.grantRows(trx, productionId, { engagementId: e.id })).find(
      (g) =>
        g.kind === input.kind &&
        g.node_id === (input.node_id ?? null) &&
        g.delivery_id === (input.delivery_id ?? null) &&
        g.access === (input.access ?? null) &&
        grantIsLive(g, now),
    );
    if (same)
      throw errors.conflict(`engagement "${e.ref ?? e.id}" already holds this grant live (grant ${same.id})`);
    const at = now.toISOString();
    const id = await repo.insertGrant(trx, {
      production_id: productionId,
      engagement_id: e.id,
      kind: input.kind,
      node_id: input.node_id ?? null,
      delivery_id: input.delivery_id ?? null,
      access: input.access ?? null,
      expires_at: expires,
      revoked_at: null,
      created_at: at,
      source: 'admin',
    });
    const grant = await oneGrant(trx, productionId, id);
    changes.created('grant', id);
    await record(trx, productionId, actor, 'granted', describeGrant(grant), at);
    await auditAdmin(trx, productionId, actor, 'grant.create', grantObject(grant), describeGrant(grant));
    return grant;
  });
}

export async function revokeGrant(
  db: Db,
  productionId: number,
  actor: AdminActor,
  id: number,
  hooks?: WriteHooks<Grant>,
): Promise<Grant> {
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx, changes) => {
    const at = nowIso();
    const fresh = await repo.revokeGrantRow(trx, productionId, id, { at, by: actor.name });
    const grant = await oneGrant(trx, productionId, id);
    if (fresh) {
      changes.retired('grant', id);
      await record(trx, productionId, actor, 'revoked', describeGrant(grant), at);
    }
    await auditAdmin(
      trx,
      productionId,
      actor,
      'grant.revoke',
      grantObject(grant),
      `${describeGrant(grant)}${fresh ? '' : ', already revoked'}`,
    );
    return grant;
  });
}

// ---- keys

const toKey = (k: Awaited<ReturnType<typeof repo.keyRows>>[number]): ApiKey => ({
  id: k.id,
  prefix: k.prefix,
  label: k.label,
  scopes: parseJson<Scope[]>(k.scopes, []),
  engagement_id: k.engagement_id,
  engagement_ref: k.engagement_ref ?? null,
  person_id: k.person_id,
  person_name: k.person_name ?? null,
  created_at: k.created_at,
  last_used_at: k.last_used_at,
  revoked_at: k.revoked_at,
  expires_at: k.expires_at,
});

export async function listKeys(
  db: Db,
  productionId: number,
  options: { engagementId?: number } = {},
): Promise<ApiKey[]> {
  return (await repo.keyRows(db, productionId, { engagementId: options.engagementId })).map(toKey);
}

async function oneKey(db: Db, productionId: number, id: number): Promise<ApiKey> {
  const [k] = await repo.keyRows(db, productionId, { ids: [id] });
  if (!k) throw errors.notFound('key');
  return toKey(k);
}

export async function mintKey(
  db: Db,
  productionId: number,
  actor: AdminActor,
  input: NewKey,
  hooks?: WriteHooks<MintedKey>,
  options: { vendorKeyDays?: number | null } = {},
): Promise<MintedKey> {
  const label = input.label.trim();
  if (label === '') throw errors.invalid('label', 'must not be blank');
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx) => {
    const engagementId = input.engagement_id ?? null;
    if (engagementId !== null) {
      const e = await repo.engagementById(trx, productionId, engagementId);
      if (!e) throw errors.invalid('engagement_id', `no engagement ${engagementId} in this production`);
      if (e.retired_at !== null)
        throw errors.invalid('engagement_id', `engagement "${e.ref ?? engagementId}" is archived`);
    }
    const personId = input.person_id ?? null;
    // A person signed in to the console binds a key to a person only to themselves: a key that
    // writes under someone else's name would make the activity and the audit trail lie.
    if (personId !== null && actor.signedIn && personId !== actor.signedIn.personId)
      throw errors.invalid(
        'person_id',
        actor.signedIn.personId === null
          ? 'you are signed in as no person of this production, so a key you mint cannot be bound to one'
          : `a key you mint can be bound to you only (person ${actor.signedIn.personId}), or to no one`,
      );
    if (personId !== null) {
      const p = await repo.personById(trx, productionId, personId);
      if (!p) throw errors.invalid('person_id', `no person ${personId} in this production`);
    }
    // the server's metrics span every production: a production's admin cannot hand them out
    if (input.scopes?.includes('metrics'))
      throw errors.invalid(
        'scopes',
        '"metrics" reads the whole server’s metrics; only its operator mints such a key (prodgraph keys mint --scopes metrics)',
      );
    let minted;
    try {
      minted = await mintKeyById(trx, {
        productionId,
        label,
        scopes: input.scopes,
        engagementId,
        personId,
        expiresAt: input.expires_at,
        vendorKeyDays: options.vendorKeyDays,
      });
    } catch (err) {
      if (err instanceof KeyError && err.message.startsWith('expires_at'))
        throw errors.invalid('expires_at', err.message.slice('expires_at '.length));
      if (err instanceof KeyError) throw errors.invalid('scopes', err.message);
      throw err;
    }
    const at = nowIso();
    const summary = `key ${minted.prefix} "${label}" (${minted.scopes.join(', ')})${minted.expires_at ? `, expires ${minted.expires_at}` : ''}`;
    await record(trx, productionId, actor, 'minted', summary, at);
    await auditAdmin(
      trx,
      productionId,
      actor,
      'key.mint',
      { type: 'key', id: minted.id, engagementId },
      summary,
    );
    return { ...(await oneKey(trx, productionId, minted.id)), token: minted.token };
  });
}

export async function revokeKey(
  db: Db,
  productionId: number,
  actor: AdminActor,
  id: number,
  hooks?: WriteHooks<ApiKey>,
): Promise<ApiKey> {
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx) => {
    const at = nowIso();
    const fresh = await repo.revokeKeyRow(trx, productionId, id, at);
    const key = await oneKey(trx, productionId, id);
    const summary = `key ${key.prefix} "${key.label}"`;
    if (fresh) await record(trx, productionId, actor, 'revoked', summary, at);
    await auditAdmin(
      trx,
      productionId,
      actor,
      'key.revoke',
      { type: 'key', id, engagementId: key.engagement_id },
      fresh ? summary : `${summary}, already revoked`,
    );
    return key;
  });
}
