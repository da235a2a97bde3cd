import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ProductionDocument } from '../src/document/schema.js';
import { prodgraphHere, type Run } from './support/cli.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { loadDemo } from './support/read.js';
import { dbArgOf } from './support/server-process.js';

/*
 * `prodgraph grants add --scene`: a scene is named as the script names it — its number, with
 * its episode on an episodic production (`102/9` or `--episode 102`), or its ref — and a node id
 * only as `id:N`. `--scene 9` once took 9 for a node id and granted another scene.
 */

/** Two episodes that both have a scene 9, a ref made of another scene's number, a 12A. */
function twoNines(): ProductionDocument {
  const doc = smallProduction('nines');
  const scene = (ref: string, number: string, episode: string, slugline: string) => ({
    ref,
    number,
    slugline,
    status: 'planned' as const,
    episode,
    assets: ['loc-ward'],
  });
  return {
    ...doc,
    production: { ...doc.production, format: 'episodic', season_number: 1, current_episode: 'ep1' },
    episodes: [
      { ref: 'ep1', code: '101', title: 'Pilot' },
      { ref: 'ep2', code: '102', title: 'Second' },
    ],
    scenes: [
      { ...doc.scenes![0]!, episode: 'ep1' },
      { ...doc.scenes![1]!, episode: 'ep2' },
      scene('sc101-9', '9', 'ep1', 'INT. WARD - NIGHT'),
      scene('sc101-12a', '12A', 'ep1', 'INT. LIFT - NIGHT'),
      scene('sc101-21', '21', 'ep1', 'EXT. CAR PARK - NIGHT'),
      scene('sc102-9', '9', 'ep2', 'INT. MORTUARY - NIGHT'),
      // a ref that reads like a number: scene 21 of 101 is meant by "21" as much as this one
      scene('21', '3', 'ep2', 'EXT. ROOF - DAWN'),
    ],
  };
}

for (const dialect of DIALECTS) {
  describe(`the CLI names scenes as people read them [${dialect}]`, () => {
    let env: TestEnv;
    let cli: Record<string, string>;
    const refs: Record<string, Record<string, number>> = {};

    before(async () => {
      env = await createEnv(dialect);
      refs.nightfall = (await loadDemo(env, 'episodic')).refs;
      refs.nines = (await env.import(twoNines())).refs;
      refs.film = (await env.import(smallProduction('film'))).refs;
      cli = { PRODGRAPH_DB: dbArgOf(env), PRODGRAPH_MEDIA: env.config.mediaDir };
      for (const code of ['nightfall', 'nines', 'film']) {
        const org = code === 'nightfall' ? 'org-northlight' : 'org-hal';
        const r = await prodgraphHere(
          [
            'engagements',
            'add',
            '--production',
            code,
            '--ref',
            'eng-cli',
            '--organisation',
            org,
            '--departments',
            'vfx',
          ],
          cli,
        );
        assert.equal(r.code, 0, r.stderr);
      }
    });
    after(() => env.close());

    /** `grants add --scene …` for eng-cli; the grant, or the refusal. */
    const grant = (code: string, ...scene: string[]) =>
      prodgraphHere(
        ['grants', 'add', '--production', code, '--engagement', 'eng-cli', '--scene', ...scene, '--json'],
        cli,
      );
    const granted = (r: Run): number => {
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout).node_id as number;
    };
    const refused = (r: Run, message: string) => {
      assert.equal(r.code, 1, r.stdout);
      assert.equal(r.stderr, `prodgraph: ${message}\n`);
    };
    const revokeAll = async (code: string) => {
      const list = await prodgraphHere(
        ['grants', 'list', '--production', code, '--engagement', 'eng-cli', '--json'],
        cli,
      );
      for (const g of JSON.parse(list.stdout) as Array<{ id: number }>)
        assert.equal(
          (await prodgraphHere(['grants', 'revoke', String(g.id), '--production', code], cli)).code,
          0,
        );
    };

    it('--scene 9 on the demo grants scene 9 of 102, not node 9 (scene 14 there)', async () => {
      const { nightfall } = refs;
      // the case reported: node 9 is another scene
      assert.equal(nightfall!['sc102-14'], 9);
      assert.equal(granted(await grant('nightfall', '9')), nightfall!['sc102-9']);
      await revokeAll('nightfall');
      assert.equal(granted(await grant('nightfall', '102/9')), nightfall!['sc102-9']);
      await revokeAll('nightfall');
      assert.equal(granted(await grant('nightfall', 'id:9')), nightfall!['sc102-14'], 'id:9 is node 9');
      await revokeAll('nightfall');
      assert.equal(granted(await grant('nightfall', 'sc102-9')), nightfall!['sc102-9']);
      await revokeAll('nightfall');
      // the words of the grant name the scene, so a slip shows at once
      const words = await prodgraphHere(
        ['grants', 'add', '--production', 'nightfall', '--engagement', 'eng-cli', '--scene', '12a'],
        cli,
      );
      assert.match(words.stdout, /^added grant \d+: scene on "12A INT\. [^"]+" for "eng-cli" \(live\)\n$/);
      await revokeAll('nightfall');
    });

    it('a number in several episodes is refused with the candidates; its episode, as 102/9 or --episode, names one', async () => {
      const { nines } = refs;
      refused(
        await grant('nines', '9'),
        'scene "9" names 2 scenes in production "nines": 101/9 (sc101-9) "9 INT. WARD - NIGHT", ' +
          '102/9 (sc102-9) "9 INT. MORTUARY - NIGHT"; name it by its number with its episode ' +
          '(e.g. 102/9, or --episode 102), by its ref, or by node id as id:123',
      );
      assert.equal(granted(await grant('nines', '102/9')), nines!['sc102-9']);
      assert.equal(granted(await grant('nines', '9', '--episode', '101')), nines!['sc101-9']);
      await revokeAll('nines');
      // the episode by its ref too, and the number in any case
      assert.equal(granted(await grant('nines', 'ep1/12a')), nines!['sc101-12a']);
      await revokeAll('nines');
      assert.equal(granted(await grant('nines', '12A', '--episode', 'ep1')), nines!['sc101-12a']);
      await revokeAll('nines');
      // a ref that is also another scene's number
      refused(
        await grant('nines', '21'),
        'scene "21" names 2 scenes in production "nines": 101/21 (sc101-21) "21 EXT. CAR PARK - NIGHT", ' +
          '102/3 (21) "3 EXT. ROOF - DAWN"; name it by its number with its episode ' +
          '(e.g. 102/9, or --episode 102), by its ref, or by node id as id:123',
      );
      assert.equal(granted(await grant('nines', '21', '--episode', '102')), nines!['21']);
      await revokeAll('nines');
      assert.equal(granted(await grant('nines', '101/21')), nines!['sc101-21']);
      await revokeAll('nines');
    });

    it('refuses what names no scene, saying how to name one', async () => {
      const forms =
        'name it by its number with its episode (e.g. 102/9, or --episode 102), by its ref, or by node id as id:123';
      refused(
        await grant('nines', '9', '--episode', '103'),
        '--episode: no episode "103" in production "nines" (an episode\'s code or ref)',
      );
      refused(await grant('nines', '103/9'), `no scene "103/9" in production "nines" (${forms})`);
      refused(
        await grant('nines', '12A', '--episode', '102'),
        `no scene "12A" in production "nines", episode 102 (${forms})`,
      );
      refused(
        await grant('nines', 'sc101-9', '--episode', '102'),
        `no scene "sc101-9" in production "nines", episode 102 (${forms})`,
      );
      refused(
        await grant('nines', '102/9', '--episode', '102'),
        '--episode goes with a scene number (--scene 9 --episode 102), not with "102/9"',
      );
      // a node id only when said so: a bare number is never one, and an asset's id is no scene's
      const coat = refs.nines!['co-coat']!;
      refused(await grant('nines', String(coat)), `no scene "${coat}" in production "nines" (${forms})`);
      refused(await grant('nines', `id:${coat}`), `no scene "id:${coat}" in production "nines" (${forms})`);
      refused(
        await prodgraphHere(
          [
            'grants',
            'add',
            '--production',
            'nines',
            '--engagement',
            'eng-cli',
            '--own-po',
            '--episode',
            '101',
          ],
          cli,
        ),
        '--episode goes with --scene (the episode of the scene number)',
      );
    });

    it('on a production without episodes: the number alone; --episode is refused', async () => {
      const { film } = refs;
      assert.equal(granted(await grant('film', '1')), film!.sc1);
      await revokeAll('film');
      assert.equal(granted(await grant('film', 'sc2')), film!.sc2);
      await revokeAll('film');
      refused(
        await grant('film', '1', '--episode', '101'),
        '--episode: production "film" is not episodic; name the scene alone',
      );
      refused(
        await grant('film', '7'),
        'no scene "7" in production "film" (name it by its number (e.g. 12A), by its ref, or by node id as id:123)',
      );
    });

    it('other objects still take a ref or an id, and id:N', async () => {
      const porter = refs.nightfall!['ch-porter']!;
      for (const named of ['ch-porter', String(porter), `id:${porter}`]) {
        const r = await prodgraphHere(
          [
            'grants',
            'add',
            '--production',
            'nightfall',
            '--engagement',
            'eng-cli',
            '--character',
            named,
            '--json',
          ],
          cli,
        );
        assert.equal(r.code, 0, r.stderr);
        assert.equal(JSON.parse(r.stdout).node_id, porter);
        await revokeAll('nightfall');
      }
    });
  });
}
