import { pathOf } from '../validation.js';
import { DocumentError } from './parse.js';
import { stepPerson, type DocApproval, type DocAsset, type ProductionDocument } from './schema.js';

/*
 * The rules of the format a schema cannot say, one small function per kind of object: what
 * refs it declares and what its references must point at. The whole-document check runs them
 * over a parsed document (every declaration first); the first import of a streamed document
 * runs them object by object as the objects arrive.
 */

/** What each ref names; a reference must point at the kind its field expects. */
export type RefKind =
  | 'episode'
  | 'organisation'
  | 'department'
  | 'person'
  | 'scene'
  | 'asset'
  | 'version'
  | 'ingredient'
  | 'shoot_day'
  | 'approval'
  | 'department_note'
  | 'delivery'
  | 'engagement'
  | 'purchase_order'
  | 'script_change'
  | 'job';

export type Path = Array<string | number>;
type Doc = Required<ProductionDocument>;

/** What a check needs to know of a declared ref. */
export interface RefInfo {
  kind: RefKind;
  /** Versions: the ref of the asset they belong to. */
  owner?: string;
  /** Assets: whether the asset is a character (character grants name one). */
  character?: boolean;
}

/** Where refs are declared and looked up. */
export interface RefScope {
  declare(ref: string | undefined, info: RefInfo, path: Path): void;
  /** The declared ref, or undefined when there is none (yet). */
  lookup(ref: string): RefInfo | undefined;
  /** A reference whose target may come later in the document (edges, the current episode). */
  later?(ref: string, kinds: RefKind[], path: Path): void;
  /** A reference to a ref that is not declared: an error, or (streaming) wait for it. */
  missing(ref: string, path: Path): never;
}

export const fail = (path: Path, message: string): never => {
  throw new DocumentError(`${pathOf(path)}: ${message}`);
};

const article = (k: string) => (/^[aeiou]/.test(k) ? `an ${k}` : `a ${k}`);
const words = (k: RefKind) => article(k.replace('_', ' '));

export function expect(
  scope: RefScope,
  ref: string | null | undefined,
  kinds: RefKind[],
  path: Path,
): RefInfo | undefined {
  if (ref === null || ref === undefined) return undefined;
  const entry = scope.lookup(ref);
  if (!entry) return scope.missing(ref, path);
  if (!kinds.includes(entry.kind)) {
    fail(path, `"${ref}" is ${words(entry.kind)}, not ${kinds.map(words).join(' or ')}`);
  }
  return entry;
}

/** A reference whose target may be declared further on: checked at once, or at the end. */
function expectLater(scope: RefScope, ref: string, kinds: RefKind[], path: Path): void {
  if (scope.later) scope.later(ref, kinds, path);
  else expect(scope, ref, kinds, path);
}

const isEpisodic = (doc: Pick<ProductionDocument, 'production'>) =>
  (doc.production.format ?? 'single') === 'episodic';

export function checkProduction(
  scope: RefScope,
  p: ProductionDocument['production'],
  episodes: number,
): void {
  if ((p.format ?? 'single') !== 'episodic') {
    if (p.season_number !== undefined && p.season_number !== null) {
      fail(['production', 'season_number'], 'only an episodic production has a season number');
    }
    if (p.current_episode)
      fail(['production', 'current_episode'], 'only an episodic production has episodes');
    if (episodes > 0) fail(['episodes'], 'only an episodic production has episodes');
  }
  if (p.current_episode)
    expectLater(scope, p.current_episode, ['episode'], ['production', 'current_episode']);
}

/** Declarations of one object of a section (for assets, with their versions and ingredients). */
export function declareItem(scope: RefScope, section: keyof Doc, item: unknown, i: number): void {
  const at = (...rest: Path): Path => [section, i, ...rest];
  switch (section) {
    case 'departments':
      return scope.declare((item as Doc['departments'][number]).slug, { kind: 'department' }, at('slug'));
    case 'assets': {
      const a = item as DocAsset;
      scope.declare(a.ref, { kind: 'asset', character: (a.kind ?? 'asset') === 'character' }, at('ref'));
      a.versions?.forEach((v, j) => {
        scope.declare(v.ref, { kind: 'version', owner: a.ref }, at('versions', j, 'ref'));
        v.ingredients?.forEach((g, k) =>
          scope.declare(g.ref, { kind: 'ingredient' }, at('versions', j, 'ingredients', k, 'ref')),
        );
      });
      return;
    }
    default: {
      const kind = DECLARES[section];
      if (kind) scope.declare((item as { ref?: string }).ref, { kind }, at('ref'));
    }
  }
}

const DECLARES: Partial<Record<keyof Doc, RefKind>> = {
  episodes: 'episode',
  organisations: 'organisation',
  people: 'person',
  scenes: 'scene',
  shoot_days: 'shoot_day',
  approvals: 'approval',
  department_notes: 'department_note',
  deliveries: 'delivery',
  engagements: 'engagement',
  purchase_orders: 'purchase_order',
  script_changes: 'script_change',
  jobs: 'job',
};

/** The references and rules of one object of a section. */
export function checkItem(
  scope: RefScope,
  doc: Pick<ProductionDocument, 'production'>,
  section: keyof Doc,
  item: unknown,
  i: number,
): void {
  const check = ITEM_CHECKS[section];
  check?.(scope, item as never, [section, i], doc);
}

type ItemCheck<T> = (scope: RefScope, item: T, at: Path, doc: Pick<ProductionDocument, 'production'>) => void;

function listedOnce(scope: RefScope, refs: readonly string[] | undefined, kinds: RefKind[], at: Path): void {
  const seen = new Set<string>();
  refs?.forEach((r, j) => {
    expectLater(scope, r, kinds, [...at, j]);
    if (seen.has(r)) fail([...at, j], `"${r}" is listed twice`);
    seen.add(r);
  });
}

const checkScene: ItemCheck<Doc['scenes'][number]> = (scope, s, at, doc) => {
  const episodic = isEpisodic(doc);
  if (episodic && !s.episode) fail([...at, 'episode'], 'is required on an episodic production');
  if (!episodic && s.episode) fail([...at, 'episode'], 'a single production has no episodes');
  expect(scope, s.episode, ['episode'], [...at, 'episode']);
  listedOnce(scope, s.assets, ['asset'], [...at, 'assets']);
};

const checkAsset: ItemCheck<DocAsset> = (scope, a, at) => {
  expect(scope, a.department, ['department'], [...at, 'department']);
  if (a.costumes?.length && (a.kind ?? 'asset') !== 'character') {
    fail([...at, 'costumes'], 'only a character wears costumes');
  }
  listedOnce(scope, a.costumes, ['asset'], [...at, 'costumes']);
  const numbers = new Set<number>();
  a.versions?.forEach((v, j) => {
    if (numbers.has(v.version)) fail([...at, 'versions', j, 'version'], `version ${v.version} appears twice`);
    numbers.add(v.version);
  });
};

const checkApproval: ItemCheck<DocApproval> = (scope, a, at) => {
  expect(scope, a.department, ['department'], [...at, 'department']);
  if (a.mode === 'decision' && a.steps.length !== 1) {
    fail([...at, 'steps'], 'a decision approval has exactly one step');
  }
  a.steps.forEach((s, j) =>
    expect(
      scope,
      stepPerson(s),
      ['person'],
      typeof s === 'string' ? [...at, 'steps', j] : [...at, 'steps', j, 'person'],
    ),
  );
  if ((a.current_step ?? 0) >= a.steps.length) {
    fail([...at, 'current_step'], `must be less than the number of steps (${a.steps.length})`);
  }
  if (a.subject) {
    expect(scope, a.subject.node, ['scene', 'asset'], [...at, 'subject', 'node']);
    const v = expect(scope, a.subject.version, ['version'], [...at, 'subject', 'version']);
    if (v && v.owner !== a.subject.node) {
      fail([...at, 'subject', 'version'], `"${a.subject.version}" is not a version of "${a.subject.node}"`);
    }
  }
};

const checkEngagement: ItemCheck<Doc['engagements'][number]> = (scope, e, at) => {
  expect(scope, e.organisation, ['organisation'], [...at, 'organisation']);
  e.departments?.forEach((d, j) => expect(scope, d, ['department'], [...at, 'departments', j]));
  e.grants?.forEach((g, j) => checkGrant(scope, g, [...at, 'grants', j]));
};

function checkGrant(
  scope: RefScope,
  g: NonNullable<Doc['engagements'][number]['grants']>[number],
  at: Path,
): void {
  if (g.kind === 'scene' || g.kind === 'character') {
    if (!g.node) fail([...at, 'node'], `is required on a ${g.kind} grant`);
    const target = expect(scope, g.node, [g.kind === 'scene' ? 'scene' : 'asset'], [...at, 'node']);
    if (g.kind === 'character' && !target?.character) fail([...at, 'node'], `"${g.node}" is not a character`);
  } else if (g.node) fail([...at, 'node'], `a ${g.kind} grant names no node`);
  if (g.kind === 'delivery') {
    if (!g.delivery) fail([...at, 'delivery'], 'is required on a delivery grant');
    if (!g.access) fail([...at, 'access'], 'is required on a delivery grant');
    expect(scope, g.delivery, ['delivery'], [...at, 'delivery']);
  } else {
    if (g.delivery) fail([...at, 'delivery'], `a ${g.kind} grant names no delivery`);
    if (g.access) fail([...at, 'access'], 'only a delivery grant has an access');
  }
}

const ITEM_CHECKS: Partial<Record<keyof Doc, ItemCheck<never>>> = {
  people: (scope, x: Doc['people'][number], at) =>
    expect(scope, x.department, ['department'], [...at, 'department']),
  scenes: checkScene,
  assets: checkAsset,
  shoot_days: (scope, d: Doc['shoot_days'][number], at) =>
    d.scenes?.forEach((s, j) => expect(scope, s, ['scene'], [...at, 'scenes', j])),
  approvals: checkApproval,
  department_notes: (scope, n: Doc['department_notes'][number], at) => {
    expect(scope, n.department, ['department'], [...at, 'department']);
    expect(scope, n.node, ['scene', 'asset'], [...at, 'node']);
  },
  deliveries: (scope, d: Doc['deliveries'][number], at) => {
    expect(scope, d.from_department, ['department'], [...at, 'from_department']);
    expect(scope, d.to_department, ['department'], [...at, 'to_department']);
    expect(scope, d.gating_approval, ['approval'], [...at, 'gating_approval']);
  },
  engagements: checkEngagement,
  submissions: (scope, s: Doc['submissions'][number], at) => {
    expect(scope, s.delivery, ['delivery'], [...at, 'delivery']);
    expect(scope, s.engagement, ['engagement'], [...at, 'engagement']);
  },
  purchase_orders: (scope, o: Doc['purchase_orders'][number], at) => {
    expect(scope, o.vendor, ['organisation'], [...at, 'vendor']);
    expect(scope, o.department, ['department'], [...at, 'department']);
  },
  script_changes: (scope, c: Doc['script_changes'][number], at) =>
    expect(scope, c.scene, ['scene'], [...at, 'scene']),
  activity: (scope, a: Doc['activity'][number], at) =>
    expect(scope, a.node, ['scene', 'asset'], [...at, 'node']),
};

/** Only one weekly cost report may be active; `active` counts those seen so far. */
export function checkCostReport(r: Doc['cost_reports'][number], i: number, active: { count: number }): void {
  if (!r.active) return;
  active.count++;
  if (active.count > 1) fail(['cost_reports', i, 'active'], 'only one cost report may be active');
}
