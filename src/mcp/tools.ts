import type { TSchema } from 'typebox';
import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { activityFeed } from '../modules/activity/service.js';
import { listApprovals } from '../modules/approvals/service.js';
import { getAsset, listAssets } from '../modules/assets/service.js';
import { characterBundle, sceneBundle } from '../modules/bundles/service.js';
import { listDeliveries } from '../modules/deliveries/service.js';
import { getDepartment, listDepartments } from '../modules/departments/service.js';
import { getProduction } from '../modules/production/service.js';
import { purchaseOrders } from '../modules/purchase-orders/service.js';
import { listScenes } from '../modules/scenes/service.js';
import { listSchedule } from '../modules/schedule/service.js';
import { listTurnovers, submitTurnover } from '../modules/turnovers/service.js';
import { SubmissionUpload, uploadParts } from './upload.js';

// Arguments reach `run` only after the tool's schema (the REST route's own) has accepted them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Args = Record<string, any>;

export interface ToolSpec {
  name: string;
  title: string;
  /** When to use it: an agent picks tools by this text. */
  description: string;
  /** The REST route this tool is: `METHOD /path` under /api/v1. Auth and schemas come from it. */
  rest: string;
  /** For a REST route answering an array: the key the array travels under in structuredContent. */
  listKey?: string;
  /** Arguments beyond the REST route's path and query (the submission's JSON form of its upload). */
  extraInput?: TSchema;
  readOnly: boolean;
  /** The very service call the REST route makes. */
  run(ctx: AppContext, principal: Principal, args: Args): Promise<unknown>;
}

const VENDOR_404 =
  'An engagement-bound (vendor) key needs a live grant on it; without one the answer is "not found", exactly as for a wrong id.';

/**
 * Exactly fifteen tools: the read endpoints an agent needs, both bundles, turnovers and turnover
 * submissions. Everything else (script changes, people, jobs, media, vision, storage and the other
 * writes) is REST only.
 */
export const TOOLS: readonly ToolSpec[] = [
  {
    name: 'get_production',
    title: 'Production overview',
    description:
      'The production itself: title, logline, status, phase, format (single or episodic) and live counts (departments, open approvals, deliveries in flight, scenes, nodes). Call it first to orient yourself.',
    rest: 'GET /production',
    readOnly: true,
    run: (ctx, p) => getProduction(ctx, p),
  },
  {
    name: 'list_departments',
    title: 'Departments',
    description:
      'Every department: slug, name, cluster, phases, mission, key roles. Use a slug with get_department or as the department filter of list_assets.',
    rest: 'GET /departments',
    listKey: 'departments',
    readOnly: true,
    run: (ctx, p) => listDepartments(ctx, p),
  },
  {
    name: 'get_department',
    title: 'One department',
    description:
      'One department by slug, with its crew (name, role, head of department first; never contact details) and how many assets it owns. Use it for "who is in / who heads" questions.',
    rest: 'GET /departments/:slug',
    readOnly: true,
    run: (ctx, p, a) => getDepartment(ctx, p, a.slug),
  },
  {
    name: 'list_scenes',
    title: 'Scenes',
    description:
      'Every scene in script order: node_id, number, slugline, synopsis, status, revision colour and breakdown elements (cast, props, vfx, …). Use it to find the node_id of a scene for get_scene_bundle.',
    rest: 'GET /scenes',
    listKey: 'scenes',
    readOnly: true,
    run: (ctx, p, a) => listScenes(ctx, p, a),
  },
  {
    name: 'list_assets',
    title: 'Assets',
    description:
      'Asset rows (characters, costumes, locations, props, sets, …): node_id, label, kind, status, department slug, version count, last update. Filters combine: department (slug), kind, status, released ("true" for assets with at least one released version). Use get_asset for one asset in full.',
    rest: 'GET /assets',
    listKey: 'assets',
    readOnly: true,
    run: (ctx, p, a) => listAssets(ctx, p, a),
  },
  {
    name: 'get_asset',
    title: 'One asset in full',
    description:
      "One asset by node_id: every version (released ones with media_path, notes and ingredients; unreleased ones as locked stubs), the scenes that use it, and a character's costumes or a costume's wearers.",
    rest: 'GET /assets/:node_id',
    readOnly: true,
    run: (ctx, p, a) => getAsset(ctx, p, a.node_id),
  },
  {
    name: 'get_schedule',
    title: 'Shooting schedule',
    description:
      'Every shoot day by day number: date, general call, status and its scene strips in shooting order. On an episodic production, episode_id (a list) marks the strips and days of those episodes without dropping any.',
    rest: 'GET /schedule',
    listKey: 'shoot_days',
    readOnly: true,
    run: (ctx, p, a) => listSchedule(ctx, p, a.episode_id ?? []),
  },
  {
    name: 'list_deliveries',
    title: 'Deliveries',
    description:
      'Every delivery, department-to-department and external: status, due date, sender and receiver, spec and its gating approval. For the turnovers a vendor engagement may see, use list_turnovers.',
    rest: 'GET /deliveries',
    listKey: 'deliveries',
    readOnly: true,
    run: (ctx, p, a) => listDeliveries(ctx, p, a),
  },
  {
    name: 'list_approvals',
    title: 'Approvals',
    description:
      'Approval chains, oldest first: title, mode, status, due date, department, subject (node and version) and every step with who decided what; current_step says whose turn it is. Filter with status (pending, approved, changes_requested, rejected). Use it for "what is waiting on whom".',
    rest: 'GET /approvals',
    listKey: 'approvals',
    readOnly: true,
    run: (ctx, p, a) => listApprovals(ctx, p, a),
  },
  {
    name: 'get_activity',
    title: 'Activity feed',
    description:
      'What happened lately, newest first: who did what (released, approved, noted, landed a version, submitted, …) on which node, and when. limit: default 50, at most 200.',
    rest: 'GET /activity',
    listKey: 'activity',
    readOnly: true,
    run: (ctx, p, a) => activityFeed(ctx, p, a),
  },
  {
    name: 'get_scene_bundle',
    title: 'Scene bundle',
    description: `Everything about one scene in one call: the scene, every asset it uses with its released versions (media_path included), its shoot days, and the approvals and department notes on it and its assets. The best first call for any question about one scene. ${VENDOR_404}`,
    rest: 'GET /bundles/scene/:node_id',
    readOnly: true,
    run: (ctx, p, a) => sceneBundle(ctx, p, a.node_id),
  },
  {
    name: 'get_character_bundle',
    title: 'Character bundle',
    description: `One character with the costumes it wears, each with its released versions and the de-duplicated ingredients of those versions (fabrics, references, finishes). Use it for look and wardrobe questions. ${VENDOR_404}`,
    rest: 'GET /bundles/character/:node_id',
    readOnly: true,
    run: (ctx, p, a) => characterBundle(ctx, p, a.node_id),
  },
  {
    name: 'list_turnovers',
    title: 'Turnovers (vendor)',
    description:
      "The deliveries this key's vendor engagement holds a live read or submit grant on: spec, due date, status, can_submit, the package (the files the production sent, shown once the delivery is sent or accepted; fetch each by its media id) and this engagement's own submissions with their files and the production's review (accepted or changes_requested, with its note). Never another engagement's submissions. Empty for a production-wide key (use list_deliveries).",
    rest: 'GET /turnovers',
    listKey: 'turnovers',
    readOnly: true,
    run: (ctx, p, a) => listTurnovers(ctx, p, a),
  },
  {
    name: 'submit_turnover',
    title: 'Submit work on a turnover',
    description:
      'Submits files on a turnover (id: a delivery id from list_turnovers where can_submit is true) for a vendor key holding the submit:turnover scope and a live submit grant. Files go in base64; each becomes its own media object. Optional title (defaults to the delivery title) and note. Not idempotent: each call is a new submission.',
    rest: 'POST /turnovers/:id/submissions',
    extraInput: SubmissionUpload,
    readOnly: false,
    run: (ctx, p, a) => submitTurnover(ctx, p, a.id, uploadParts(a as SubmissionUpload)),
  },
  {
    name: 'get_purchase_orders',
    title: 'Purchase orders (vendor)',
    description:
      "A vendor's own purchase orders and the weekly cost-report lines of its departments' accounts. Needs the read:money scope and a live money grant on the engagement; otherwise empty arrays and week_of null.",
    rest: 'GET /purchase-orders',
    readOnly: true,
    run: (ctx, p) => purchaseOrders(ctx, p),
  },
];
