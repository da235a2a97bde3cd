import { stepPerson, type ProductionDocument } from './schema.js';
import { DocumentError } from './parse.js';
import { pathOf } from '../validation.js';

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

interface RefEntry {
  kind: RefKind;
  /** Where it is declared, formatted only for an error (a season declares hundreds of thousands). */
  path: Array<string | number>;
  /** for assets: their kind (character, costume, …); for versions: the owning asset ref */
  detail?: string;
}

const article = (k: string) => (/^[aeiou]/.test(k) ? `an ${k}` : `a ${k}`);

/**
 * Everything a schema cannot say: refs unique document-wide, every reference resolving to the
 * right kind of object, and the cross-field rules of the format. Throws the first problem.
 */
export function checkDocument(doc: ProductionDocument): Map<string, RefEntry> {
  const refs = new Map<string, RefEntry>();
  const fail = (path: Array<string | number>, message: string): never => {
    throw new DocumentError(`${pathOf(path)}: ${message}`);
  };
  const declare = (ref: string | undefined, kind: RefKind, path: Array<string | number>, detail?: string) => {
    if (ref === undefined) return;
    const seen = refs.get(ref);
    if (seen) fail(path, `the ref "${ref}" is already used at ${pathOf(seen.path)}`);
    refs.set(ref, { kind, path, detail });
  };
  const expect = (ref: string | null | undefined, kinds: RefKind[], path: Array<string | number>) => {
    if (ref === null || ref === undefined) return undefined;
    const entry = refs.get(ref);
    if (!entry) return fail(path, `no object in the document has the ref "${ref}"`);
    if (!kinds.includes(entry.kind)) {
      fail(
        path,
        `"${ref}" is ${article(entry.kind.replace('_', ' '))}, not ${kinds.map((k) => article(k.replace('_', ' '))).join(' or ')}`,
      );
    }
    return entry;
  };

  const p = doc.production;
  const episodic = (p.format ?? 'single') === 'episodic';

  doc.episodes?.forEach((e, i) => declare(e.ref, 'episode', ['episodes', i, 'ref']));
  doc.organisations?.forEach((o, i) => declare(o.ref, 'organisation', ['organisations', i, 'ref']));
  doc.departments?.forEach((d, i) => declare(d.slug, 'department', ['departments', i, 'slug']));
  doc.people?.forEach((x, i) => declare(x.ref, 'person', ['people', i, 'ref']));
  doc.scenes?.forEach((s, i) => declare(s.ref, 'scene', ['scenes', i, 'ref']));
  doc.assets?.forEach((a, i) => {
    declare(a.ref, 'asset', ['assets', i, 'ref'], a.kind ?? 'asset');
    a.versions?.forEach((v, j) => {
      declare(v.ref, 'version', ['assets', i, 'versions', j, 'ref'], a.ref);
      v.ingredients?.forEach((g, k) =>
        declare(g.ref, 'ingredient', ['assets', i, 'versions', j, 'ingredients', k, 'ref']),
      );
    });
  });
  doc.shoot_days?.forEach((d, i) => declare(d.ref, 'shoot_day', ['shoot_days', i, 'ref']));
  doc.approvals?.forEach((a, i) => declare(a.ref, 'approval', ['approvals', i, 'ref']));
  doc.department_notes?.forEach((n, i) => declare(n.ref, 'department_note', ['department_notes', i, 'ref']));
  doc.deliveries?.forEach((d, i) => declare(d.ref, 'delivery', ['deliveries', i, 'ref']));
  doc.engagements?.forEach((e, i) => declare(e.ref, 'engagement', ['engagements', i, 'ref']));
  doc.purchase_orders?.forEach((o, i) => declare(o.ref, 'purchase_order', ['purchase_orders', i, 'ref']));
  doc.script_changes?.forEach((c, i) => declare(c.ref, 'script_change', ['script_changes', i, 'ref']));
  doc.jobs?.forEach((j, i) => declare(j.ref, 'job', ['jobs', i, 'ref']));

  if (!episodic) {
    if (p.season_number !== undefined && p.season_number !== null) {
      fail(['production', 'season_number'], 'only an episodic production has a season number');
    }
    if (p.current_episode)
      fail(['production', 'current_episode'], 'only an episodic production has episodes');
    if (doc.episodes?.length) fail(['episodes'], 'only an episodic production has episodes');
  }
  expect(p.current_episode, ['episode'], ['production', 'current_episode']);

  doc.people?.forEach((x, i) => expect(x.department, ['department'], ['people', i, 'department']));

  doc.scenes?.forEach((s, i) => {
    if (episodic && !s.episode) fail(['scenes', i, 'episode'], 'is required on an episodic production');
    if (!episodic && s.episode) fail(['scenes', i, 'episode'], 'a single production has no episodes');
    expect(s.episode, ['episode'], ['scenes', i, 'episode']);
    const seen = new Set<string>();
    s.assets?.forEach((a, j) => {
      expect(a, ['asset'], ['scenes', i, 'assets', j]);
      if (seen.has(a)) fail(['scenes', i, 'assets', j], `"${a}" is listed twice`);
      seen.add(a);
    });
  });

  doc.assets?.forEach((a, i) => {
    expect(a.department, ['department'], ['assets', i, 'department']);
    if (a.costumes?.length && (a.kind ?? 'asset') !== 'character') {
      fail(['assets', i, 'costumes'], 'only a character wears costumes');
    }
    const seen = new Set<string>();
    a.costumes?.forEach((c, j) => {
      expect(c, ['asset'], ['assets', i, 'costumes', j]);
      if (seen.has(c)) fail(['assets', i, 'costumes', j], `"${c}" is listed twice`);
      seen.add(c);
    });
    const numbers = new Set<number>();
    a.versions?.forEach((v, j) => {
      if (numbers.has(v.version))
        fail(['assets', i, 'versions', j, 'version'], `version ${v.version} appears twice`);
      numbers.add(v.version);
    });
  });

  doc.shoot_days?.forEach((d, i) =>
    d.scenes?.forEach((s, j) => expect(s, ['scene'], ['shoot_days', i, 'scenes', j])),
  );

  doc.approvals?.forEach((a, i) => {
    expect(a.department, ['department'], ['approvals', i, 'department']);
    if (a.mode === 'decision' && a.steps.length !== 1) {
      fail(['approvals', i, 'steps'], 'a decision approval has exactly one step');
    }
    a.steps.forEach((s, j) =>
      expect(
        stepPerson(s),
        ['person'],
        typeof s === 'string' ? ['approvals', i, 'steps', j] : ['approvals', i, 'steps', j, 'person'],
      ),
    );
    if ((a.current_step ?? 0) >= a.steps.length) {
      fail(['approvals', i, 'current_step'], `must be less than the number of steps (${a.steps.length})`);
    }
    if (a.subject) {
      expect(a.subject.node, ['scene', 'asset'], ['approvals', i, 'subject', 'node']);
      const v = expect(a.subject.version, ['version'], ['approvals', i, 'subject', 'version']);
      if (v && v.detail !== a.subject.node) {
        fail(
          ['approvals', i, 'subject', 'version'],
          `"${a.subject.version}" is not a version of "${a.subject.node}"`,
        );
      }
    }
  });

  doc.department_notes?.forEach((n, i) => {
    expect(n.department, ['department'], ['department_notes', i, 'department']);
    expect(n.node, ['scene', 'asset'], ['department_notes', i, 'node']);
  });

  doc.deliveries?.forEach((d, i) => {
    expect(d.from_department, ['department'], ['deliveries', i, 'from_department']);
    expect(d.to_department, ['department'], ['deliveries', i, 'to_department']);
    expect(d.gating_approval, ['approval'], ['deliveries', i, 'gating_approval']);
  });

  doc.engagements?.forEach((e, i) => {
    expect(e.organisation, ['organisation'], ['engagements', i, 'organisation']);
    e.departments?.forEach((d, j) => expect(d, ['department'], ['engagements', i, 'departments', j]));
    e.grants?.forEach((g, j) => {
      const at = ['engagements', i, 'grants', j];
      if (g.kind === 'scene' || g.kind === 'character') {
        if (!g.node) fail([...at, 'node'], `is required on a ${g.kind} grant`);
        const target = expect(g.node, [g.kind === 'scene' ? 'scene' : 'asset'], [...at, 'node']);
        if (g.kind === 'character' && target?.detail !== 'character') {
          fail([...at, 'node'], `"${g.node}" is not a character`);
        }
      } else if (g.node) fail([...at, 'node'], `a ${g.kind} grant names no node`);
      if (g.kind === 'delivery') {
        if (!g.delivery) fail([...at, 'delivery'], 'is required on a delivery grant');
        if (!g.access) fail([...at, 'access'], 'is required on a delivery grant');
        expect(g.delivery, ['delivery'], [...at, 'delivery']);
      } else {
        if (g.delivery) fail([...at, 'delivery'], `a ${g.kind} grant names no delivery`);
        if (g.access) fail([...at, 'access'], 'only a delivery grant has an access');
      }
    });
  });

  doc.purchase_orders?.forEach((o, i) => {
    expect(o.vendor, ['organisation'], ['purchase_orders', i, 'vendor']);
    expect(o.department, ['department'], ['purchase_orders', i, 'department']);
  });

  const active = (doc.cost_reports ?? []).map((r, i) => (r.active ? i : -1)).filter((i) => i >= 0);
  if (active.length > 1) fail(['cost_reports', active[1]!, 'active'], 'only one cost report may be active');

  doc.script_changes?.forEach((c, i) => expect(c.scene, ['scene'], ['script_changes', i, 'scene']));
  doc.activity?.forEach((a, i) => expect(a.node, ['scene', 'asset'], ['activity', i, 'node']));

  return refs;
}
