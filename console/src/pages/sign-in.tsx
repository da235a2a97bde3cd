import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote } from '../ui/notes';

/** Why the server sent the browser back without a session (`#/sign-in-refused/<reason>`), in words. */
const REFUSALS: Record<string, string> = {
  not_allowed: 'Your account is not allowed to sign in to this console. Ask an administrator to add you.',
  domain: 'Accounts of your email domain may not sign in here.',
  group: 'Your account is in none of the groups allowed to sign in here.',
  unverified_email: 'Your identity provider has not verified your email address.',
  no_email: 'Your identity provider did not say your email address.',
  choose_production: 'You may sign in to several productions: open the console from your production’s link.',
  provider: 'The identity provider refused the sign-in, or its answer did not check out. Try again.',
  no_attempt: 'That sign-in had expired or was not started in this browser. Try again.',
};

function refusalNote(): string | null {
  const reason = /^#\/sign-in-refused\/(\w+)$/.exec(location.hash)?.[1];
  return reason === undefined ? null : (REFUSALS[reason] ?? 'The sign-in was refused.');
}

/** Whether this server signs people in with an identity provider (then its button is offered). */
function useIdentityProvider(): boolean {
  const [offered, setOffered] = useState(false);
  useEffect(() => {
    fetch('/api/v1/auth/sign-in-options')
      .then((r) => (r.ok ? r.json() : null))
      .then((o: { identity_provider?: boolean } | null) => setOffered(o?.identity_provider === true))
      .catch(() => setOffered(false));
  }, []);
  return offered;
}

/** Paste a key once; it stays in this tab only (sessionStorage) until "Sign out" or the tab closes. */
export function SignIn({ notice, onKey }: { notice?: unknown; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const identityProvider = useIdentityProvider();
  // read once, then taken out of the address: a later sign-in starts from the console's start
  const [refused] = useState(refusalNote);
  useEffect(() => {
    if (refused) history.replaceState(null, '', location.pathname);
  }, []);
  useEffect(() => {
    document.title = 'Sign in · prodgraph console';
    input.current?.focus();
  }, []);
  return (
    <main class="signin" id="main">
      <h1>prodgraph console</h1>
      <p>
        Sign in with an API key of your production. An <strong>admin</strong> key manages vendors and
        webhooks, a production-wide <strong>read</strong> key browses the production, a vendor key shows
        exactly what its engagement sees.
      </p>
      {refused && (
        <div class="note error" role="alert">
          <p>{refused}</p>
        </div>
      )}
      {identityProvider && (
        <p>
          <a class="button primary" href="/api/v1/auth/oidc/login">
            Sign in with your studio account
          </a>
        </p>
      )}
      {notice ? <ErrorNote error={notice} title="That key was not accepted" /> : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const k = key.trim();
          if (k) onKey(k);
        }}
      >
        <div class="field">
          <label for="key">API key</label>
          <input
            id="key"
            ref={input}
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
            value={key}
            aria-describedby="key-hint"
            onInput={(e) => setKey(e.currentTarget.value)}
          />
          <small id="key-hint" class="hint">
            Starts with <code>pgk_</code>. It is kept in this browser tab only, and forgotten when you sign
            out or close the tab.
          </small>
        </div>
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
    </main>
  );
}
