import type { ProductionDocument } from '../schema.js';

/** The production row a document's `production` block becomes, its defaults filled in. */
export const productionRow = (p: ProductionDocument['production']) => ({
  code: p.code,
  title: p.title,
  logline: p.logline ?? '',
  status: p.status ?? 'active',
  phase: p.phase ?? 'development',
  accent: p.accent ?? 'slate',
  format: p.format ?? 'single',
  season_number: p.format === 'episodic' ? (p.season_number ?? null) : null,
  filespace: p.filespace ?? null,
});
