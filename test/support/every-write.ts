import assert from 'node:assert/strict';
import type { ProductionDocument } from '../../src/document/schema.js';
import type { Db } from '../../src/db/index.js';
import type { TestEnv } from './env.js';
import { smallProduction } from './fixtures.js';
import { call } from './http.js';
import { png, submit } from './round-trip.js';
import { jpeg, upload } from './write.js';

/*
 * One write of every kind the API takes, in turn, for tests that must find each kind again
 * (a backup restored): what each wrote is found by a label or an id it answered.
 */

export const WRITE_KINDS = [
  'asset',
  'note',
  'version',
  'decision',
  'grant',
  'revoke',
  'engagement',
  'key',
  'webhook',
  'storage',
  'turnover',
] as const;
export type WriteKind = (typeof WRITE_KINDS)[number];

export interface Acked {
  kind: WriteKind;
  /** A label the write stored (or, for a grant and its revocation, the grant's id). */
  label: string;
  id?: number;
}

/** Pending approvals a loop of decisions works through, one each. */
const APPROVALS = 40;

/** The production the writer writes to: small, with pending approvals to decide. */
export function everyWriteDocument(code: string): ProductionDocument {
  const base = smallProduction(code);
  return {
    ...base,
    approvals: [
      ...base.approvals!,
      ...Array.from({ length: APPROVALS }, (_, i) => ({
        ref: `ap-w${i}`,
        title: `Plate ${i}`,
        mode: 'decision' as const,
        status: 'pending' as const,
        department: 'vfx',
        steps: ['p-ben'],
      })),
    ],
  };
}

/**
 * Writes of every kind through `env.app`, each `next()` the next kind in turn. `code` names a
 * production imported from everyWriteDocument; the env must allow webhooks to 127.0.0.0/8.
 */
export async function everyWriter(env: TestEnv, code: string, refs: Record<string, number>) {
  const admin = await env.mint({
    production: code,
    label: 'every write',
    scopes: ['read', 'write', 'admin'],
  });
  const vendor = await env.mint({
    production: code,
    engagement: 'eng-pix',
    scopes: ['read', 'submit:turnover'],
  });
  const coat = refs['co-coat']!;
  let n = 0;
  let decided = 0;
  let lastGrant = 0;
  const post = (url: string, body: unknown) => call(env.app, 'POST', `/api/v1${url}`, { token: admin, body });
  const expect = (kind: string, r: { status: number; text: string }, status = 201): undefined => {
    assert.equal(r.status, status, `${kind}: ${r.text}`);
    return undefined;
  };

  const write: Record<WriteKind, (label: string) => Promise<number | undefined>> = {
    asset: async (label) => expect('asset', await post('/assets', { label })),
    note: async (label) => expect('note', await post(`/assets/${coat}/notes`, { text: label })),
    version: async (label) => {
      const r = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
        token: admin,
        files: [{ name: 'v.jpg', bytes: await jpeg(n), type: 'image/jpeg' }],
        fields: { note: label },
      });
      expect('version', r);
      return undefined;
    },
    decision: async (label) => {
      if (decided >= APPROVALS) throw new Error('every approval is decided: raise APPROVALS');
      const id = refs[`ap-w${decided++}`]!;
      const r = await post(`/approvals/${id}/decide`, {
        decision: 'approved',
        decided_by: 'Ben Okafor',
        note: label,
      });
      expect('decision', r, 200);
      return id;
    },
    grant: async () => {
      const r = await post('/admin/grants', {
        engagement_id: refs['eng-hal'],
        kind: 'scene',
        node_id: refs.sc1,
      });
      expect('grant', r);
      lastGrant = r.body.id;
      return lastGrant;
    },
    revoke: async () => {
      expect('revoke', await post(`/admin/grants/${lastGrant}/revoke`, undefined), 200);
      return lastGrant;
    },
    engagement: async (label) =>
      expect(
        'engagement',
        await post('/admin/engagements', { ref: label, organisation_id: refs['org-hal'] }),
      ),
    key: async (label) => expect('key', await post('/admin/keys', { label })),
    webhook: async (label) =>
      expect(
        'webhook',
        await post('/admin/webhooks', { url: `http://127.0.0.1:9/${label}`, kinds: ['asset'] }),
      ),
    storage: async (label) => {
      const r = await post('/storage/events', {
        filespace: `${code}-fs`,
        events: [
          {
            event_type: 'create',
            path: `incoming/${label}.exr`,
            source: 'audit_tail',
            dedupe_key: label,
            detected_at: new Date().toISOString(),
          },
        ],
      });
      expect('storage', r, 200);
      assert.equal(r.body.accepted, 1);
      return undefined;
    },
    turnover: async (label) => {
      const r = await submit(env, vendor, refs['dl-plates']!, [
        { name: 'title', value: label },
        {
          name: 'files',
          filename: 't.png',
          content: await png(`#${(n % 4096).toString(16).padStart(3, '0')}`),
        },
      ]);
      assert.equal(r.statusCode, 200, `turnover: ${r.body}`);
      return undefined;
    },
  };

  return {
    /** The next write, acknowledged (or the assertion that it was not). */
    async next(): Promise<Acked> {
      const kind = WRITE_KINDS[n % WRITE_KINDS.length]!;
      const label = `w-${kind}-${n}`;
      const id = await write[kind](label);
      n++;
      return { kind, label, ...(typeof id === 'number' ? { id } : {}) };
    },
  };
}

/** Whether a database holds what an acknowledged write wrote. */
export async function holds(db: Db, a: Acked): Promise<boolean> {
  const one = async (q: { executeTakeFirst(): Promise<unknown> }) =>
    (await q.executeTakeFirst()) !== undefined;
  switch (a.kind) {
    case 'asset':
      return one(db.selectFrom('nodes').where('label', '=', a.label).select('id'));
    case 'note':
      return one(db.selectFrom('version_notes').where('text', '=', a.label).select('id'));
    case 'version':
      return one(db.selectFrom('versions').where('note', '=', a.label).select('id'));
    case 'decision':
      return one(
        db
          .selectFrom('approval_steps')
          .where('approval_id', '=', a.id!)
          .where('decision', '=', 'approved')
          .where('note', '=', a.label)
          .select('id'),
      );
    case 'grant':
      return one(db.selectFrom('grants').where('id', '=', a.id!).select('id'));
    case 'revoke':
      return one(
        db.selectFrom('grants').where('id', '=', a.id!).where('revoked_at', 'is not', null).select('id'),
      );
    case 'engagement':
      return one(db.selectFrom('engagements').where('ref', '=', a.label).select('id'));
    case 'key':
      return one(db.selectFrom('api_keys').where('label', '=', a.label).select('id'));
    case 'webhook':
      return one(db.selectFrom('webhooks').where('url', '=', `http://127.0.0.1:9/${a.label}`).select('id'));
    case 'storage':
      return one(db.selectFrom('storage_events').where('dedupe_key', '=', a.label).select('id'));
    case 'turnover':
      return one(db.selectFrom('work_items').where('title', '=', a.label).select('id'));
  }
}
