import type { MediaStore, StagedObject } from '../media/store.js';
import type { Metrics } from './registry.js';

/**
 * The media store as the app uses it, counted: files being received right now, and bytes staged
 * and waiting for their write's commit (settled when the write commits or is refused).
 */
export function measuredStore(store: MediaStore, metrics: Metrics): MediaStore {
  return {
    resolveKey: (key) => store.resolveKey(key),
    open: (key, range) => store.open(key, range),
    stat: (key) => store.stat(key),
    delete: (key) => store.delete(key),
    async stage(productionId, source, options) {
      metrics.uploadsInFlight.inc();
      let staged: StagedObject;
      try {
        staged = await store.stage(productionId, source, options);
      } finally {
        metrics.uploadsInFlight.dec();
      }
      metrics.stagedBytesTotal.inc(staged.size);
      metrics.stagedBytes.inc(staged.size);
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        metrics.stagedBytes.dec(staged.size);
      };
      return {
        ...staged,
        commit: () => staged.commit().finally(settle),
        discard: () => staged.discard().finally(settle),
      };
    },
  };
}
