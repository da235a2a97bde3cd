import { useState } from 'preact/hooks';

/**
 * One user action that calls the server: `busy` while it runs (its button is disabled, so a
 * double click sends nothing twice) and the refusal, if any, to show.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (work: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await work();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
