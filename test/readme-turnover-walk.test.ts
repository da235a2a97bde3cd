import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { loadDemo } from '../src/cli/demo.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';

/*
 * README's turnover walk-through is run, not just read: its shell blocks (between the
 * turnover-walk markers) are run in order by bash with curl against a live server holding the
 * demo, as `npm start` loads it, signed in with the coordinator key the demo prints.
 */

const run = promisify(execFile);
const STEP = '::step';

/** The walk's ```sh blocks, in order, their list indentation removed. */
async function walkBlocks(): Promise<string[]> {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('<!-- turnover-walk');
  const end = readme.indexOf('<!-- /turnover-walk -->');
  assert.ok(start > 0 && end > start, 'README has the turnover-walk markers');
  const blocks = [...readme.slice(start, end).matchAll(/^( *)```sh\n([\s\S]*?)^ *```$/gm)].map(
    ([, indent, code]) =>
      code!
        .split('\n')
        .map((line) => line.slice(indent!.length))
        .join('\n'),
  );
  return blocks;
}

/** One script: the blocks in order, each announced, with the demo's key and this server's URL. */
function script(blocks: string[], admin: string, base: string): string {
  const body = blocks.map((code, i) => `echo '${STEP} ${i + 1}'\n${code}`).join('\n');
  const keyed = body.replace(/^ADMIN=pgk_…/m, `ADMIN=${admin}`).replaceAll('http://127.0.0.1:8080', base);
  assert.notEqual(keyed, body.replaceAll('http://127.0.0.1:8080', base), 'the walk sets ADMIN=pgk_…');
  return `set -euo pipefail\n${keyed}\n`;
}

/** A response the walk kept with `tee`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (dir: string, name: string): Promise<any> =>
  JSON.parse(await readFile(join(dir, name), 'utf8'));

for (const dialect of DIALECTS) {
  describe(`README's turnover walk-through, run with curl [${dialect}]`, () => {
    let env: TestEnv;
    let dir: string;
    let admin: string;
    let base: string;

    before(async () => {
      env = await createEnv(dialect);
      const demo = await loadDemo(env.handle.db, env.config);
      const printed = [...demo.loaded, ...demo.keys];
      const line = printed.find((l) => l.includes('coordinator, for the console (read, admin):'));
      admin = /(pgk_\S+)$/.exec(line ?? '')?.[1] ?? '';
      assert.ok(admin, `the demo prints a coordinator key:\n${printed.join('\n')}`);
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
      dir = await mkdtemp(join(tmpdir(), 'prodgraph-walk-'));
    });
    after(async () => {
      await env.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('engages a vendor, sends the plates, and takes the work back to an accepted delivery', async () => {
      const blocks = await walkBlocks();
      await writeFile(join(dir, 'walk.sh'), script(blocks, admin, base));
      const { stdout } = await run('bash', [join(dir, 'walk.sh')], { cwd: dir, timeout: 60_000 }).catch(
        (err: { stdout?: string; stderr?: string }) => {
          throw new Error(`the walk failed:\n${err.stdout}\n${err.stderr}`);
        },
      );
      const steps = stdout.split(new RegExp(`^${STEP} \\d+$`, 'm')).slice(1);
      assert.equal(steps.length, blocks.length, stdout);

      // 2: a new organisation, engaged, granted submit on the plates, with a key of its own
      const org = await json(dir, 'org.json');
      assert.deepEqual([org.ref, org.name], ['org-brand-new-vfx-co', 'Brand New VFX Co']);
      const engagement = await json(dir, 'engagement.json');
      assert.equal(engagement.organisation.id, org.id);
      const grant = await json(dir, 'grant.json');
      assert.deepEqual(
        [grant.engagement_id, grant.kind, grant.access],
        [engagement.id, 'delivery', 'submit'],
      );
      const key = await json(dir, 'key.json');
      assert.equal(key.engagement_id, engagement.id);
      assert.match(key.token, /^pgk_/);

      // 3: a package of two files, sent
      const pkg = await json(dir, 'package.json');
      assert.equal(pkg.delivery_id, grant.delivery_id);
      assert.deepEqual(
        pkg.files.map((f: { label: string }) => f.label),
        ['A001C003_plate.exr', 'reel1.edl'],
      );
      const sent = await json(dir, 'sent.json');
      assert.equal(sent.status, 'sent');
      assert.ok(sent.sent_at);

      // 4: the vendor sees the package and downloads the plate's very bytes
      const turnovers = await json(dir, 'turnovers.json');
      assert.deepEqual(
        turnovers.map((t: { id: number }) => t.id),
        [grant.delivery_id],
        'the new vendor sees exactly its one turnover',
      );
      const plate = await readFile(join(dir, 'A001C003_plate.exr'));
      const received = await readFile(join(dir, 'received', 'A001C003_plate.exr'));
      assert.equal(plate.length, 200_000);
      assert.ok(received.equals(plate), 'the downloaded plate is the uploaded one');
      assert.equal(createHash('sha256').update(received).digest('hex'), pkg.files[0].sha256);
      assert.match(steps[3]!, /received\/A001C003_plate\.exr: OK/);

      // 5 to 7: submitted, changes requested with a note the vendor reads, resubmitted
      const first = await json(dir, 'submission1.json');
      assert.equal(first.delivery_id, grant.delivery_id);
      const review1 = await json(dir, 'review1.json');
      assert.equal(review1.status, 'changes_requested');
      assert.equal(review1.review.note, 'Edge matte chatters on 1012-1020');
      const seen = (await json(dir, 'turnovers2.json'))[0].submissions;
      assert.deepEqual(
        seen.map((s: { id: number; status: string }) => [s.id, s.status]),
        [[first.id, 'changes_requested']],
      );
      assert.equal(seen[0].review.decision, 'changes_requested');
      const second = await json(dir, 'submission2.json');
      assert.notEqual(second.id, first.id);

      // 8: accepted, and the delivery with it
      const review2 = await json(dir, 'review2.json');
      assert.deepEqual([review2.id, review2.status], [second.id, 'accepted']);
      const delivery = (await json(dir, 'deliveries.json')).find(
        (d: { id: number }) => d.id === grant.delivery_id,
      );
      assert.equal(delivery.status, 'accepted');
      assert.match(steps[7]!, /"status": "accepted"/);
    });
  });
}
