import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { toInt } from '../../db/values.js';
import { errors } from '../../errors.js';
import { findProduction } from './repository.js';
import type { Production } from './schemas.js';

export async function getProduction(ctx: AppContext, principal: Principal): Promise<Production> {
  const row = await findProduction(ctx.db, principal.productionId);
  if (!row) throw errors.notFound('production');
  const episodic = row.format === 'episodic';
  return {
    id: row.id,
    title: row.title,
    logline: row.logline,
    status: row.status,
    phase: row.phase,
    accent: row.accent,
    format: row.format,
    ...(episodic && row.season_number !== null ? { season_number: row.season_number } : {}),
    stats: {
      departments: toInt(row.departments),
      open_approvals: toInt(row.open_approvals),
      deliveries_in_flight: toInt(row.deliveries_in_flight),
      scenes: toInt(row.scenes),
      nodes: toInt(row.nodes),
    },
  };
}
