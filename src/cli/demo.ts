import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import { importDocument } from '../document/import.js';
import { readDocument } from '../document/parse.js';
import { mintKey } from '../auth/key-service.js';
import { operatorActor } from '../auth/audit-actor.js';
import { FileMediaStore } from '../media/store.js';
import { findProductionByCode } from '../modules/production/repository.js';

/** The shipped demo documents, found beside the package (from src/ and from dist/ alike). */
export const DEMO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'demo');
export const DEMO_FILES = [
  join(DEMO_DIR, 'episodic', 'production.yaml'),
  join(DEMO_DIR, 'single', 'production.yaml'),
];

export interface LoadedDemo {
  /** What was loaded (or found already loaded), a line a production. */
  loaded: string[];
  /** The demo keys, a curl line and where to go: the block to keep in sight. */
  keys: string[];
  /** The server's address, as the keys' curl line names it. */
  base: string;
}

/** Loads the demo productions that are absent and mints a fresh set of demo keys on the series. */
export async function loadDemo(db: Db, config: Config): Promise<LoadedDemo> {
  const store = new FileMediaStore(config.mediaDir);
  const lines: string[] = [];
  const docs = [];
  for (const file of DEMO_FILES) {
    const doc = await readDocument(file);
    docs.push(doc);
    const existing = await findProductionByCode(db, doc.production.code);
    if (existing) {
      lines.push(`demo production "${doc.production.code}" is already loaded (id ${existing.id})`);
      continue;
    }
    const result = await importDocument(db, doc, { store, baseDir: dirname(file) });
    lines.push(
      `loaded demo production "${doc.production.code}" (${doc.production.format ?? 'single'}, id ${result.production.id})`,
    );
  }
  const [series] = docs;
  if (!series) throw new Error('internal: the demo has no productions');
  const code = series.production.code;
  // in the audit trail, as any key minted at the command line is
  const minted = operatorActor(`${userInfo().username} via prodgraph demo`);
  const wide = await mintKey(
    db,
    {
      production: code,
      label: 'demo: production-wide',
      scopes: ['read', 'write', 'submit:turnover', 'read:money'],
    },
    minted,
  );
  const engagement = series.engagements?.[0]?.ref;
  const vendor = engagement
    ? await mintKey(
        db,
        {
          production: code,
          label: `demo: vendor ${engagement}`,
          scopes: ['read', 'submit:turnover', 'read:money'],
          engagement,
        },
        minted,
      )
    : null;
  // the console's key: a coordinator manages vendors (admin) and browses the production (read)
  const coordinator = await mintKey(
    db,
    {
      production: code,
      label: 'demo: console coordinator',
      scopes: ['read', 'admin'],
    },
    minted,
  );
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const base = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${config.port}`;
  const keys = [
    '',
    `Demo keys for "${code}" (shown once; mint more with: prodgraph keys mint --production ${code} --label NAME):`,
    `  production-wide (read, write, submit:turnover, read:money): ${wide.token}`,
    `  coordinator, for the console (read, admin): ${coordinator.token}`,
    ...(vendor
      ? [`  vendor, bound to engagement "${engagement}" (round-trip endpoints only): ${vendor.token}`]
      : []),
    '',
    'Try:',
    `  curl -H "Authorization: Bearer ${wide.token}" ${base}/api/v1/production`,
    `API reference: ${base}/docs`,
    `Console: ${base}/console (sign in with the coordinator key)`,
    '',
  ];
  return { loaded: lines, keys, base };
}
