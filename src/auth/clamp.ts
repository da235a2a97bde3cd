import { sql, type ExpressionBuilder } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/index.js';
import type { Database } from '../db/schema.js';
import { EDGE_USES, EDGE_WEARS, type GrantKind } from '../domain/vocabulary.js';
import type { Principal } from './principal.js';

/**
 * THE clamp: what a key may reach on the round-trip surface (bundles, turnovers, media,
 * purchase orders). Every round-trip service, the MCP tools and any media route ask this
 * object; none of them re-implements a grant rule. docs/architecture.md has the whole picture.
 * The rules, each a door below: a scene or character is reached through a live grant on it
 * (otherwise 404, as for a wrong id); the turnover list is the deliveries an engagement holds a
 * read or submit grant on; a submission needs a live submit grant on its delivery; money needs
 * the engagement's live own_po grant; media, see seesMedia and reachesMedia (a delivery's
 * package is shown to the engagements granted on it once it is sent: packageShown).
 *
 * A production-wide key reaches every object of its production (existence is the caller's
 * query, always scoped by production id). An engagement-bound key reaches only what its live
 * grants name. Grants are judged live at load time, i.e. per request: a cached answer is served
 * only through a door loaded for that request, so a revocation or an expiry takes effect on the
 * very next request.
 */

export type NodeGrantKind = 'scene' | 'character';

/**
 * What a door needs of the engagement's grants (Clamp.load): only these kinds, only the grant
 * on this node, and whether the departments are read (default: every grant, departments too).
 */
export interface ClampNeed {
  kinds?: readonly GrantKind[];
  nodeId?: number;
  departments?: boolean;
}

export interface LiveGrant {
  id: number;
  kind: string;
  nodeId: number | null;
  deliveryId: number | null;
  access: string | null;
  /** When the grant was made or last changed: a turnover newly granted counts as changed. */
  updatedAt: string | null;
  /** When the grant lapses (null: never); it is live now, so this lies in the future. */
  expiresAt: string | null;
}

/** A grant counts only while it is not revoked and its expiry (if any) lies in the future. */
export function isLive(grant: { revoked_at: string | null; expires_at: string | null }, now: Date): boolean {
  if (grant.revoked_at !== null) return false;
  if (grant.expires_at === null) return true;
  const expires = Date.parse(grant.expires_at);
  // an unreadable expiry must fail closed
  return Number.isFinite(expires) && expires > now.getTime();
}

/**
 * The delivery statuses at which a delivery's package (its own files: media with its
 * `delivery_id` and no work item) is shown to the engagements granted on it. Before (draft,
 * ready, blocked, or recalled from sent) the package being prepared stays private.
 */
export const PACKAGE_SHOWN = ['sent', 'accepted'] as const;

export const packageShown = (status: string): boolean =>
  (PACKAGE_SHOWN as readonly string[]).includes(status);

export class Clamp {
  private constructor(
    readonly productionId: number,
    /** null for a production-wide key. */
    readonly engagementId: number | null,
    /** The vendor organisation of the engagement (null for a production-wide key). */
    readonly organisationId: number | null,
    readonly departmentIds: ReadonlySet<number>,
    readonly grants: readonly LiveGrant[],
    /** False for an engagement that is archived or gone: it reaches nothing, not even its own uploads. */
    readonly active: boolean = true,
    /**
     * Deliveries a live grant names but a re-import retired: reached no more, yet a vendor's
     * `updated_since` still learns they are gone.
     */
    readonly retiredDeliveryIds: ReadonlySet<number> = new Set(),
  ) {}

  /**
   * The clamp for one request: no query for a production-wide key; for an engagement, one for
   * the engagement row with the live grants the door needs, and one for its departments when
   * the answer is narrowed by department. A route asks only for what its door needs (`need`):
   * the scene bundle for a scene grant on that scene, turnovers for delivery grants, purchase
   * orders for `own_po`, not all 500 grants of an engagement. Expiry is judged here, at
   * request time, whatever is asked, by the database's clock as read with the key (judgedAt).
   */
  static async load(
    db: Db,
    principal: Principal,
    need: ClampNeed = {},
    now: Date = new Date(principal.judgedAt ?? Date.now()),
  ): Promise<Clamp> {
    if (principal.engagementId === null) {
      return new Clamp(principal.productionId, null, null, new Set(), []);
    }
    const door = await doorRows(db, principal, principal.engagementId, need);
    return Clamp.fromRows(principal.productionId, principal.engagementId, door, now);
  }

  /**
   * An engagement's clamp read afresh, outside any request (no key, no revision to keep its rows
   * by): what the webhook worker judges an engagement webhook's deliveries with, at delivery time.
   */
  static async forEngagement(
    db: Db,
    productionId: number,
    engagementId: number,
    need: ClampNeed = {},
    now: Date = new Date(),
  ): Promise<Clamp> {
    const door = await readDoorRows(db, productionId, engagementId, need);
    return Clamp.fromRows(productionId, engagementId, door, now);
  }

  private static fromRows(productionId: number, engagementId: number, door: DoorRows, now: Date): Clamp {
    const { rows, departmentIds } = door;
    // An engagement that is archived or no longer exists reaches nothing; it never widens to the production.
    const [first] = rows;
    if (!first) {
      return new Clamp(productionId, engagementId, null, new Set(), [], false);
    }
    const grants: LiveGrant[] = [];
    const retiredDeliveryIds = new Set<number>();
    for (const r of rows) {
      if (r.grant_id === null || r.kind === null) continue;
      if (!isLive({ revoked_at: r.revoked_at, expires_at: r.expires_at }, now)) continue;
      if (r.delivery_retired_at != null && r.delivery_id !== null) retiredDeliveryIds.add(r.delivery_id);
      if (r.node_retired_at != null || r.delivery_retired_at != null) continue;
      grants.push({
        id: r.grant_id,
        kind: r.kind,
        nodeId: r.node_id,
        deliveryId: r.delivery_id,
        access: r.access,
        updatedAt: r.updated_at ?? null,
        expiresAt: r.expires_at,
      });
    }
    return new Clamp(
      productionId,
      engagementId,
      first.organisation_id,
      departmentIds,
      grants,
      true,
      retiredDeliveryIds,
    );
  }

  get productionWide(): boolean {
    return this.engagementId === null;
  }

  /** Node ids named by live grants of one kind. */
  grantedNodeIds(kind: NodeGrantKind): number[] {
    return [...new Set(this.grants.flatMap((g) => (g.kind === kind && g.nodeId !== null ? [g.nodeId] : [])))];
  }

  /**
   * The nodes live grants of one kind name, each with when its reach lapses: null when a grant
   * on it never expires, else the latest expiry of its grants.
   */
  grantedNodeExpiry(kind: NodeGrantKind): Map<number, string | null> {
    const out = new Map<number, string | null>();
    for (const g of this.grants) {
      if (g.kind !== kind || g.nodeId === null) continue;
      const seen = out.get(g.nodeId);
      const lapses =
        seen === null || g.expiresAt === null
          ? null
          : seen === undefined || Date.parse(g.expiresAt) > Date.parse(seen)
            ? g.expiresAt
            : seen;
      out.set(g.nodeId, lapses);
    }
    return out;
  }

  /** Scene bundle / character bundle door: a live grant of that kind on that node. */
  reachesNode(kind: NodeGrantKind, nodeId: number): boolean {
    if (this.productionWide) return true;
    return this.grants.some((g) => g.kind === kind && g.nodeId === nodeId);
  }

  /**
   * Deliveries this engagement holds a live read or submit grant on, with whether it may
   * submit. Empty for a production-wide key: turnovers are an engagement's view.
   */
  grantedDeliveries(): Map<number, { canSubmit: boolean; grantedAt: string | null }> {
    const out = new Map<number, { canSubmit: boolean; grantedAt: string | null }>();
    for (const g of this.grants) {
      if (g.kind !== 'delivery' || g.deliveryId === null) continue;
      if (g.access !== 'read' && g.access !== 'submit') continue;
      const seen = out.get(g.deliveryId);
      const canSubmit = (seen?.canSubmit ?? false) || g.access === 'submit';
      const grantedAt = [seen?.grantedAt ?? null, g.updatedAt].reduce((a, b) =>
        b !== null && (a === null || b > a) ? b : a,
      );
      out.set(g.deliveryId, { canSubmit, grantedAt });
    }
    return out;
  }

  /** Whether the delivery is within reach at all (404 otherwise, as for a wrong id). */
  reachesDelivery(deliveryId: number): boolean {
    return this.productionWide || this.grantedDeliveries().has(deliveryId);
  }

  /** Only an engagement with a live submit grant on this delivery may submit to it. */
  canSubmitTo(deliveryId: number): boolean {
    return this.grantedDeliveries().get(deliveryId)?.canSubmit ?? false;
  }

  /** Money door: a live own_po grant; a production-wide key has no vendor slice. */
  holdsOwnPo(): boolean {
    return !this.productionWide && this.grants.some((g) => g.kind === 'own_po');
  }

  /** Department narrowing for approvals and notes: everything for a production-wide key. */
  coversDepartment(departmentId: number | null): boolean {
    if (this.productionWide) return true;
    return departmentId !== null && this.departmentIds.has(departmentId);
  }

  narrowByDepartment<T>(rows: readonly T[], departmentOf: (row: T) => number | null): T[] {
    return rows.filter((r) => this.coversDepartment(departmentOf(r)));
  }
}

/** The engagement row with the (unexpired or not) grants a door needs. */
function grantRows(db: Db, productionId: number, engagementId: number, need: ClampNeed) {
  return (
    db
      .selectFrom('engagements as e')
      .leftJoin('grants as g', (j) => {
        let on = j.onRef('g.engagement_id', '=', 'e.id').on('g.revoked_at', 'is', null);
        if (need.kinds) on = on.on('g.kind', 'in', [...need.kinds]);
        if (need.nodeId !== undefined) on = on.on('g.node_id', '=', need.nodeId);
        return on;
      })
      // a grant on a retired scene, character or delivery reaches nothing
      .leftJoin('nodes as gn', 'gn.id', 'g.node_id')
      .leftJoin('deliveries as gd', 'gd.id', 'g.delivery_id')
      .where('e.id', '=', engagementId)
      .where('e.production_id', '=', productionId)
      .where('e.retired_at', 'is', null)
      .select([
        'e.organisation_id',
        'gn.retired_at as node_retired_at',
        'gd.retired_at as delivery_retired_at',
        'g.id as grant_id',
        'g.kind',
        'g.node_id',
        'g.delivery_id',
        'g.access',
        'g.expires_at',
        'g.revoked_at',
        'g.updated_at',
      ])
      .orderBy('g.id')
      .execute()
  );
}

type GrantRow = Awaited<ReturnType<typeof grantRows>>[number];

interface DoorRows {
  rows: GrantRow[];
  departmentIds: ReadonlySet<number>;
}

async function readDoorRows(
  db: Db,
  productionId: number,
  engagementId: number,
  need: ClampNeed,
): Promise<DoorRows> {
  const rows = await grantRows(db, productionId, engagementId, need);
  const departments =
    need.departments === false || rows.length === 0
      ? []
      : await db
          .selectFrom('engagement_departments')
          .where('engagement_id', '=', engagementId)
          .select('department_id')
          .execute();
  return { rows, departmentIds: new Set(departments.map((d) => d.department_id)) };
}

/**
 * Door rows read, per database, by production revision: every change to a grant, an engagement
 * or anything a grant names (a retired scene or delivery) commits with a new revision of its
 * production (commitChanges), and the revision is read with the key on every request,
 * so rows filed under the revision a request read are exactly what a query would answer now.
 * Expiry is NOT kept: it is judged from these rows at every load, against that request's clock.
 * Inside a transaction (a write judging its own door) the rows are always read afresh.
 * Bounded by the rows held (about 300 bytes each); rows of an older revision simply age out.
 */
const MEMO_ROWS = 50_000;

interface DoorMemo {
  kept: LRUCache<string, DoorRows>;
  /** Reads under way, so concurrent requests for one door read it once. */
  reading: Map<string, Promise<DoorRows>>;
}

const doorMemo = new WeakMap<Db, DoorMemo>();

function memoOf(db: Db): DoorMemo {
  let memo = doorMemo.get(db);
  if (!memo) {
    memo = {
      kept: new LRUCache<string, DoorRows>({ maxSize: MEMO_ROWS, sizeCalculation: (r) => r.rows.length + 1 }),
      reading: new Map(),
    };
    doorMemo.set(db, memo);
  }
  return memo;
}

async function doorRows(
  db: Db,
  principal: Principal,
  engagementId: number,
  need: ClampNeed,
): Promise<DoorRows> {
  if (db.isTransaction) return readDoorRows(db, principal.productionId, engagementId, need);
  const { kept, reading } = memoOf(db);
  const key = [
    principal.productionId,
    principal.revision,
    engagementId,
    need.kinds?.join(',') ?? '*',
    need.nodeId ?? '*',
    need.departments === false ? 'no-departments' : 'departments',
  ].join(':');
  const found = kept.get(key);
  if (found) return found;
  let read = reading.get(key);
  if (!read) {
    read = readDoorRows(db, principal.productionId, engagementId, need).finally(() => reading.delete(key));
    reading.set(key, read);
    const rows = await read;
    // a door larger than the whole budget is simply not kept (lru-cache refuses it)
    kept.set(key, rows);
    return rows;
  }
  return read;
}

export interface MediaFacts {
  id: number;
  production_id: number;
  work_item_id: number | null;
  uploader_engagement_id: number | null;
}

/**
 * Whether live scene or character grants reach media `mediaId`: the media of a released
 * version of an asset a granted scene uses or a costume a granted character wears, and the media
 * of the ingredients of those costumes' released versions (the character bundle lists them; the
 * scene bundle lists no ingredients). An EXISTS over the grants, built to run whether or not the
 * media exists, so that asking about a missing id does the same work as about a hidden one.
 */
export function grantsReachMedia(eb: ExpressionBuilder<Database, never>, clamp: Clamp, mediaId: number) {
  const none = [-1];
  const scenes = clamp.grantedNodeIds('scene');
  const characters = clamp.grantedNodeIds('character');
  const pid = clamp.productionId;
  return eb.exists(
    eb
      .selectFrom('versions as v')
      .innerJoin('edges as e', 'e.to_node_id', 'v.node_id')
      // the bundles list live linked nodes only
      .innerJoin('nodes as shown', 'shown.id', 'v.node_id')
      .where('v.production_id', '=', pid)
      .where('v.released', '=', 1)
      .where('e.production_id', '=', pid)
      .where('shown.retired_at', 'is', null)
      .where((w) =>
        w.or([
          // scene bundle: released versions of the assets the scene uses
          w.and([
            w('e.kind', '=', EDGE_USES),
            w('e.from_node_id', 'in', scenes.length ? scenes : none),
            w('v.media_id', '=', mediaId),
          ]),
          // character bundle: released versions of the costumes it wears, and their ingredients
          w.and([
            w('e.kind', '=', EDGE_WEARS),
            w('e.from_node_id', 'in', characters.length ? characters : none),
            w.or([
              w('v.media_id', '=', mediaId),
              w.exists(
                w
                  .selectFrom('ingredients as i')
                  .whereRef('i.version_id', '=', 'v.id')
                  .where('i.media_id', '=', mediaId)
                  .select(sql`1`.as('one')),
              ),
            ]),
          ]),
        ]),
      )
      .select('v.id'),
  );
}

/**
 * Whether media `mediaId` is a file of a package this engagement is shown: a delivery's own
 * file (no work item), not taken out of the package, of a live delivery it holds a live read or
 * submit grant on, while that delivery is sent or accepted. An EXISTS built, like
 * grantsReachMedia, to do the same work whether or not the media exists.
 */
export function packageReachesMedia(eb: ExpressionBuilder<Database, never>, clamp: Clamp, mediaId: number) {
  const deliveries = [...clamp.grantedDeliveries().keys()];
  return eb.exists(
    eb
      .selectFrom('media as pm')
      .innerJoin('deliveries as pd', 'pd.id', 'pm.delivery_id')
      .where('pm.id', '=', mediaId)
      .where('pm.production_id', '=', clamp.productionId)
      .where('pm.work_item_id', 'is', null)
      .where('pm.uploader_engagement_id', 'is', null)
      .where('pm.removed_at', 'is', null)
      .where('pd.id', 'in', deliveries.length ? deliveries : [-1])
      .where('pd.status', 'in', [...PACKAGE_SHOWN])
      .where('pd.retired_at', 'is', null)
      .select('pm.id'),
  );
}

/**
 * Everything that may reach media `mediaId` for an engagement besides its own uploads: its
 * live bundles (grantsReachMedia) and the packages it is shown (packageReachesMedia). One
 * expression, evaluated whether or not the media exists.
 */
export const reachesMedia = (eb: ExpressionBuilder<Database, never>, clamp: Clamp, mediaId: number) =>
  eb.or([grantsReachMedia(eb, clamp, mediaId), packageReachesMedia(eb, clamp, mediaId)]);

/** What a media door needs of the grants: scenes and characters (bundles) and deliveries (packages). */
export const MEDIA_NEED: ClampNeed = { kinds: ['scene', 'character', 'delivery'], departments: false };

/**
 * Media visibility: a production-wide key sees all of its production's media. An
 * engagement sees what it uploaded itself, exactly the media its live bundles show, and the
 * files of the packages it is shown (`reachedByGrants`, from reachesMedia: a delivery it holds a
 * live read or submit grant on, sent or accepted, the file not taken out). Work submitted on a
 * turnover by anyone else is never visible, whatever the delivery grants say.
 */
export function seesMedia(clamp: Clamp, media: MediaFacts, reachedByGrants: boolean): boolean {
  if (media.production_id !== clamp.productionId) return false;
  if (clamp.productionWide) return true;
  if (!clamp.active) return false;
  if (media.uploader_engagement_id !== null && media.uploader_engagement_id === clamp.engagementId) {
    return true;
  }
  if (media.work_item_id !== null || media.uploader_engagement_id !== null) return false;
  return reachedByGrants;
}

/** What the webhook worker read of the objects a batch of changes names (one query per kind). */
export interface ChangeFacts {
  media: ReadonlyMap<
    number,
    {
      delivery_id: number | null;
      work_item_id: number | null;
      uploader_engagement_id: number | null;
      removed_at: string | null;
    }
  >;
  submissions: ReadonlyMap<number, { delivery_id: number; engagement_id: number | null }>;
  grants: ReadonlyMap<number, { engagement_id: number }>;
  deliveries: ReadonlyMap<number, { status: string; sent_at: string | null }>;
}

/** The only change kinds an engagement webhook is ever told of. */
export const ENGAGEMENT_EVENT_KINDS = ['delivery', 'media', 'submission', 'grant'] as const;

/** A package file of a delivery the engagement is shown: not removed before the package went out. */
function hearsOfPackageFile(
  clamp: Clamp,
  media: NonNullable<ReturnType<ChangeFacts['media']['get']>>,
  facts: ChangeFacts,
): boolean {
  if (media.work_item_id !== null || media.delivery_id === null) return false;
  if (!clamp.grantedDeliveries().has(media.delivery_id)) return false;
  const delivery = facts.deliveries.get(media.delivery_id);
  if (!delivery || !packageShown(delivery.status)) return false;
  // a file taken out before the package was (last) sent was never shown to a vendor
  return media.removed_at === null || delivery.sent_at === null || media.removed_at >= delivery.sent_at;
}

/**
 * Whether an engagement may be told of a change (an engagement webhook's delivery), judged at
 * delivery time with its clamp then: a turnover it holds a live read or submit grant on (or one
 * a re-import retired under such a grant, so it learns to drop it); a file of a package it is
 * shown (the delivery sent or accepted); its own submission on a turnover it reaches, and the
 * files it uploaded; a grant of its own, whatever became of it. Nothing else, and nothing at
 * all for an archived engagement.
 */
export function engagementHears(
  clamp: Clamp,
  change: { kind: string; id: number },
  facts: ChangeFacts,
): boolean {
  if (clamp.productionWide || !clamp.active) return false;
  const granted = clamp.grantedDeliveries();
  switch (change.kind) {
    case 'delivery':
      return granted.has(change.id) || clamp.retiredDeliveryIds.has(change.id);
    case 'submission': {
      const w = facts.submissions.get(change.id);
      return w !== undefined && w.engagement_id === clamp.engagementId && granted.has(w.delivery_id);
    }
    case 'grant':
      return facts.grants.get(change.id)?.engagement_id === clamp.engagementId;
    case 'media': {
      const m = facts.media.get(change.id);
      if (!m) return false;
      if (m.uploader_engagement_id !== null) return m.uploader_engagement_id === clamp.engagementId;
      return hearsOfPackageFile(clamp, m, facts);
    }
    default:
      return false;
  }
}
