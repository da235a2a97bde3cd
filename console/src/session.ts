import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api/client';
import type { Uploader } from './api/upload';
import type { CallerKey, ConsoleSession, Scope } from './api/types';

/*
 * The key lives in this tab's sessionStorage only: never localStorage, a cookie or a URL. It
 * goes when the tab closes, and "Sign out" removes it at once.
 */
const SLOT = 'prodgraph.console.key';

export const storedKey = (): string | null => sessionStorage.getItem(SLOT);
export const storeKey = (key: string): void => sessionStorage.setItem(SLOT, key);
export const forgetKey = (): void => sessionStorage.removeItem(SLOT);

export interface Session {
  api: Api;
  /** Multipart uploads that report their progress (the package, a vendor's submission). */
  upload: Uploader;
  me: CallerKey;
  /** Set when signed in with the studio's identity provider (not with a key). */
  person: ConsoleSession | null;
  signOut: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('no session');
  return session;
}

export const has = (me: CallerKey, scope: Scope): boolean => me.scopes.includes(scope);

/**
 * What the key or the signed-in person may do in the console. `credentials` (keys, webhooks,
 * sign-in, sessions) is an admin key's, or a signed-in admin's: never a coordinator's.
 */
export function abilities(me: CallerKey, person: ConsoleSession | null = null) {
  const vendor = me.engagement !== null;
  const manage = !vendor && has(me, 'admin');
  return {
    vendor,
    manage,
    credentials: manage && (person === null || person.role === 'admin'),
    browse: !vendor && has(me, 'read'),
  };
}
