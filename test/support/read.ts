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

let demoContactList: readonly string[] | undefined;

/** Every email and phone of the demo productions (read once: files check every response they saw). */
export const demoContacts = (): readonly string[] =>
  (demoContactList ??= Object.values(DEMOS).flatMap((d) => contactsOf(readFileSync(d.path, 'utf8'))));

const CONTACT_KEY = /^(email|phone|e_mail|mobile|contact)/i;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Where in a JSON value a contact detail (or a contact-looking key) appears. */
export function contactLeaks(value: unknown, contacts: readonly string[], at = '$'): string[] {
  // one pattern tells which strings hold any contact at all; only those are searched one by one
  const any = contacts.length ? new RegExp(contacts.map(escaped).join('|')) : undefined;
  const leaks: string[] = [];
  const walk = (v: unknown, path: () => string): void => {
    if (typeof v === 'string') {
      if (any?.test(v)) for (const c of contacts) if (v.includes(c)) leaks.push(`${path()}: ${c}`);
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, () => `${path()}[${i}]`));
    } else if (v && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (CONTACT_KEY.test(k)) leaks.push(`${path()}.${k}: contact-looking key`);
        walk(item, () => `${path()}.${k}`);
      }
    }
  };
  walk(value, () => at);
  return leaks;
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
