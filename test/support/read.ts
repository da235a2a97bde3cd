import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import type { App } from '../../src/app.js';
import type { ImportResult } from '../../src/document/import.js';
import type { TestEnv } from './env.js';
import { get, type Reply } from './http.js';

/** The shipped demo productions: `nightfall` (episodic, the larger) and `lanternfall` (single). */
export const DEMOS = {
  episodic: { path: resolve('demo/episodic/production.yaml'), code: 'nightfall' },
  single: { path: resolve('demo/single/production.yaml'), code: 'lanternfall' },
} as const;

export const loadDemo = (env: TestEnv, which: keyof typeof DEMOS): Promise<ImportResult> =>
  env.import(readFileSync(DEMOS[which].path, 'utf8'), dirname(DEMOS[which].path));

/** Every email and phone a document's people carry. */
export function contactsOf(
  yamlOrDoc: string | { people?: Array<{ email?: string; phone?: string }> },
): string[] {
  const doc = typeof yamlOrDoc === 'string' ? parse(yamlOrDoc) : yamlOrDoc;
  return (doc.people ?? [])
    .flatMap((p: { email?: string; phone?: string }) => [p.email, p.phone])
    .filter((v: unknown): v is string => typeof v === 'string' && v !== '');
}

export const demoContacts = (): string[] =>
  Object.values(DEMOS).flatMap((d) => contactsOf(readFileSync(d.path, 'utf8')));

/** Where in a JSON value a contact detail (or a contact-looking key) appears. */
export function contactLeaks(value: unknown, contacts: readonly string[], at = '$'): string[] {
  if (typeof value === 'string') return contacts.filter((c) => value.includes(c)).map((c) => `${at}: ${c}`);
  if (Array.isArray(value)) return value.flatMap((v, i) => contactLeaks(v, contacts, `${at}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [
      ...(/^(email|phone|e_mail|mobile|contact)/i.test(k) ? [`${at}.${k}: contact-looking key`] : []),
      ...contactLeaks(v, contacts, `${at}.${k}`),
    ]);
  }
  return [];
}

/** `get` that keeps every JSON body it saw, so a file can finally check them all for contact details. */
export function recordingGet() {
  const seen: Array<{ url: string; body: unknown }> = [];
  const fn = async (app: App, url: string, token?: string): Promise<Reply> => {
    const r = await get(app, url, token);
    if (r.body !== undefined) seen.push({ url, body: r.body });
    return r;
  };
  return Object.assign(fn, { seen });
}
