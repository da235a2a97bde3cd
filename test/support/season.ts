import type { ProductionDocument } from '../../src/document/schema.js';
import { forget } from './sync.js';

/**
 * A week of breakdown changes, as a coordinator makes them: a scene renamed, a scene added and
 * one cut, an asset with versions dropped and a prop added, a delivery moved on, a vendor's
 * grant swapped for the new scene, a crew member's role changed.
 */
export function aWeekOfEdits(doc: ProductionDocument): ProductionDocument {
  const next = JSON.parse(JSON.stringify(doc)) as ProductionDocument;
  const scenes = next.scenes!;
  scenes[0]!.slugline = `${scenes[0]!.slugline} (REVISED)`;
  const cut = scenes[scenes.length - 1]!.ref;
  forget(next, cut);
  next.scenes = scenes.filter((s) => s.ref !== cut);
  next.scenes.push({
    ref: 'sc-added',
    number: '99',
    slugline: 'EXT. HARBOUR WALL - NIGHT',
    ...(scenes[0]!.episode ? { episode: scenes[0]!.episode } : {}),
    assets: [next.assets![0]!.ref],
  });
  const dropped = next.assets!.find((a) => (a.versions ?? []).length > 0 && a.kind !== 'character')!.ref;
  forget(next, dropped);
  next.assets = next.assets!.filter((a) => a.ref !== dropped);
  next.assets.push({ ref: 'pr-added', label: 'Brass hand-bell', kind: 'prop', status: 'planned' });
  const delivery = next.deliveries![1]!;
  delivery.status = delivery.status === 'accepted' ? 'sent' : 'accepted';
  const vendor = next.engagements![0]!;
  vendor.grants = [...vendor.grants!.slice(1), { kind: 'scene', node: 'sc-added' }];
  next.people![1]!.role = `${next.people![1]!.role} (acting)`;
  return next;
}
