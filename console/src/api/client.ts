import { ApiError, createClient, nextCursor, type ProdgraphClient } from '@prodgraph/client';
import { refusalWatcher } from './refusals';

/*
 * The console calls the API through @prodgraph/client, the project's own TypeScript client:
 * every call typed from the OpenAPI document, the key on every request, an Idempotency-Key on
 * every write, retries on dropped connections, 429 and 502-504. What is here is only what a
 * page needs on top: one way to turn an answer into its body or a message to show.
 */

export type Api = ProdgraphClient;
export { ApiError };

export const isAbort = (err: unknown): boolean => err instanceof DOMException && err.name === 'AbortError';

/** The server did not answer at all (after the client's own retries). */
export class Unreachable extends Error {
  constructor() {
    super('The server did not answer. Check that it is running and reachable, then try again.');
    this.name = 'Unreachable';
  }
}

/**
 * A client for this server and this key. A 401 means the key was revoked while the page was
 * open: `onRefused` hears of it once, with the server's words, so the page can sign out.
 */
export function connect(key: string, onRefused?: (error: ApiError) => void): Api {
  const api = createClient({ baseUrl: location.origin, key });
  if (onRefused) api.use(refusalWatcher(onRefused));
  return api;
}

/**
 * A client for a console session signed in with the studio's identity provider: no key, the
 * browser's HttpOnly cookie instead (fetch sends it to this origin), and the session's CSRF
 * token on every write (the server refuses a cookie-authenticated write without it).
 */
export function connectSession(csrfToken: string, onRefused?: (error: ApiError) => void): Api {
  const api = createClient({ baseUrl: location.origin, key: '' });
  api.use({
    onRequest({ request }) {
      request.headers.delete('authorization');
      if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method))
        request.headers.set('x-csrf-token', csrfToken);
      return request;
    },
  });
  if (onRefused) api.use(refusalWatcher(onRefused));
  return api;
}

/** How the console calls the server: a pasted key, or a signed-in session's CSRF token. */
export type Credential = { key: string } | { csrfToken: string };

export const connectWith = (c: Credential, onRefused?: (error: ApiError) => void): Api =>
  'key' in c ? connect(c.key, onRefused) : connectSession(c.csrfToken, onRefused);

type Outcome<T> = { data?: T; error?: unknown; response: Response };

/** The answer's body, or an ApiError carrying the server's `detail` (Unreachable when none came). */
export async function must<T>(call: Promise<Outcome<T>>): Promise<T> {
  let outcome: Outcome<T>;
  try {
    outcome = await call;
  } catch (err) {
    if (isAbort(err)) throw err;
    throw new Unreachable();
  }
  const { data, error, response } = outcome;
  if (!response.ok) throw new ApiError(response, error);
  return data as T;
}

/** A paged list call: the rows, and the cursor of the next page from the `Link` header. */
export async function page<T>(call: Promise<Outcome<T[]>>): Promise<{ rows: T[]; next: string | null }> {
  let link: string | null = null;
  const rows = await must(
    call.then((o) => {
      link = o.response.headers.get('link');
      return o;
    }),
  );
  return { rows, next: nextCursor(link) ?? null };
}
