import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { isAbort } from '../api/client';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/**
 * Runs `load` when its inputs change and on reload(); the request of a page left behind is
 * aborted, and an answer that arrives late never overwrites a newer one.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, inputs: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    const abort = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    latest.current(abort.signal).then(
      (data) => !abort.signal.aborted && setState({ data, loading: false }),
      (error) =>
        !abort.signal.aborted && !isAbort(error) && setState((s) => ({ ...s, error, loading: false })),
    );
    return () => abort.abort();
  }, [...inputs, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
