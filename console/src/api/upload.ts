import { ApiError, Unreachable, type Credential } from './client';

/** How far an upload has gone: bytes of the request body sent, of `total`. */
export interface Progress {
  sent: number;
  total: number;
}

export interface UploadInit {
  onProgress?: (p: Progress) => void;
  signal?: AbortSignal;
}

/** Sends `form` and answers the parsed JSON body of a 2xx; anything else throws like `must`. */
export type Uploader = <T>(path: string, form: FormData, init?: UploadInit) => Promise<T>;

/**
 * An Idempotency-Key from getRandomValues, which (unlike crypto.randomUUID) every page has,
 * served over https or not.
 */
function idempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * A multipart upload that reports its progress. fetch cannot report how much of a request body
 * has gone (a streamed request body needs HTTP/2), so this is one XMLHttpRequest, with the key
 * and an Idempotency-Key, whose `upload.onprogress` says how many bytes the browser has sent.
 * A refusal is an ApiError with the server's words (a 401 also tells `onRefused`, as every
 * other request does); no answer at all is Unreachable; a cancelled upload is an AbortError.
 */
export function uploader(credential: Credential, onRefused?: (error: ApiError) => void): Uploader {
  return <T>(path: string, form: FormData, init: UploadInit = {}) =>
    new Promise<T>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      const abort = () => xhr.abort();
      if (init.signal?.aborted) return reject(new DOMException('The upload was cancelled.', 'AbortError'));
      init.signal?.addEventListener('abort', abort, { once: true });
      xhr.open('POST', `${location.origin}${path}`);
      if ('key' in credential) xhr.setRequestHeader('authorization', `Bearer ${credential.key}`);
      else xhr.setRequestHeader('x-csrf-token', credential.csrfToken);
      xhr.setRequestHeader('idempotency-key', idempotencyKey());
      xhr.setRequestHeader('accept', 'application/json');
      xhr.upload.onprogress = (e) => init.onProgress?.({ sent: e.loaded, total: e.total });
      xhr.onload = () => {
        init.signal?.removeEventListener('abort', abort);
        const body = parsed(xhr.responseText);
        if (xhr.status >= 200 && xhr.status < 300) return resolve(body as T);
        const response = new Response(null, { status: xhr.status, statusText: xhr.statusText });
        const error = new ApiError(response, body);
        if (xhr.status === 401) onRefused?.(error);
        reject(error);
      };
      xhr.onerror = () => reject(new Unreachable());
      xhr.onabort = () => reject(new DOMException('The upload was cancelled.', 'AbortError'));
      xhr.send(form);
    });
}
