import { useState } from 'preact/hooks';
import { useLoad, type Loaded } from './load';

type Fetch<T> = (
  cursor: string | undefined,
  signal: AbortSignal,
) => Promise<{ rows: T[]; next: string | null }>;

export interface Paged<T> extends Loaded<{ rows: T[]; next: string | null }> {
  number: number;
  back: (() => void) | null;
  forward: (() => void) | null;
}

/**
 * One page of a server-paged list at a time: the server's cursors are kept as a stack, so
 * "Next" follows the `Link` the server sent and "Previous" goes back to the cursor before. The
 * page never holds more than one page of rows, whatever the list's length. Changing the
 * filters (`inputs`) starts again at page 1.
 */
export function usePaged<T>(fetchPage: Fetch<T>, inputs: unknown[]): Paged<T> {
  const key = JSON.stringify(inputs);
  const [walk, setWalk] = useState<{ key: string; stack: Array<string | undefined> }>({
    key,
    stack: [undefined],
  });
  const stack = walk.key === key ? walk.stack : [undefined];
  const cursor = stack[stack.length - 1];
  const loaded = useLoad((signal) => fetchPage(cursor, signal), [key, cursor]);
  const next = loaded.loading ? null : (loaded.data?.next ?? null);
  return {
    ...loaded,
    number: stack.length,
    back: stack.length > 1 ? () => setWalk({ key, stack: stack.slice(0, -1) }) : null,
    forward: next ? () => setWalk({ key, stack: [...stack, next] }) : null,
  };
}

export function Pager({ paged, label }: { paged: Paged<unknown>; label: string }) {
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={!paged.back} onClick={() => paged.back?.()}>
        ← Previous
      </button>
      <span aria-live="polite">Page {paged.number}</span>
      <button type="button" disabled={!paged.forward} onClick={() => paged.forward?.()}>
        Next →
      </button>
    </nav>
  );
}
