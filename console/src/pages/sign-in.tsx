import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote } from '../ui/notes';

/** Paste a key once; it stays in this tab only (sessionStorage) until "Sign out" or the tab closes. */
export function SignIn({ notice, onKey }: { notice?: unknown; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  const input = useRef<HTMLInputElement>(null);
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
