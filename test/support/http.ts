import type { App } from '../../src/app.js';

export interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

/** One request through app.inject, JSON in and out. */
export async function call(
  app: App,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
  url: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await app.inject({
    method,
    url,
    headers,
    ...(options.body !== undefined ? { payload: options.body as string | object } : {}),
  });
  let body: unknown = undefined;
  if (res.body !== '' && String(res.headers['content-type'] ?? '').includes('json'))
    body = JSON.parse(res.body);
  return { status: res.statusCode, body, headers: res.headers, text: res.body };
}

export const get = (app: App, url: string, token?: string) => call(app, 'GET', url, { token });
