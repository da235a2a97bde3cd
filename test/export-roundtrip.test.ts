import assert from 'node:assert/strict';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importDocument } from '../src/document/import.js';
import { exportDocument } from '../src/document/export.js';
import { parseDocument } from '../src/document/parse.js';
import type { Dialect } from '../src/db/index.js';
import { addGrant } from '../src/modules/admin/service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { submit } from './support/round-trip.js';
import { demoDir, demoDoc, forget, importDoc, readState, type Answer, type Demo } from './support/sync.js';
import { jpeg, upload } from './support/write.js';

/*
 * Export → import into a fresh database of the other dialect gives the same body on every read
 * route, ids aside: ids are mapped (each id of one database must always stand for the same id of
 * the other), media paths are compared by the content they serve, ETags (hashes over ids) dropped.
 */

const PAIRS: Array<[Dialect, Dialect]> =
  DIALECTS.length > 1
    ? [
        ['sqlite', 'postgres'],
        ['postgres', 'sqlite'],
      ]
    : [['sqlite', 'sqlite']];
const ALL = ['read', 'write', 'submit:turnover', 'read:money'] as const;

type Json = unknown;

class IdMap {
  private readonly forward = new Map<string, Map<number, number>>();
  private readonly backward = new Map<string, Map<number, number>>();
  readonly problems: string[] = [];

  pair(kind: string, a: number, b: number, where: string): void {
    const f = this.forward.get(kind) ?? new Map<number, number>();
    const r = this.backward.get(kind) ?? new Map<number, number>();
    this.forward.set(kind, f);
    this.backward.set(kind, r);
    if ((f.has(a) && f.get(a) !== b) || (r.has(b) && r.get(b) !== a)) {
      this.problems.push(`${where}: ${kind} ${a} ↔ ${b} contradicts an earlier pairing`);
    }
    f.set(a, b);
    r.set(b, a);
  }
}

const ID_KEY = /(^|_)id$/;

/** Walks two answers side by side: ids are paired (and blanked), media paths become their content. */
function normalise(
  a: Json,
  b: Json,
  ids: IdMap,
  media: [Map<string, string>, Map<string, string>],
  where: string,
  kind = '',
): [Json, Json] {
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: [Json[], Json[]] = [[], []];
    a.forEach((x, i) => {
      const [na, nb] = normalise(x, b[i], ids, media, `${where}[${i}]`, kind);
      out[0].push(na);
      out[1].push(nb);
    });
    for (let i = a.length; i < b.length; i++) out[1].push(b[i]);
    return out;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ra: Record<string, Json> = {};
    const rb: Record<string, Json> = {};
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const va = (a as Record<string, Json>)[key];
      const vb = (b as Record<string, Json>)[key];
      // the document keeps updated_at of assets and approvals only; other rows are stamped on import
      if (key === 'etag' || key === 'updated_at') {
        ra[key] = rb[key] = typeof va;
      } else if (ID_KEY.test(key) && typeof va === 'number' && typeof vb === 'number') {
        ids.pair(key === 'id' ? `${kind}.id` : key, va, vb, `${where}.${key}`);
        ra[key] = rb[key] = '#';
      } else if (key === 'media_path' && typeof va === 'string' && typeof vb === 'string') {
        ra[key] = media[0].get(va) ?? va;
        rb[key] = media[1].get(vb) ?? vb;
      } else {
        [ra[key], rb[key]] = normalise(va, vb, ids, media, `${where}.${key}`, `${kind}.${key}`);
      }
    }
    return [ra, rb];
  }
  return [a, b];
}

/** media_path → the SHA-256 of the bytes it serves, for every media object of the database. */
async function mediaContent(env: TestEnv): Promise<Map<string, string>> {
  const rows = await env.handle.db.selectFrom('media').select(['storage_key', 'sha256']).execute();
  return new Map(
    rows.map((m) => [`/media/${m.storage_key.slice(m.storage_key.indexOf('/') + 1)}`, `sha256:${m.sha256}`]),
  );
}

/** A season of use through the API: assets, notes, stills, decisions, a submission, a sync that retires. */
async function liveASeason(env: TestEnv, which: Demo, code: string): Promise<void> {
  const doc = demoDoc(which, code);
  const { refs, production } = await importDoc(env, doc, demoDir(which), false);
  const token = await env.mint({ production: code, scopes: [...ALL] });
  assert.equal(
    (await call(env.app, 'POST', '/api/v1/assets', { token, body: { label: 'Spare lantern', kind: 'prop' } }))
      .status,
    201,
  );
  const assets = (await get(env.app, '/api/v1/assets', token)).body as Array<{
    node_id: number;
    versions: number;
  }>;
  const withVersions = assets.filter((a) => a.versions > 0);
  const noted = await call(env.app, 'POST', `/api/v1/assets/${withVersions[0]!.node_id}/notes`, {
    token,
    body: { text: 'Needs a second fitting', author: 'Costume' },
  });
  assert.equal(noted.status, 201);
  const landed = await upload(env.app, `/api/v1/assets/${withVersions[1]!.node_id}/versions`, {
    token,
    files: [{ name: 'still.jpg', bytes: await jpeg(41) }],
    fields: { note: 'From the cart', variant: 'On-Set' },
  });
  assert.equal(landed.status, 201);
  const pending = (
    (await get(env.app, '/api/v1/approvals?status=pending', token)).body as Array<{
      id: number;
      steps: Array<{ current: boolean; person_name: string }>;
    }>
  ).slice(0, 2);
  for (const [i, a] of pending.entries()) {
    const person = a.steps.find((s) => s.current)!.person_name;
    const r = await call(env.app, 'POST', `/api/v1/approvals/${a.id}/decide`, {
      token,
      body: { decision: i === 0 ? 'approved' : 'changes', decided_by: person, note: `decided ${i}` },
    });
    assert.equal(r.status, 200, r.text);
  }
  const engagement = doc.engagements![0]!;
  const vendor = await env.mint({
    production: code,
    engagement: engagement.ref,
    scopes: ['read', 'submit:turnover'],
  });
  const turnover = (
    (await get(env.app, '/api/v1/turnovers', vendor)).body as Array<{ id: number; can_submit: boolean }>
  ).find((t) => t.can_submit);
  assert.ok(turnover, 'the first engagement may submit on a turnover');
  let sentId: number | undefined;
  if (turnover) {
    const sent = await submit(env, vendor, turnover.id, [
      { name: 'files', filename: 'work.jpg', content: await jpeg(77), contentType: 'image/jpeg' },
    ]);
    assert.equal(sent.statusCode, 200);
    sentId = (JSON.parse(sent.body) as { id: number }).id;
  }
  const granted = new Set((engagement.grants ?? []).map((g) => g.node));
  const scene = doc.scenes!.find((s) => !granted.has(s.ref))!;
  await addGrant(
    env.handle.db,
    production.id,
    { name: 'ops', apiKeyId: null, personId: null },
    {
      engagement_id: refs[engagement.ref]!,
      kind: 'scene',
      node_id: refs[scene.ref]!,
    },
  );
  // a sync that retires an asset with versions
  const next = demoDoc(which, code);
  const gone = next.assets!.find((a) => (a.versions ?? []).length > 0 && a.kind !== 'character')!.ref;
  forget(next, gone);
  next.assets = next.assets!.filter((a) => a.ref !== gone);
  next.scenes![0]!.synopsis = 'Rewritten after the table read.';
  // the turnover both ways: a package on a granted delivery, work on it with reviews
  const stills = [...new Set(next.assets.flatMap((a) => (a.versions ?? []).flatMap((v) => v.media ?? [])))];
  const delivery = (engagement.grants ?? []).find((g) => g.kind === 'delivery')!.delivery!;
  next.deliveries!.find((d) => d.ref === delivery)!.files = [
    { media: stills[0]!, label: 'reference_a.jpg' },
    { media: stills[1]! },
  ];
  const person = next.people![0]!.ref;
  next.submissions = [
    {
      delivery,
      engagement: engagement.ref,
      title: 'First pass',
      created_by: 'Vendor pipeline',
      created_at: '2026-03-02T10:00:00Z',
      files: [{ media: stills[2]!, label: 'pass_1.jpg' }],
      review: {
        decision: 'changes_requested',
        note: 'Warmer',
        reviewed_by: person,
        reviewed_at: '2026-03-03T10:00:00Z',
      },
    },
    {
      delivery,
      engagement: engagement.ref,
      title: 'Second pass',
      created_at: '2026-03-04T10:00:00Z',
      files: [{ media: stills[3]!, label: 'pass_2.jpg' }],
      review: {
        decision: 'accepted',
        note: '',
        reviewed_by: 'The client',
        reviewed_at: '2026-03-05T10:00:00Z',
      },
    },
  ];
  const synced = await importDoc(env, next, demoDir(which));
  assert.equal(synced.plan.counts.assets?.retired, 1);
  assert.deepEqual(
    [synced.plan.counts.package_files?.created, synced.plan.counts.submissions?.created],
    [2, 2],
  );
  // and a second file taken out of the package
  next.deliveries!.find((d) => d.ref === delivery)!.files!.pop();
  assert.equal((await importDoc(env, next, demoDir(which))).plan.counts.package_files?.retired, 1);
  // the production side through the admin routes: two files uploaded, one taken out, a review
  const admin = await env.mint({ production: code, scopes: ['admin'] });
  const onDelivery = refs[delivery]!;
  const uploaded = await upload(env.app, `/api/v1/admin/deliveries/${onDelivery}/files`, {
    token: admin,
    files: [
      { name: 'edit.edl', bytes: Buffer.from('TITLE: reel 1\n001  A001 V C 01:00:00:00\n'), field: 'files' },
      { name: 'grade.jpg', bytes: await jpeg(91), field: 'files' },
    ],
  });
  assert.equal(uploaded.status, 201, uploaded.text);
  const [, grade] = (uploaded.body as { files: Array<{ id: number }> }).files;
  const removed = await call(
    env.app,
    'POST',
    `/api/v1/admin/deliveries/${onDelivery}/files/${grade!.id}/remove`,
    {
      token: admin,
    },
  );
  assert.equal(removed.status, 200, removed.text);
  if (sentId !== undefined) {
    const reviewed = await call(env.app, 'POST', `/api/v1/admin/submissions/${sentId}/review`, {
      token: admin,
      body: { decision: 'changes_requested', note: 'Track slips', reviewed_by: next.people![1]!.name },
    });
    assert.equal(reviewed.status, 200, reviewed.text);
  }
  const submissions = (await get(env.app, '/api/v1/submissions', token)).body as unknown[];
  assert.equal(submissions.length, 3);
}

for (const [from, to] of PAIRS) {
  describe(`export → import, ${from} to ${to}`, () => {
    let source: TestEnv;
    let target: TestEnv;
    before(async () => {
      source = await createEnv(from);
      target = await createEnv(to);
    });
    after(async () => {
      await source.close();
      await target.close();
    });

    for (const which of ['episodic', 'single'] as const) {
      it(`${which}: every read route answers the same after the move, ids mapped`, async (t) => {
        const code = `${which}-move`;
        await liveASeason(source, which, code);
        const exported = (await exportDocument(source.handle.db, code))!;
        const dir = join(source.dir, `export-${which}`);
        for (const f of exported.files) {
          const out = join(dir, f.rel);
          await mkdir(dirname(out), { recursive: true });
          await copyFile(source.store.resolveKey(f.storageKey)!, out);
        }
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, 'production.json'), JSON.stringify(exported.doc));
        await importDocument(target.handle.db, parseDocument(JSON.stringify(exported.doc)), {
          store: target.store,
          baseDir: dir,
        });

        const vendors = async (env: TestEnv) => {
          const out: Record<string, string> = {};
          for (const e of exported.doc.engagements ?? []) {
            out[e.ref] = await env.mint({
              production: code,
              engagement: e.ref,
              scopes: ['read', 'read:money'],
            });
          }
          return out;
        };
        const a = await readState(source.app, await source.mint({ production: code }), await vendors(source));
        const b = await readState(target.app, await target.mint({ production: code }), await vendors(target));
        assert.deepEqual([...b.keys()], [...a.keys()], 'the same routes answer');
        const ids = new IdMap();
        const media: [Map<string, string>, Map<string, string>] = [
          await mediaContent(source),
          await mediaContent(target),
        ];
        let compared = 0;
        for (const [url, answer] of a) {
          const other = b.get(url) as Answer;
          assert.equal(other.status, answer.status, url);
          const [na, nb] = normalise(answer.body, other.body, ids, media, url, url.replace(/#\d+$/, ''));
          assert.deepEqual(nb, na, url);
          compared++;
        }
        assert.deepEqual(ids.problems, []);
        assert.ok(compared > 60, `${compared} answers compared`);
        t.diagnostic(
          `${from} → ${to}, ${which}: ${compared} answers equal, ${exported.files.length} media files`,
        );
      });
    }
  });
}
