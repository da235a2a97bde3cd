import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api/client';
import type { Uploader } from './api/upload';
import type { CallerKey, Scope } from './api/types';

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
  signOut: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('no session');
  return session;
}

export const has = (me: CallerKey, scope: Scope): boolean => me.scopes.includes(scope);

/** What the key may do in the console. */
export function abilities(me: CallerKey) {
  const vendor = me.engagement !== null;
  return {
    vendor,
    manage: !vendor && has(me, 'admin'),
    browse: !vendor && has(me, 'read'),
  };
}
