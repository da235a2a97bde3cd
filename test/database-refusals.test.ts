import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call, rpc } from './support/mcp.js';
import { submit } from './support/round-trip.js';

/*
 * A constraint the database enforces refuses a write the same way on every surface: the data
 * layer (src/db/refusals.ts) turns the driver's error into the catalogue's, so REST answers it
 * as `{detail, code}` and an MCP tool as its error result with the same detail, and neither
 * writes anything. The test adds a constraint of its own (one submission per title) to its
 * database, a real one the driver enforces, to provoke the refusal on demand.
 */

for (const dialect of DIALECTS) {
  describe(`a database refusal answers alike on REST and MCP [${dialect}]`, () => {
    let env: TestEnv;
    let delivery: number;
    let vendor: string;

    before(async () => {
      env = await createEnv(dialect);
      const make = new Factory(env.handle.db);
      const film = (await make.production({ code: 'film' })).id;
      const pix = await make.organisation(film, { name: 'Pixelworks Ltd' });
      const engagement = await make.engagement(film, pix.id);
      delivery = (await make.delivery(film, { title: 'Plates, reel 1', status: 'ready' })).id;
      await make.grant(film, engagement.id, { kind: 'delivery', delivery_id: delivery, access: 'submit' });
      vendor = await make.key(film, { engagementId: engagement.id, scopes: ['read', 'submit:turnover'] });
      await sql`create unique index test_one_submission_per_title on work_items (title)`.execute(
        env.handle.db,
      );
    });
    after(() => env.close());

    const written = async () => ({
      submissions: (await env.handle.db.selectFrom('work_items').select('id').execute()).length,
      media: (await env.handle.db.selectFrom('media').select('id').execute()).length,
    });

    it('a duplicate refused by a unique index: REST 409 {detail, code}, the MCP tool the same detail', async () => {
      const file = { name: 'files', filename: 'a.txt', content: Buffer.from('hi') };
      const first = await submit(env, vendor, delivery, [{ name: 'title', value: 'Take 1' }, file]);
      assert.equal(first.statusCode, 200, first.body);
      const before = await written();

      const rest = await submit(env, vendor, delivery, [{ name: 'title', value: 'Take 1' }, file]);
      assert.equal(rest.statusCode, 409);
      assert.deepEqual(rest.json(), {
        detail: 'this conflicts with a record that exists already; nothing was written',
        code: 'conflict',
      });

      const mcp = await rpc(
        env.app,
        vendor,
        call(1, 'submit_turnover', {
          id: delivery,
          title: 'Take 1',
          files: [{ filename: 'a.txt', content_base64: Buffer.from('hi').toString('base64') }],
        }),
      );
      assert.equal(mcp.status, 200);
      assert.equal(mcp.body.result.isError, true);
      assert.deepEqual(mcp.body.result.content, [{ type: 'text', text: rest.json().detail }]);

      assert.deepEqual(await written(), before, 'neither refusal wrote anything');
      assert.doesNotMatch(rest.body + JSON.stringify(mcp.body), /constraint|unique|work_items|duplicate/i);
    });
  });
}
