import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, connect, must } from './api/client';
import { uploader } from './api/upload';
import type { CallerKey } from './api/types';
import { Shell } from './shell';
import { SessionContext, forgetKey, storeKey, storedKey, type Session } from './session';
import { SignIn } from './pages/sign-in';
import { Busy, ErrorNote } from './ui/notes';

type State =
  | { phase: 'out'; notice?: unknown }
  | { phase: 'checking'; key: string }
  | { phase: 'failed'; key: string; error: unknown }
  | { phase: 'in'; key: string; me: CallerKey };

/** Asks the server who the key is: it is kept only once the server has accepted it. */
async function whoIs(key: string): Promise<CallerKey> {
  return must(connect(key).GET('/api/v1/key'));
}

export function App() {
  const [state, setState] = useState<State>(() => {
    const key = storedKey();
    return key ? { phase: 'checking', key } : { phase: 'out' };
  });

  const check = (key: string, remember: boolean) => {
    setState({ phase: 'checking', key });
    whoIs(key).then(
      (me) => {
        if (remember) storeKey(key);
        setState({ phase: 'in', key, me });
      },
      (error) => {
        // a refused key is forgotten at once; a server that did not answer may be retried
        if (error instanceof ApiError && error.status === 401) {
          forgetKey();
          setState({ phase: 'out', notice: error });
        } else setState(remember ? { phase: 'out', notice: error } : { phase: 'failed', key, error });
      },
    );
  };

  useEffect(() => {
    if (state.phase === 'checking' && storedKey() === state.key) check(state.key, false);
  }, []);

  const session = useMemo<Session | null>(() => {
    if (state.phase !== 'in') return null;
    // a key revoked while the page is open: back to signing in, saying why
    const refused = (error: ApiError) => {
      forgetKey();
      setState((now) => (now === state ? { phase: 'out', notice: error } : now));
    };
    return {
      api: connect(state.key, refused),
      upload: uploader(state.key, refused),
      me: state.me,
      signOut() {
        forgetKey();
        history.replaceState(null, '', location.pathname);
        setState({ phase: 'out' });
      },
    };
  }, [state]);

  if (state.phase === 'out') return <SignIn notice={state.notice} onKey={(key) => check(key, true)} />;
  if (state.phase === 'checking') return <Busy label="Checking the key…" />;
  if (state.phase === 'failed') {
    return (
      <main class="signin">
        <ErrorNote error={state.error} title="Could not reach the server" />
        <button type="button" onClick={() => check(state.key, false)}>
          Try again
        </button>{' '}
        <button
          type="button"
          onClick={() => {
            forgetKey();
            setState({ phase: 'out' });
          }}
        >
          Sign out
        </button>
      </main>
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell />
    </SessionContext.Provider>
  );
}
