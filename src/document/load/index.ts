import { withBulkPageCache } from '../../db/bulk-cache.js';
import type { Db } from '../../db/index.js';
import { refreshStatistics } from '../../db/statistics.js';
import { nowIso } from '../../db/values.js';
import { inWriteTransaction } from '../../db/write-hooks.js';
import { commitStaged } from '../../media/store.js';
import type { Plan } from '../sync/plan.js';
import { Loader, type LoadOptions } from './loader.js';
import type { DocumentSource } from './source.js';

export { documentSource, jsonFileSource, type DocumentSource } from './source.js';

export interface Loaded {
  production: { id: number; code: string };
  plan: Plan;
  /** Every ref of the document to the id the API uses for it (built when asked: a season has millions). */
  refs(): Record<string, number>;
  refCount: number;
}

/**
 * The first import of a production, from a source of any size: one transaction through the
 * one write path, media made permanent once it commits, planner statistics refreshed after.
 */
export async function loadDocument(
  db: Db,
  source: DocumentSource,
  options: LoadOptions & { actor?: string; statistics?: boolean },
): Promise<Loaded> {
  const actor = options.actor ?? 'prodgraph import';
  // the files staged so far are committed or discarded with the transaction, even one that failed
  let started: Loader | null = null;
  const { plan, loader: L } = await withBulkPageCache(db, () =>
    commitStaged(
      () => started?.staged() ?? [],
      () =>
        inWriteTransaction(
          db,
          ({ loader }: { loader: Loader }) => ({ productionId: loader.productionId, actor }),
          undefined,
          async (trx, changes) => {
            const loader = new Loader(trx, changes.at, options);
            started = loader;
            await source.read(loader);
            const plan = await loader.finish();
            // a reader loads a new production from its lists, not from a log of its every row
            changes.created('production', loader.productionId);
            return { plan, loader };
          },
        ),
    ),
  );
  if (options.statistics !== false) await refreshStatistics(db).catch(() => undefined);
  return {
    production: { id: L.productionId, code: plan.production.code },
    plan,
    refs: () => L.refs.toRecord(),
    refCount: L.refs.size,
  };
}

/** What a first import of the source would create, counted; nothing is written or staged. */
export async function planLoad(db: Db, source: DocumentSource, options: LoadOptions): Promise<Plan> {
  const loader = new Loader(db, nowIso(), { ...options, dryRun: true });
  await source.read(loader);
  return loader.finish();
}
