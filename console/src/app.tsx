import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, connect, connectSession, connectWith, must, type Credential } from './api/client';
import { uploader } from './api/upload';
import type { CallerKey, ConsoleSession } from './api/types';
import { Shell } from './shell';
import { SessionContext, forgetKey, storeKey, storedKey, type Session } from './session';
import { SignIn } from './pages/sign-in';
import { Busy, ErrorNote } from './ui/notes';

type State =
  | { phase: 'out'; notice?: unknown }
  | { phase: 'checking'; key: string }
  | { phase: 'resuming' }
  | { phase: 'failed'; key: string; error: unknown }
  | { phase: 'in'; credential: Credential; me: CallerKey; person: ConsoleSession | null };

/** Asks the server who the key is: it is kept only once the server has accepted it. */
async function whoIs(key: string): Promise<CallerKey> {
  return must(connect(key).GET('/api/v1/key'));
}

/**
 * The session the browser's cookie holds, if any (signed in with the studio's identity provider),
 * and what its key may do. Null when there is none or it has ended.
 */
async function resumeSession(): Promise<{ person: ConsoleSession; me: CallerKey } | null> {
  // asked first, so a browser nobody signed in to is never refused (a refusal is a console error)
  const options = await fetch('/api/v1/auth/sign-in-options');
  if (!options.ok || !((await options.json()) as { signed_in?: boolean }).signed_in) return null;
  const answer = await fetch('/api/v1/auth/session', { headers: { accept: 'application/json' } });
  if (!answer.ok) return null;
  const person = (await answer.json()) as ConsoleSession;
  const me = await must(connectSession(person.csrf_token).GET('/api/v1/key'));
  return { person, me };
}

export function App() {
  const [state, setState] = useState<State>(() => {
    const key = storedKey();
    return key ? { phase: 'checking', key } : { phase: 'resuming' };
  });

  const check = (key: string, remember: boolean) => {
    setState({ phase: 'checking', key });
    whoIs(key).then(
      (me) => {
        if (remember) storeKey(key);
        setState({ phase: 'in', credential: { key }, me, person: null });
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
    if (state.phase === 'resuming') {
      resumeSession().then(
        (found) =>
          setState(
            found
              ? { phase: 'in', credential: { csrfToken: found.person.csrf_token }, ...found }
              : { phase: 'out' },
          ),
        (error) => setState({ phase: 'out', notice: error }),
      );
    }
  }, []);

  const session = useMemo<Session | null>(() => {
    if (state.phase !== 'in') return null;
    // a key revoked or a session ended while the page is open: back to signing in, saying why
    const refused = (error: ApiError) => {
      forgetKey();
      setState((now) => (now === state ? { phase: 'out', notice: error } : now));
    };
    const api = connectWith(state.credential, refused);
    return {
      api,
      upload: uploader(state.credential, refused),
      me: state.me,
      person: state.person,
      signOut() {
        forgetKey();
        history.replaceState(null, '', location.pathname);
        // a signed-in session ends at the server, not only in this tab
        if (state.person) void api.POST('/api/v1/auth/sign-out').catch(() => undefined);
        setState({ phase: 'out' });
      },
    };
  }, [state]);

  if (state.phase === 'out') return <SignIn notice={state.notice} onKey={(key) => check(key, true)} />;
  if (state.phase === 'checking') return <Busy label="Checking the key…" />;
  if (state.phase === 'resuming') return <Busy label="Checking the sign-in…" />;
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
