import type { Db } from '../../db/index.js';
import { toInt } from '../../db/values.js';
import * as repo from './repository.js';
import type { GrantTarget, GrantTargetQuery, Organisation } from './schemas.js';

export async function listOrganisations(db: Db, productionId: number): Promise<Organisation[]> {
  const rows = await repo.organisationRows(db, productionId);
  return rows.map((o) => ({ id: o.id, ref: o.ref, name: o.name, engagements: toInt(o.engagements) }));
}

/** One bounded query: at most `limit` live targets of one kind, in the production's order. */
export async function searchGrantTargets(
  db: Db,
  productionId: number,
  query: GrantTargetQuery,
): Promise<GrantTarget[]> {
  const q = (query.q ?? '').trim();
  const limit = query.limit ?? 20;
  if (query.kind === 'scene') {
    const rows = await repo.findScenes(db, productionId, q, limit);
    return rows.map((r) => ({
      kind: 'scene',
      id: r.id,
      label: r.label ?? '',
      number: r.number,
      episode_code: r.episode_code ?? null,
      status: r.status,
    }));
  }
  const rows =
    query.kind === 'character'
      ? await repo.findCharacters(db, productionId, q, limit)
      : await repo.findDeliveries(db, productionId, q, limit);
  return rows.map((r) => ({
    kind: query.kind,
    id: r.id,
    label: r.label,
    number: null,
    episode_code: null,
    status: r.status,
  }));
}
