import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { contactLeaks, contactsOf, demoContacts, loadDemo, recordingGet } from './support/read.js';

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

for (const dialect of DIALECTS) {
  describe(`read surface: schedule, deliveries, approvals, script changes, activity, jobs [${dialect}]`, () => {
    let env: TestEnv;
    let series: string;
    let film: string;
    let busy: string;
    let s: Record<string, number>;
    let f: Record<string, number>;
    const get = recordingGet();
    const busyDoc = smallProduction('busy', {
      activity: Array.from({ length: 230 }, (_, i) => ({
        at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
        actor: 'Ana Ruiz',
        verb: 'noted',
        summary: `entry ${i}`,
      })),
      jobs: Array.from({ length: 210 }, (_, i) => ({
        kind: i % 2 ? ('video' as const) : ('image' as const),
        model: 'image-standard',
        prompt: `job ${i}`,
        status: 'succeeded',
        created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
      })),
    });

    before(async () => {
      env = await createEnv(dialect);
      s = (await loadDemo(env, 'episodic')).refs;
      f = (await loadDemo(env, 'single')).refs;
      await env.import(busyDoc);
      series = await env.mint({ production: 'nightfall', scopes: ['read'] });
      film = await env.mint({ production: 'lanternfall', scopes: ['read'] });
      busy = await env.mint({ production: 'busy', scopes: ['read'] });
    });
    after(() => env.close());

    it('GET /schedule: days by number with their strips; no marked keys without episode_id', async () => {
      const r = await get(env.app, '/api/v1/schedule', series);
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.map((d: Row) => d.day_number),
        [1, 2, 3, 4, 5, 6, 7, 8],
      );
      const d1 = r.body[0];
      assert.deepEqual(Object.keys(d1).sort(), [
        'date',
        'day_number',
        'general_call',
        'id',
        'scenes',
        'status',
        'updated_at',
      ]);
      assert.equal(d1.id, s.d1);
      assert.equal(d1.general_call, '18:00');
      assert.equal(r.body[3].general_call, null);
      assert.deepEqual(d1.scenes[0], {
        node_id: s['sc101-1'],
        number: '1',
        slugline: 'INT. WARD 9 - NIGHT',
        episode_id: s.ep101,
        episode_code: '101',
      });
      assert.doesNotMatch(r.text, /marked/);
    });

    it('GET /schedule?episode_id marks strips and days of those episodes and drops nothing', async () => {
      const all = (await get(env.app, '/api/v1/schedule', series)).body;
      const r = await get(env.app, `/api/v1/schedule?episode_id=${s.ep103}`, series);
      assert.equal(r.status, 200);
      assert.equal(r.body.length, all.length);
      assert.deepEqual(
        r.body.filter((d: Row) => d.marked).map((d: Row) => d.id),
        [s.d3, s.d6, s.d7],
      );
      for (const day of r.body) {
        for (const strip of day.scenes) assert.equal(strip.marked, strip.episode_id === s.ep103);
        assert.equal(
          day.marked,
          day.scenes.some((x: Row) => x.marked),
        );
      }
      const two = await get(env.app, `/api/v1/schedule?episode_id=${s.ep101}&episode_id=${s.ep103}`, series);
      assert.deepEqual(
        two.body.filter((d: Row) => !d.marked).map((d: Row) => d.id),
        [s.d4, s.d5, s.d8],
      );
    });

    it('GET /schedule refuses an episode_id that is not an episode of the production', async () => {
      for (const q of [
        'episode_id=999999',
        `episode_id=${s.ep101}&episode_id=999999`,
        'episode_id=abc',
        'episode_id=0',
      ]) {
        const r = await get(env.app, `/api/v1/schedule?${q}`, series);
        assert.equal(r.status, 422, q);
        assert.match(r.body.detail, /^episode_id/, q);
      }
    });

    it('GET /schedule on a single production: no episode keys, and episode_id does nothing', async () => {
      const plain = await get(env.app, '/api/v1/schedule', film);
      const withParam = await get(env.app, `/api/v1/schedule?episode_id=${s.ep101}`, film);
      assert.equal(plain.status, 200);
      assert.ok(plain.body.length > 0);
      assert.deepEqual(withParam.body, plain.body);
      assert.doesNotMatch(plain.text, /episode_|marked/);
    });

    it('GET /deliveries: internal and external, each with its gating approval or null', async () => {
      for (const token of [series, film]) {
        const r = await get(env.app, '/api/v1/deliveries', token);
        assert.equal(r.status, 200);
        const kinds = new Set(r.body.map((d: Row) => d.kind));
        assert.deepEqual([...kinds].sort(), ['external', 'internal']);
        for (const d of r.body) {
          assert.deepEqual(Object.keys(d).sort(), [
            'due',
            'external_to',
            'from_department',
            'gating_approval',
            'id',
            'kind',
            'package',
            'sent_at',
            'spec',
            'status',
            'submissions',
            'submissions_total',
            'title',
            'to_department',
            'updated_at',
          ]);
          assert.ok(Array.isArray(d.spec));
        }
        assert.ok(r.body.some((d: Row) => d.gating_approval === null));
      }
      const r = await get(env.app, '/api/v1/deliveries', series);
      const plates = r.body.find((d: Row) => d.id === s['dl-101-plates']);
      assert.deepEqual(plates.gating_approval, {
        id: s['ap-turnover-101'],
        title: 'Episode 101 VFX turnover sign-off',
        status: 'approved',
      });
      assert.equal(plates.external_to, 'Pixelworks Ltd');
      assert.equal(plates.sent_at, '2026-11-17T15:20:00.000Z');
      const internal = r.body.find((d: Row) => d.kind === 'internal');
      assert.equal(typeof internal.to_department, 'string');
    });

    it('GET /approvals: chains with steps, current step and subject', async () => {
      const r = await get(env.app, '/api/v1/approvals', series);
      assert.equal(r.status, 200);
      assert.equal(r.body.length, 9);
      const coat = r.body.find((a: Row) => a.id === s['ap-coat']);
      assert.equal(coat.mode, 'chain');
      assert.equal(coat.status, 'pending');
      assert.equal(coat.department, 'costume');
      assert.equal(coat.current_step, 1);
      assert.deepEqual(coat.subject, {
        node_id: s['co-mara-coat'],
        label: coat.subject.label,
        kind: 'costume',
        version_id: s['v-coat-3'],
        version: 3,
      });
      assert.deepEqual(
        coat.steps.map((x: Row) => [x.position, x.person_id, x.person_name, x.current, x.decision]),
        [
          [0, s['p-ana'], 'Ana Ruiz', false, 'approved'],
          [1, s['p-dir'], 'Priya Raman', true, null],
          [2, s['p-niamh'], 'Niamh Gallagher', false, null],
        ],
      );
      const settled = r.body.find((a: Row) => a.id === s['ap-corridor']);
      assert.equal(settled.current_step, null);
      assert.ok(settled.steps.every((x: Row) => !x.current));
      const noSubject = r.body.find((a: Row) => a.id === s['ap-turnover-102']);
      assert.equal(noSubject.subject, null);
      const nodeOnly = r.body.find((a: Row) => a.id === s['ap-porter-look']);
      assert.equal(nodeOnly.subject.version_id, null);
      assert.equal((await get(env.app, '/api/v1/approvals', film)).status, 200);
    });

    it('GET /approvals?status narrows to each of the four statuses; anything else is 422', async () => {
      const all = (await get(env.app, '/api/v1/approvals', series)).body;
      for (const status of ['pending', 'approved', 'changes_requested', 'rejected']) {
        const r = await get(env.app, `/api/v1/approvals?status=${status}`, series);
        assert.equal(r.status, 200);
        assert.ok(r.body.length > 0, status);
        assert.deepEqual(
          r.body,
          all.filter((a: Row) => a.status === status),
        );
      }
      for (const bad of ['open', 'all', '']) {
        const r = await get(env.app, `/api/v1/approvals?status=${bad}`, series);
        assert.equal(r.status, 422, bad);
        assert.match(r.body.detail, /^status: must be one of pending, approved, changes_requested, rejected/);
      }
    });

    it('GET /script-changes on an episodic production: pending in the current episode by default', async () => {
      const ids = async (q: string) => {
        const r = await get(env.app, `/api/v1/script-changes${q}`, series);
        assert.equal(r.status, 200, q);
        return r.body.map((c: Row) => c.id);
      };
      assert.deepEqual(await ids(''), [s['scx-2'], s['scx-1']]);
      assert.deepEqual(await ids('?status=all'), [s['scx-2'], s['scx-1'], s['scx-3']]);
      assert.deepEqual(await ids('?status=dismissed'), [s['scx-3']]);
      assert.deepEqual(await ids(`?episode_id=${s.ep103}`), [s['scx-7'], s['scx-6']]);
      assert.deepEqual(await ids('?all_episodes=true'), [s['scx-7'], s['scx-6'], s['scx-2'], s['scx-1']]);
      assert.deepEqual(await ids('?all_episodes=true&status=approved'), [s['scx-5'], s['scx-4']]);
      assert.deepEqual(await ids('?all_episodes=false'), await ids(''));
      const one = (await get(env.app, '/api/v1/script-changes', series)).body[0];
      assert.deepEqual(Object.keys(one).sort(), [
        'change',
        'detected_at',
        'episode_code',
        'episode_id',
        'id',
        'scene',
        'status',
        'summary',
        'updated_at',
      ]);
      assert.equal(one.episode_code, '102');
      assert.equal(one.scene.node_id, s['sc102-14']);
    });

    it('GET /script-changes on a single production ignores episode scoping', async () => {
      const r = await get(env.app, '/api/v1/script-changes', film);
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.map((c: Row) => c.id),
        [f['scx-6'], f['scx-4'], f['scx-1']],
      );
      assert.doesNotMatch(r.text, /episode_/);
      const scoped = await get(
        env.app,
        `/api/v1/script-changes?episode_id=${s.ep101}&all_episodes=true`,
        film,
      );
      assert.deepEqual(scoped.body, r.body);
      assert.equal((await get(env.app, '/api/v1/script-changes?status=all', film)).body.length, 6);
    });

    it('GET /script-changes refuses bad filters, naming them', async () => {
      for (const [q, field] of [
        ['status=open', 'status'],
        ['episode_id=abc', 'episode_id'],
        ['episode_id=999999', 'episode_id'],
        [`episode_id=${s.ep101}&all_episodes=true`, 'all_episodes'],
        ['all_episodes=maybe', 'all_episodes'],
      ]) {
        const r = await get(env.app, `/api/v1/script-changes?${q}`, series);
        assert.equal(r.status, 422, q);
        assert.match(r.body.detail, new RegExp(`^${field}: `), q);
      }
    });

    it('GET /activity: newest first, with the node it concerns', async () => {
      const r = await get(env.app, '/api/v1/activity', series);
      assert.equal(r.status, 200);
      assert.equal(r.body.length, 9);
      const ats = r.body.map((a: Row) => a.at);
      assert.deepEqual(ats, [...ats].sort().reverse());
      assert.deepEqual(r.body[0], {
        id: r.body[0].id,
        at: '2026-11-20T10:05:00.000Z',
        actor: 'Ana Ruiz',
        verb: 'requested changes',
        summary: 'Sister Agnes uniform v2: wrong cap',
        node: { node_id: s['co-agnes-uniform'], label: r.body[0].node.label, kind: 'costume' },
      });
      assert.equal((await get(env.app, '/api/v1/activity?limit=3', series)).body.length, 3);
      assert.equal((await get(env.app, '/api/v1/activity', film)).status, 200);
    });

    it('GET /jobs: newest first', async () => {
      const r = await get(env.app, '/api/v1/jobs', series);
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.map((j: Row) => j.id),
        [s['job-5'], s['job-3'], s['job-4'], s['job-2'], s['job-1']],
      );
      assert.deepEqual(Object.keys(r.body[0]).sort(), [
        'created_at',
        'finished_at',
        'id',
        'kind',
        'media_id',
        'media_path',
        'model',
        'prompt',
        'status',
        'updated_at',
      ]);
      assert.equal((await get(env.app, '/api/v1/jobs', film)).status, 200);
    });

    it('limit on /activity and /jobs: default 50, above 200 clamped, below 1 or not an integer 422', async () => {
      for (const path of ['/api/v1/activity', '/api/v1/jobs']) {
        assert.equal((await get(env.app, path, busy)).body.length, 50, path);
        assert.equal((await get(env.app, `${path}?limit=200`, busy)).body.length, 200, path);
        assert.equal((await get(env.app, `${path}?limit=201`, busy)).body.length, 200, path);
        assert.equal((await get(env.app, `${path}?limit=100000`, busy)).body.length, 200, path);
        assert.equal((await get(env.app, `${path}?limit=1`, busy)).body.length, 1, path);
        for (const bad of ['0', '-3', '1.5', 'ten', '']) {
          const r = await get(env.app, `${path}?limit=${bad}`, busy);
          assert.equal(r.status, 422, `${path} limit=${bad}`);
          assert.match(r.body.detail, /^limit: /);
        }
      }
      const newest = (await get(env.app, '/api/v1/activity?limit=1', busy)).body[0];
      assert.equal(newest.summary, 'entry 229');
    });

    it('no response of this file carries an email or a phone from the fixtures', () => {
      const contacts = [...demoContacts(), ...contactsOf(busyDoc as never)];
      assert.ok(get.seen.length > 30);
      assert.deepEqual(
        get.seen.flatMap((x) => contactLeaks(x.body, contacts, x.url)),
        [],
      );
    });
  });
}
