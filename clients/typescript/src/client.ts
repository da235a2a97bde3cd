import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import { IDEMPOTENT_WRITES, type paths } from './openapi.js';
import { retryingFetch, type RetryOptions } from './retry.js';

export interface ClientOptions extends RetryOptions {
  /** Where the server answers, e.g. `https://prodgraph.example.com` (no `/api/v1`). */
  baseUrl: string;
  /** An API key (`pgk_…`): production-wide or bound to a vendor engagement. */
  key: string;
  /** The fetch to send with (default: the global one); retries wrap it. */
  fetch?: (input: Request) => Promise<Response>;
  /** Headers sent with every request (e.g. a `User-Agent` where the platform allows one). */
  headers?: Record<string, string>;
}

/** The typed client: `client.GET(path, init)`, `client.POST(...)`, each answering `{ data, error, response }`. */
export type ProdgraphClient = Client<paths>;

/** The off-plane file route trusts its ticket alone; the key is never sent there. */
const TICKET_ROUTE = '/media/{path}';

/** The key on every call but the ticket route. */
const keyMiddleware = (key: string): Middleware => ({
  onRequest({ request, schemaPath }) {
    if (schemaPath !== TICKET_ROUTE) request.headers.set('authorization', `Bearer ${key}`);
  },
});

const REPLAYED = new Set(IDEMPOTENT_WRITES);

/**
 * An Idempotency-Key on every write the server replays, unless the caller chose one: one per
 * call, the same on every retry of that call (retries happen below this, with the same request),
 * so a retry never writes twice.
 */
const idempotencyMiddleware: Middleware = {
  onRequest({ request, schemaPath }) {
    if (REPLAYED.has(`${request.method} ${schemaPath}`) && !request.headers.has('idempotency-key')) {
      request.headers.set('idempotency-key', crypto.randomUUID());
    }
  },
};

const isBlob = (v: unknown): v is Blob => typeof Blob !== 'undefined' && v instanceof Blob;

/** A File keeps its name (the server labels uploads by it); a bare Blob is called `file`. */
const fileName = (v: Blob): string =>
  typeof (v as File).name === 'string' && (v as File).name !== '' ? (v as File).name : 'file';

/**
 * JSON, except a body holding files (Blob or File values, alone or in arrays), which is sent as
 * multipart/form-data: the version and submission uploads take exactly that.
 */
export function serializeBody(body: unknown): FormData | string | undefined {
  if (body === undefined) return undefined;
  if (body instanceof FormData) return body;
  const entries = typeof body === 'object' && body !== null ? Object.entries(body) : [];
  const hasFile = entries.some(([, v]) => isBlob(v) || (Array.isArray(v) && v.some(isBlob)));
  if (!hasFile) return JSON.stringify(body);
  const form = new FormData();
  for (const [name, value] of entries) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v === undefined || v === null) continue;
      if (isBlob(v)) form.append(name, v, fileName(v));
      else form.append(name, String(v));
    }
  }
  return form;
}

/**
 * A client for one server and one key. Every call is typed from the server's OpenAPI document:
 *
 *   const client = createClient({ baseUrl: 'http://127.0.0.1:8080', key });
 *   const { data, error } = await client.GET('/api/v1/bundles/scene/{node_id}', {
 *     params: { path: { node_id: 12 } },
 *   });
 */
export function createClient(options: ClientOptions): ProdgraphClient {
  const inner = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: retryingFetch(inner, options),
    bodySerializer: serializeBody,
    ...(options.headers ? { headers: options.headers } : {}),
  });
  client.use(keyMiddleware(options.key), idempotencyMiddleware);
  return client;
}
