import { pathOf } from '../validation.js';
import {
  checkCostReport,
  checkItem,
  checkProduction,
  declareItem,
  fail,
  type Path,
  type RefInfo,
  type RefScope,
} from './check-items.js';
import type { ProductionDocument } from './schema.js';

/** The sections of a document in the format's order, each a list of objects. */
export const SECTIONS = [
  'episodes',
  'organisations',
  'departments',
  'people',
  'scenes',
  'assets',
  'shoot_days',
  'approvals',
  'department_notes',
  'deliveries',
  'engagements',
  'submissions',
  'purchase_orders',
  'cost_reports',
  'script_changes',
  'activity',
  'jobs',
  'library',
] as const satisfies ReadonlyArray<keyof ProductionDocument>;
export type Section = (typeof SECTIONS)[number];

/** Refs declared by a parsed document, with where each is first declared (for errors only). */
class DeclaredRefs implements RefScope {
  private readonly refs = new Map<string, RefInfo & { path: Path }>();

  declare(ref: string | undefined, info: RefInfo, path: Path): void {
    if (ref === undefined) return;
    const seen = this.refs.get(ref);
    if (seen) fail(path, `the ref "${ref}" is already used at ${pathOf(seen.path)}`);
    this.refs.set(ref, { ...info, path });
  }

  lookup(ref: string): RefInfo | undefined {
    return this.refs.get(ref);
  }

  missing(ref: string, path: Path): never {
    return fail(path, `no object in the document has the ref "${ref}"`);
  }
}

/**
 * Everything a schema cannot say: refs unique document-wide, every reference resolving to the
 * right kind of object, and the cross-field rules of the format. Every ref is declared before
 * any reference is checked; throws the first problem.
 */
export function checkDocument(doc: ProductionDocument): void {
  const scope = new DeclaredRefs();
  for (const section of SECTIONS) doc[section]?.forEach((item, i) => declareItem(scope, section, item, i));
  checkProduction(scope, doc.production, doc.episodes?.length ?? 0);
  const active = { count: 0 };
  for (const section of SECTIONS) {
    doc[section]?.forEach((item, i) => {
      if (section === 'cost_reports') checkCostReport(item as never, i, active);
      else checkItem(scope, doc, section, item, i);
    });
  }
}
