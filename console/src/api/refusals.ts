import { ApiError, type ProdgraphClient } from '@prodgraph/client';

type Middleware = Parameters<ProdgraphClient['use']>[0];

/**
 * Hears of the key being refused while the page is open (a 401: the key was revoked, or its
 * engagement archived) and tells `onRefused` once, with the server's words, so the page can
 * sign out saying why. Several requests in flight are refused at once: the first tells.
 *
 * A request cancelled after its answer arrived but before its body was read (its page was left,
 * or refreshed) has lost the server's words with it: it tells nothing, and the requests that
 * replace it are refused in turn and tell. Kept free of the DOM so the tests can run it in Node.
 */
export function refusalWatcher(onRefused: (error: ApiError) => void): Middleware {
  let told = false;
  return {
    async onResponse({ request, response }) {
      if (response.status !== 401 || told) return response;
      const body: unknown = await response
        .clone()
        .json()
        .catch(() => undefined);
      // undefined: the body could not be read (a body that is not JSON tells with the status)
      if (told || (body === undefined && request.signal.aborted)) return response;
      told = true;
      onRefused(new ApiError(response, body));
      return response;
    },
  };
}
