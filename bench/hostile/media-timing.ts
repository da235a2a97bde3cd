import { createEnv, DIALECTS } from '../../test/support/env.js';
import { loadDemo } from '../../test/support/read.js';
import { Clamp, grantsReachMedia, seesMedia } from '../../src/auth/clamp.js';
import { findMediaWithReach } from '../../src/modules/media/repository.js';
import { authenticate } from '../../src/auth/key-service.js';
import { round } from './setup.js';

/*
 * Whether a vendor key can tell "exists but out of reach" from "does not exist" by the time
 * GET /api/v1/media/{id} takes. Requests alternate (hidden, missing, missing again; in a random
 * order each round) so drift in the machine's load falls on all three alike; the control is the missing id against itself
 * (the noise floor). Reported per database: medians and trimmed means (the middle 80%) of each,
 * and the gaps.
 *
 *   PRODGRAPH_TEST_PG=postgres://… node --import tsx bench/hostile/media-timing.ts [samples]
 */

const SAMPLES = Number(process.argv[2] ?? 3000);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function trimmedMean(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const cut = Math.floor(s.length * 0.1);
  const mid = s.slice(cut, s.length - cut);
  return mid.reduce((a, b) => a + b, 0) / mid.length;
}

for (const dialect of DIALECTS) {
  const env = await createEnv(dialect);
  try {
    await loadDemo(env, 'episodic');
    const token = await env.mint({ production: 'nightfall', engagement: 'eng-pixel', scopes: ['read'] });
    const principal = (await authenticate(env.handle.db, token))!;
    const clamp = await Clamp.load(env.handle.db, principal);
    const media = await env.handle.db
      .selectFrom('media')
      .where('production_id', '=', principal.productionId)
      .select(['id', 'production_id', 'work_item_id', 'uploader_engagement_id'])
      .orderBy('id')
      .execute();
    // out of reach, and only decided by the grants query (no uploader, no work item)
    let hidden: number | undefined;
    for (const m of media) {
      if (m.work_item_id !== null || m.uploader_engagement_id !== null) continue;
      const { reached } = await findMediaWithReach(env.handle.db, m.production_id, m.id, (eb) =>
        grantsReachMedia(eb, clamp, m.id),
      );
      if (!seesMedia(clamp, m, reached)) {
        hidden = m.id;
        break;
      }
    }
    if (hidden === undefined) throw new Error('no out-of-reach media in the demo');
    const missing = Math.max(...media.map((m) => m.id)) + 1000;
    const ask = async (id: number) => {
      const t = process.hrtime.bigint();
      const r = await env.app.inject({
        url: `/api/v1/media/${id}`,
        headers: { authorization: `Bearer ${token}` },
      });
      const us = Number(process.hrtime.bigint() - t) / 1000;
      if (r.statusCode !== 404) throw new Error(`expected 404, got ${r.statusCode}`);
      return us;
    };
    for (let i = 0; i < 200; i++) {
      await ask(hidden);
      await ask(missing);
    }
    const out = { hidden: [] as number[], missing: [] as number[], control: [] as number[] };
    const order: Array<keyof typeof out> = ['hidden', 'missing', 'control'];
    for (let i = 0; i < SAMPLES; i++) {
      // a fresh order each round: whatever runs first or last in a round falls on each alike
      order.sort(() => Math.random() - 0.5);
      for (const which of order) out[which].push(await ask(which === 'hidden' ? hidden : missing));
    }
    const m = { hidden: median(out.hidden), missing: median(out.missing), control: median(out.control) };
    const t = {
      hidden: trimmedMean(out.hidden),
      missing: trimmedMean(out.missing),
      control: trimmedMean(out.control),
    };
    console.log(
      `[${dialect}] ${SAMPLES} samples each (µs). median: out of reach ${round(m.hidden)}, missing ${round(m.missing)}, ` +
        `missing again (control) ${round(m.control)}; gap ${round(m.hidden - m.missing)} µs ` +
        `(ratio ${round(m.hidden / m.missing, 3)}), control gap ${round(m.control - m.missing)} µs. ` +
        `trimmed mean: gap ${round(t.hidden - t.missing)} µs (ratio ${round(t.hidden / t.missing, 3)}), ` +
        `control gap ${round(t.control - t.missing)} µs`,
    );
  } finally {
    await env.close();
  }
}
