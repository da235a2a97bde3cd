import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { importDoc } from './support/sync.js';
import {
  ALL_SCOPES,
  importRoundTrip,
  png,
  roundTripDocument,
  submit,
  type Refs,
} from './support/round-trip.js';

interface File {
  id: number;
  label: string;
  kind: string;
  content_type: string;
  size: number;
  sha256: string;
}
interface Row {
  id: number;
  delivery_id: number;
  engagement_id: number | null;
  status: string;
  title: string;
  note: string;
  media: File[];
  created_at: string;
  retired_at?: string;
}

const LIST = '/api/v1/submissions';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const tick = () => new Promise((r) => setTimeout(r, 5));

for (const dialect of DIALECTS) {
  describe(`submission list: a key's own turnover submissions [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let pw: string;
    let admin: string;
    const vendor: Record<string, string> = {};
    const sent: Record<string, Row[]> = { pix: [], hal: [] };
    let image: Buffer;

    const list = async (token: string, query = '') => {
      const r = await get(env.app, `${LIST}${query}`, token);
      assert.equal(r.status, 200, r.text);
      return r.body as Row[];
    };
    const ids = (rows: Row[]) => rows.map((r) => r.id);

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      pw = await env.mint({ production: 'film', scopes: ['read'] });
      admin = await env.mint({ production: 'film', scopes: ['admin'] });
      for (const eng of ['eng-pix', 'eng-hal', 'eng-read', 'eng-rev', 'eng-exp', 'eng-none']) {
        vendor[eng] = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: eng });
      }
      image = await png('#0a0', 16);
      const send = async (who: 'pix' | 'hal', delivery: string, entries: Parameters<typeof submit>[3]) => {
        const r = await submit(env, vendor[`eng-${who}`], refs[delivery]!, entries);
        assert.equal(r.statusCode, 200, r.body);
        sent[who]!.push(JSON.parse(r.body) as Row);
      };
      await send('pix', 'dl-plates', [
        { name: 'note', value: 'reel 1' },
        { name: 'files', filename: 'sh010.png', content: image },
        { name: 'files', filename: 'frames.txt', content: Buffer.from('1001-1100\n') },
      ]);
      await send('hal', 'dl-other', [{ name: 'files', filename: 'cape.png', content: await png('#a00') }]);
      await send('pix', 'dl-plates', [
        { name: 'title', value: 'Reel 2' },
        { name: 'files', filename: 'sh020.png', content: image },
      ]);
    });
    after(() => env.close());

    it('a vendor key lists exactly its own engagement’s submissions, each file with type, size and SHA-256', async () => {
      const pix = await list(vendor['eng-pix']!);
      assert.deepEqual(ids(pix), ids(sent.pix!));
      const [first] = pix;
      assert.deepEqual(
        { ...first!, media: undefined },
        {
          id: sent.pix![0]!.id,
          delivery_id: refs['dl-plates'],
          engagement_id: refs['eng-pix'],
          status: 'submitted',
          title: 'Plates, reel 1',
          note: 'reel 1',
          media: undefined,
          created_at: sent.pix![0]!.created_at,
          review: null,
        },
      );
      assert.deepEqual(first!.media, [
        {
          id: sent.pix![0]!.media[0]!.id,
          label: 'sh010.png',
          kind: 'image',
          content_type: 'image/png',
          size: image.length,
          sha256: sha(image),
        },
        {
          id: sent.pix![0]!.media[1]!.id,
          label: 'frames.txt',
          kind: 'file',
          content_type: 'application/octet-stream',
          size: 10,
          sha256: sha(Buffer.from('1001-1100\n')),
        },
      ]);
      // every file listed is one the same key may fetch, and its bytes are what the list says
      for (const f of pix.flatMap((s) => s.media)) {
        const r = await env.app.inject({
          url: `/api/v1/media/${f.id}/content`,
          headers: { authorization: `Bearer ${vendor['eng-pix']}` },
        });
        assert.equal(r.statusCode, 200);
        assert.equal(sha(r.rawPayload), f.sha256);
      }
      assert.deepEqual(ids(await list(vendor['eng-hal']!)), ids(sent.hal!));
    });

    it('another vendor’s work is never listed: not through a read grant on the same delivery, not at all', async () => {
      // eng-read holds a read grant on dl-plates, where eng-pix submitted
      assert.deepEqual(await list(vendor['eng-read']!), []);
      for (const eng of ['eng-rev', 'eng-exp', 'eng-none'])
        assert.deepEqual(await list(vendor[eng]!), [], eng);
      const hal = await list(vendor['eng-hal']!);
      assert.ok(hal.every((s) => s.engagement_id === refs['eng-hal']));
      // naming another engagement's delivery is an empty list, exactly as an unknown one
      assert.deepEqual(await list(vendor['eng-hal']!, `?delivery_id=${refs['dl-plates']}`), []);
      assert.deepEqual(await list(vendor['eng-hal']!, '?delivery_id=999999'), []);
    });

    it('a production-wide key lists every submission of its production, oldest first', async () => {
      const all = await list(pw);
      assert.deepEqual(ids(all), [sent.pix![0]!.id, sent.hal![0]!.id, sent.pix![1]!.id]);
      assert.deepEqual(ids(await list(pw, `?delivery_id=${refs['dl-other']}`)), ids(sent.hal!));
    });

    it('pages like the other lists; filters travel with the cursor; bad input is 422 naming the field', async () => {
      const whole = await list(pw);
      const rows: Row[] = [];
      let url: string | undefined = `${LIST}?limit=1`;
      while (url) {
        const r = await get(env.app, url, pw);
        assert.equal(r.status, 200, r.text);
        assert.ok(r.body.length <= 1);
        rows.push(...(r.body as Row[]));
        const link = r.headers.link as string | undefined;
        url = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : undefined;
      }
      assert.deepEqual(rows, whole);
      const first = await get(env.app, `${LIST}?limit=1&delivery_id=${refs['dl-plates']}`, pw);
      const cursor = /cursor=([^&>]+)/.exec(first.headers.link as string)![1];
      const moved = await get(env.app, `${LIST}?cursor=${cursor}`, pw);
      assert.equal(moved.status, 422);
      assert.equal(moved.body.field, 'cursor');
      for (const bad of [
        'delivery_id=0',
        'delivery_id=x',
        'limit=0',
        'updated_since=yesterday',
        'engagement=1',
      ]) {
        const r = await get(env.app, `${LIST}?${bad}`, pw);
        assert.equal(r.status, 422, bad);
        assert.equal(r.body.field, bad.split('=')[0], bad);
      }
    });

    it('updated_since answers the submissions made after it', async () => {
      await tick();
      const since = new Date().toISOString();
      await tick();
      const r = await submit(env, vendor['eng-pix'], refs['dl-plates']!, [
        { name: 'files', filename: 'late.png', content: image },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      sent.pix!.push(JSON.parse(r.body) as Row);
      const q = `?updated_since=${encodeURIComponent(since)}`;
      assert.deepEqual(ids(await list(pw, q)), [sent.pix![2]!.id]);
      assert.deepEqual(ids(await list(vendor['eng-pix']!, q)), [sent.pix![2]!.id]);
      assert.deepEqual(await list(vendor['eng-hal']!, q), []);
    });

    it('a revoked delivery grant takes them out on the very next request; a new grant brings them back', async () => {
      const key = vendor['eng-hal']!;
      const grants = (await get(env.app, `/api/v1/admin/grants?engagement_id=${refs['eng-hal']}`, admin))
        .body as Array<{ id: number; kind: string }>;
      const delivery = grants.find((g) => g.kind === 'delivery')!;
      const revoked = await call(env.app, 'POST', `/api/v1/admin/grants/${delivery.id}/revoke`, {
        token: admin,
      });
      assert.equal(revoked.status, 200, revoked.text);
      assert.deepEqual(await list(key), []);
      assert.deepEqual(ids(await list(pw)).length, 4, 'the production still sees them');

      await tick();
      const since = new Date().toISOString();
      await tick();
      const granted = await call(env.app, 'POST', '/api/v1/admin/grants', {
        token: admin,
        body: {
          engagement_id: refs['eng-hal'],
          kind: 'delivery',
          delivery_id: refs['dl-other'],
          access: 'read',
        },
      });
      assert.equal(granted.status, 201, granted.text);
      assert.deepEqual(ids(await list(key)), ids(sent.hal!), 'a read grant is enough to list its own work');
      // granted after `since`: its work counts as changed, so a change window brings it back too
      assert.deepEqual(ids(await list(key, `?updated_since=${encodeURIComponent(since)}`)), ids(sent.hal!));
    });

    it('an archived engagement lists nothing; the list costs a fixed number of queries', async () => {
      env.queries.count = 0;
      await list(vendor['eng-pix']!);
      // key lookup, the clamp's grants, the submissions, their files
      assert.ok(env.queries.count <= 5, `${env.queries.count} queries`);
      const archived = await call(env.app, 'POST', `/api/v1/admin/engagements/${refs['eng-hal']}/archive`, {
        token: admin,
      });
      assert.equal(archived.status, 200, archived.text);
      assert.deepEqual(await list(vendor['eng-hal']!), []);
    });

    it('a delivery a re-import retired takes its submissions out; a change window reports them retired', async () => {
      const other = await importRoundTrip(env, 'other');
      const hal = await env.mint({ production: 'other', scopes: ALL_SCOPES, engagement: 'eng-hal' });
      const wide = await env.mint({ production: 'other', scopes: ['read'] });
      const r = await submit(env, hal, other['dl-other']!, [
        { name: 'files', filename: 'c.png', content: image },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      const work = JSON.parse(r.body) as Row;
      assert.deepEqual(ids(await list(wide)), [work.id]);
      await tick();
      const since = new Date().toISOString();
      await tick();
      const doc = await roundTripDocument('other', env.dir);
      doc.deliveries = doc.deliveries!.filter((d) => d.ref !== 'dl-other');
      for (const e of doc.engagements!) e.grants = e.grants!.filter((g) => g.delivery !== 'dl-other');
      await importDoc(env, doc, env.dir);
      assert.deepEqual(await list(wide), []);
      assert.deepEqual(await list(hal), []);
      const window = await list(wide, `?updated_since=${encodeURIComponent(since)}`);
      assert.deepEqual(ids(window), [work.id]);
      assert.ok(window[0]!.retired_at! > since);
    });

    it('is on the round-trip surface with scope read: no key 401, a key without read 403', async () => {
      assert.equal((await get(env.app, LIST)).status, 401);
      const noRead = await env.mint({ production: 'film', scopes: ['write'] });
      const r = await get(env.app, LIST, noRead);
      assert.equal(r.status, 403);
      assert.equal(r.body.code, 'scope_missing');
    });
  });
}
