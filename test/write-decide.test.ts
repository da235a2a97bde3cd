import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ApprovalsTable } from '../src/db/schema.js';
import { nowIso } from '../src/db/values.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call } from './support/http.js';
import { jpeg, upload } from './support/write.js';

for (const dialect of DIALECTS) {
  describe(`POST /approvals/{approval_id}/decide [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;
    let anaKey: string;
    let benKey: string;
    let readOnly: string;
    let vendor: string;
    let film: number;
    const people: Record<string, number> = {};

    const db = () => env.handle.db;
    const nodeId = async (ref: string) =>
      (
        await db()
          .selectFrom('nodes')
          .where('production_id', '=', film)
          .where('ref', '=', ref)
          .select('id')
          .executeTakeFirstOrThrow()
      ).id;
    const decide = (id: number, body: unknown, t = token) =>
      call(env.app, 'POST', `/api/v1/approvals/${id}/decide`, { token: t, body });
    const activityCount = async () =>
      Number(
        (
          await db()
            .selectFrom('activity')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const stateOf = async (id: number) => ({
      approval: await db()
        .selectFrom('approvals')
        .where('id', '=', id)
        .select(['status', 'current_step', 'updated_at'])
        .executeTakeFirstOrThrow(),
      steps: await db()
        .selectFrom('approval_steps')
        .where('approval_id', '=', id)
        .select(['position', 'decision', 'decided_by', 'note', 'decided_at'])
        .orderBy('position')
        .execute(),
    });

    /** An approval as the app creates one (the API has no route for it). */
    async function makeApproval(
      mode: 'decision' | 'chain',
      steps: string[],
      subject: { node?: number; version?: number } = {},
      status: ApprovalsTable['status'] = 'pending',
    ): Promise<number> {
      const now = nowIso();
      const { id } = await db()
        .insertInto('approvals')
        .values({
          production_id: film,
          ref: null,
          title: `${mode} ${steps.join('+')}`,
          mode,
          status,
          due: '2026-06-01',
          department_id: null,
          subject_node_id: subject.node ?? null,
          subject_version_id: subject.version ?? null,
          current_step: 0,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db()
        .insertInto('approval_steps')
        .values(
          steps.map((p, position) => ({
            production_id: film,
            approval_id: id,
            position,
            person_id: people[p]!,
            decision: null,
            decided_by: null,
            note: null,
            decided_at: null,
          })),
        )
        .execute();
      return id;
    }

    before(async () => {
      env = await createEnv(dialect);
      await env.import(smallProduction('film'));
      await env.import(smallProduction('other'));
      token = await env.mint({ production: 'film', label: 'Review bot' });
      anaKey = await env.mint({ production: 'film', label: 'Ana laptop', person: 'p-ana' });
      benKey = await env.mint({ production: 'film', label: 'Ben phone', person: 'p-ben' });
      readOnly = await env.mint({ production: 'film', scopes: ['read'] });
      vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read', 'write'] });
      film = (
        await db().selectFrom('productions').where('code', '=', 'film').select('id').executeTakeFirstOrThrow()
      ).id;
      for (const p of await db()
        .selectFrom('people')
        .where('production_id', '=', film)
        .select(['id', 'ref'])
        .execute()) {
        people[p.ref!] = p.id;
      }
    });
    after(() => env.close());

    it('approves step by step (name in any case, then person id) and releases the version subject', async () => {
      const coat = await nodeId('co-coat');
      const v2 = await db()
        .selectFrom('versions')
        .where('ref', '=', 'v-coat-2')
        .where('production_id', '=', film)
        .select('id')
        .executeTakeFirstOrThrow();
      const id = await makeApproval('chain', ['p-ana', 'p-ben'], { node: coat, version: v2.id });
      const nodeBefore = await db()
        .selectFrom('nodes')
        .where('id', '=', coat)
        .select('updated_at')
        .executeTakeFirstOrThrow();

      const first = await decide(id, { decision: 'approved', decided_by: '  ana RUIZ ', note: 'Good drape' });
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(Object.keys(first.body).sort(), [
        'created_at',
        'current_step',
        'department',
        'due',
        'id',
        'mode',
        'status',
        'steps',
        'subject',
        'title',
        'updated_at',
      ]);
      assert.equal(first.body.status, 'pending');
      assert.equal(first.body.current_step, 1);
      assert.equal(first.body.subject.node_id, coat);
      assert.equal(first.body.subject.version_id, v2.id);
      assert.equal(first.body.subject.version, 2);
      assert.equal(first.body.steps[0].decision, 'approved');
      assert.equal(first.body.steps[0].decided_by, 'Ana Ruiz', "recorded under the step owner's own name");
      assert.equal(first.body.steps[0].note, 'Good drape');
      assert.equal(first.body.steps[0].person_name, 'Ana Ruiz');
      assert.equal(first.body.steps[1].current, true, 'the answer is the chain as GET /approvals shows it');
      assert.equal(first.body.steps[1].decision, null);
      let v = await db().selectFrom('versions').where('id', '=', v2.id).selectAll().executeTakeFirstOrThrow();
      assert.equal(v.released, 0, 'not released before the last step');

      const second = await decide(id, { decision: 'approved', decided_by: String(people['p-ben']) });
      assert.equal(second.status, 200, second.text);
      assert.equal(second.body.status, 'approved');
      assert.equal(second.body.steps[1].decided_by, 'Ben Okafor');
      v = await db().selectFrom('versions').where('id', '=', v2.id).selectAll().executeTakeFirstOrThrow();
      assert.equal(v.released, 1);
      assert.equal(v.status, 'approved');

      const state = await stateOf(id);
      assert.equal(state.approval.status, 'approved');
      assert.ok(state.steps.every((s) => s.decision === 'approved' && s.decided_at));
      const nodeAfter = await db()
        .selectFrom('nodes')
        .where('id', '=', coat)
        .select('updated_at')
        .executeTakeFirstOrThrow();
      assert.ok(nodeAfter.updated_at > nodeBefore.updated_at);
      const entries = await db()
        .selectFrom('activity')
        .where('node_id', '=', coat)
        .where('verb', '=', 'approved')
        .select(['summary', 'actor'])
        .orderBy('id')
        .execute();
      assert.equal(entries.length, 2);
      assert.match(entries[1]!.summary, /v2 released/);
      assert.equal(entries[1]!.actor, 'Review bot');
    });

    it("a chain may omit decided_by: an integration key's decision is recorded under its label", async () => {
      const id = await makeApproval('chain', ['p-ana', 'p-ben']);
      const r = await decide(id, { decision: 'approved' });
      assert.equal(r.status, 200);
      assert.equal(r.body.steps[0].decided_by, 'Review bot');
      assert.equal(r.body.current_step, 1);
      const byBen = await decide(id, { decision: 'approved', note: null }, benKey);
      assert.equal(byBen.status, 200);
      assert.equal(byBen.body.steps[1].decided_by, 'Ben Okafor');
      assert.equal(byBen.body.status, 'approved');
    });

    it('a key bound to a person decides as that person only, and every decision names the key it came through', async () => {
      const changesOf = (id: number) =>
        db()
          .selectFrom('changes')
          .where('kind', '=', 'approval')
          .where('object_id', '=', id)
          .select('actor')
          .orderBy('id')
          .execute();
      const lastActivity = async () =>
        (
          await db()
            .selectFrom('activity')
            .select(['actor', 'summary'])
            .orderBy('id', 'desc')
            .limit(1)
            .execute()
        )[0]!;
      const chain = await makeApproval('chain', ['p-ana', 'p-ben']);
      const before = await stateOf(chain);
      const activity = await activityCount();
      // Ben's key may not decide Ana's step in her name, nor in his own, nor by her id
      for (const body of [
        { decided_by: 'Ana Ruiz' },
        { decided_by: String(people['p-ana']) },
        { decided_by: 'ana ruiz' },
        {},
        { decided_by: null },
        { decided_by: 'Ben Okafor' },
      ]) {
        const r = await decide(chain, { decision: 'approved', ...body }, benKey);
        assert.equal(r.status, 403, JSON.stringify(body));
        assert.equal(r.body.code, 'forbidden');
      }
      const named = await decide(chain, { decision: 'approved', decided_by: 'Ana Ruiz' }, benKey);
      assert.match(named.body.detail, /decides as Ben Okafor only/);
      // Ana's key naming Ben on Ana's step: refused too
      assert.equal(
        (await decide(chain, { decision: 'approved', decided_by: 'Ben Okafor' }, anaKey)).status,
        403,
      );
      assert.deepEqual(await stateOf(chain), before, 'a refusal recorded something');
      assert.equal(await activityCount(), activity);
      assert.deepEqual(await changesOf(chain), []);

      // no decided_by: the key's own person
      const byAna = await decide(chain, { decision: 'approved' }, anaKey);
      assert.equal(byAna.status, 200, JSON.stringify(byAna.body));
      assert.equal(byAna.body.steps[0].decided_by, 'Ana Ruiz');
      assert.equal((await lastActivity()).actor, 'Ana Ruiz via Ana laptop');
      assert.match((await lastActivity()).summary, /by Ana Ruiz/);
      // an integration key names the step's person; it is recorded as itself
      const byBot = await decide(chain, { decision: 'approved', decided_by: 'Ben Okafor' });
      assert.equal(byBot.status, 200);
      assert.equal((await lastActivity()).actor, 'Review bot');
      assert.deepEqual(
        (await changesOf(chain)).map((c) => c.actor),
        ['Ana Ruiz via Ana laptop', 'Review bot'],
      );
      // the change feed says the same over HTTP
      const feed = await call(env.app, 'GET', '/api/v1/changes?limit=1000', { token });
      const actors = (feed.body.changes as Array<{ kind: string; id: number; actor: string }>)
        .filter((c) => c.kind === 'approval' && c.id === chain)
        .map((c) => c.actor);
      assert.deepEqual(actors, ['Ana Ruiz via Ana laptop', 'Review bot']);

      // a decision-mode approval: a person-bound key need not name itself
      const single = await makeApproval('decision', ['p-ana']);
      const own = await decide(single, { decision: 'approved' }, anaKey);
      assert.equal(own.status, 200, JSON.stringify(own.body));
      assert.equal(own.body.steps[0].decided_by, 'Ana Ruiz');
      const bens = await makeApproval('decision', ['p-ben']);
      assert.equal((await decide(bens, { decision: 'approved' }, anaKey)).status, 403);
    });

    it('changes → changes_requested, the version stays unreleased, later decisions 409', async () => {
      const ward = await nodeId('loc-ward');
      const landed = await upload(env.app, `/api/v1/assets/${ward}/versions`, {
        token,
        files: [{ name: 'w.jpg', bytes: await jpeg(3) }],
      });
      const id = await makeApproval('chain', ['p-ana', 'p-ben'], { node: ward, version: landed.body.id });
      const r = await decide(id, { decision: 'changes', decided_by: 'Ana Ruiz', note: 'Too dark' });
      assert.equal(r.status, 200);
      assert.equal(r.body.status, 'changes_requested');
      assert.equal(r.body.current_step, null, 'a settled approval has no current step');
      assert.equal(r.body.steps[0].decision, 'changes');
      const v = await db()
        .selectFrom('versions')
        .where('id', '=', landed.body.id)
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(v.released, 0);
      assert.equal(v.status, 'wip');
      const again = await decide(id, { decision: 'approved', decided_by: 'Ana Ruiz' });
      assert.equal(again.status, 409);
      assert.match(again.body.detail, /changes_requested/);
    });

    it("403 when decided_by is not the current step's person, nothing recorded", async () => {
      const id = await makeApproval('chain', ['p-ana', 'p-ben']);
      const before = await stateOf(id);
      const activity = await activityCount();
      for (const who of ['Ben Okafor', String(people['p-ben']), 'Ana', 'Mallory']) {
        const r = await decide(id, { decision: 'approved', decided_by: who });
        assert.equal(r.status, 403, who);
        assert.match(r.body.detail, /not the person whose step it is/);
      }
      // a key bound to Ana cannot decide in Ben's name either
      assert.equal(
        (await decide(id, { decision: 'approved', decided_by: 'Ben Okafor' }, anaKey)).status,
        403,
      );
      assert.deepEqual(await stateOf(id), before);
      assert.equal(await activityCount(), activity);
    });

    it('422 for an anonymous decision on a decision-mode approval, nothing recorded', async () => {
      const id = await makeApproval('decision', ['p-cy']);
      const before = await stateOf(id);
      for (const body of [
        { decision: 'approved' },
        { decision: 'approved', decided_by: '  ' },
        { decision: 'changes', decided_by: null },
      ]) {
        const r = await decide(id, body);
        assert.equal(r.status, 422);
        assert.match(r.body.detail, /^decided_by:/);
      }
      assert.deepEqual(await stateOf(id), before);
      const ok = await decide(id, { decision: 'approved', decided_by: 'cy marsh' });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.status, 'approved');
      assert.equal(ok.body.mode, 'decision');
    });

    it('409 on a settled approval', async () => {
      for (const status of ['approved', 'rejected'] as const) {
        const id = await makeApproval('decision', ['p-ben'], {}, status);
        const r = await decide(id, { decision: 'approved', decided_by: 'Ben Okafor' });
        assert.equal(r.status, 409);
        assert.match(r.body.detail, new RegExp(status));
      }
    });

    it('409 when the optional step precondition no longer holds', async () => {
      const id = await makeApproval('chain', ['p-ana', 'p-ben']);
      assert.equal((await decide(id, { decision: 'approved', step: 0 })).status, 200);
      const stale = await decide(id, { decision: 'approved', step: 0 });
      assert.equal(stale.status, 409);
      assert.equal((await stateOf(id)).approval.current_step, 1);
    });

    it("404 alike for an unknown approval and another production's", async () => {
      const foreign = await db()
        .selectFrom('approvals')
        .innerJoin('productions', 'productions.id', 'approvals.production_id')
        .where('productions.code', '=', 'other')
        .where('approvals.status', '=', 'pending')
        .select('approvals.id')
        .executeTakeFirstOrThrow();
      const a = await decide(foreign.id, { decision: 'approved' });
      const b = await decide(999999, { decision: 'approved' });
      assert.equal(a.status, 404);
      assert.deepEqual(a.body, b.body);
      assert.deepEqual(a.body, { detail: 'approval not found', code: 'not_found' });
    });

    it('422 for a bad decision, a missing decision or an unknown field; 401/403 first', async () => {
      const id = await makeApproval('chain', ['p-ana']);
      for (const [body, field] of [
        [{ decision: 'rejected' }, 'decision'],
        [{ decided_by: 'Ana Ruiz' }, 'decision'],
        [{ decision: 'approved', by: 'Ana Ruiz' }, 'by'],
        [{ decision: 'approved', step: -1 }, 'step'],
      ] as const) {
        const r = await decide(id, body);
        assert.equal(r.status, 422);
        assert.ok(r.body.detail.startsWith(`${field}:`), r.body.detail);
      }
      assert.equal((await decide(id, { decision: 'approved' }, '')).status, 401);
      assert.equal((await decide(id, { decision: 'approved' }, readOnly)).status, 403);
      assert.equal((await decide(id, { decision: 'approved' }, vendor)).status, 403);
      assert.equal((await stateOf(id)).approval.status, 'pending');
    });

    it('two concurrent decisions on one step: one wins, the other 409, one record', async () => {
      const single = await makeApproval('decision', ['p-ben']);
      const chain = await makeApproval('chain', ['p-ana', 'p-ben', 'p-cy']);
      const activity = await activityCount();
      const [a, b, c, d] = await Promise.all([
        decide(single, { decision: 'approved', decided_by: 'Ben Okafor' }),
        decide(single, { decision: 'changes', decided_by: 'Ben Okafor' }),
        decide(chain, { decision: 'approved', step: 0 }),
        decide(chain, { decision: 'approved', step: 0 }),
      ]);
      assert.deepEqual([a.status, b.status].sort(), [200, 409]);
      assert.deepEqual([c.status, d.status].sort(), [200, 409]);
      const s1 = await stateOf(single);
      assert.equal(s1.steps.filter((s) => s.decision !== null).length, 1);
      assert.equal(s1.approval.status, a.status === 200 ? 'approved' : 'changes_requested');
      const s2 = await stateOf(chain);
      assert.equal(s2.approval.current_step, 1);
      assert.equal(s2.approval.status, 'pending');
      assert.deepEqual(
        s2.steps.map((s) => s.decision),
        ['approved', null, null],
      );
      assert.equal(await activityCount(), activity + 2);
    });

    it('end to end: land a version, approve every step of its chain, it is released with its media', async () => {
      // loc-ward is used by scene 1: after the merge its scene bundle lists the released version
      const ward = await nodeId('loc-ward');
      const landed = await upload(env.app, `/api/v1/assets/${ward}/versions`, {
        token,
        files: [{ name: 'plate.jpg', bytes: await jpeg(42) }],
        fields: { note: 'Clean plate' },
      });
      assert.equal(landed.status, 201);
      const id = await makeApproval('chain', ['p-ana', 'p-ben', 'p-cy'], {
        node: ward,
        version: landed.body.id,
      });
      const steps = [
        { decided_by: 'Ana Ruiz', t: anaKey },
        { decided_by: 'ben okafor', t: token },
        { decided_by: String(people['p-cy']), t: token },
      ];
      let last;
      for (const [i, s] of steps.entries()) {
        last = await decide(id, { decision: 'approved', decided_by: s.decided_by, step: i }, s.t);
        assert.equal(last.status, 200, last.text);
        assert.equal(last.body.status, i < 2 ? 'pending' : 'approved');
      }
      const v = await db()
        .selectFrom('versions as v')
        .innerJoin('media as m', 'm.id', 'v.media_id')
        .where('v.id', '=', landed.body.id)
        .select(['v.released', 'v.status', 'v.note', 'm.storage_key'])
        .executeTakeFirstOrThrow();
      assert.equal(v.released, 1);
      assert.equal(v.status, 'approved');
      assert.equal(v.note, 'Clean plate');
      assert.ok(existsSync(join(env.store.root, v.storage_key)));
      const released = await db()
        .selectFrom('versions')
        .where('node_id', '=', ward)
        .where('released', '=', 1)
        .select('id')
        .execute();
      assert.ok(released.some((r) => r.id === landed.body.id));
    });
  });
}
