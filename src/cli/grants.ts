import { loadConfig } from '../config.js';
import type { Grant } from '../modules/admin/schemas.js';
import { addGrant, listGrants, revokeGrant } from '../modules/admin/service.js';
import {
  cliAdminActor,
  CliError,
  COMMON_FLAGS,
  out,
  parse,
  productionId,
  required,
  table,
  withDb,
  type Command,
} from './args.js';
import { resolveId } from './resolve.js';
import { resolveScene } from './scene-option.js';

const actor = cliAdminActor;

const targetOf = (g: Grant): string =>
  g.kind === 'own_po'
    ? 'own purchase orders'
    : g.kind === 'delivery'
      ? `"${g.delivery_title}"`
      : `"${g.node_label}"`;
const stateOf = (g: Grant): string =>
  g.live ? 'live' : g.revoked_at ? `revoked ${g.revoked_at}` : 'not live';
const line = (g: Grant) =>
  `grant ${g.id}: ${g.kind}${g.access ? ` ${g.access}` : ''} on ${targetOf(g)} for "${g.engagement_ref}" (${stateOf(g)})`;

const list: Command = {
  name: 'list',
  summary: 'list grants',
  usage: `usage: prodgraph grants list --production CODE [--engagement REF_OR_ID] [--all] [--json]

Lists live grants (--all adds revoked and expired ones, and those on retired objects).
${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, {
      production: { type: 'string' },
      engagement: { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const code = required(values.production, '--production');
    const rows = await withDb(loadConfig(values), async (h) => {
      const pid = await productionId(h, code);
      const engagementId = values.engagement
        ? await resolveId(h, pid, code, 'engagement', values.engagement)
        : undefined;
      return listGrants(h.db, pid, { engagementId, includeInactive: values.all ?? false });
    });
    if (values.json) {
      out(JSON.stringify(rows));
      return;
    }
    table(
      ['ID', 'ENGAGEMENT', 'KIND', 'TARGET', 'ACCESS', 'EXPIRES', 'SOURCE', 'STATE'],
      rows.map((g) => [
        g.id,
        g.engagement_ref,
        g.kind,
        targetOf(g),
        g.access,
        g.expires_at,
        g.source,
        stateOf(g),
      ]),
    );
  },
};

const add: Command = {
  name: 'add',
  summary: 'grant an engagement a scene, character, delivery or its own purchase orders',
  usage: `usage: prodgraph grants add --production CODE --engagement REF_OR_ID (--scene SCENE [--episode EPISODE] | --character REF_OR_ID | --delivery REF_OR_ID --access read|submit | --own-po) [--expires TIMESTAMP] [--json]

Name exactly one target:
  --scene SCENE                             the scene bundle (below)
  --character REF_OR_ID                     the character bundle
  --delivery REF_OR_ID --access read|submit the turnover (submit: may also submit work)
  --own-po                                  the engagement's own purchase orders

SCENE is what the script says: the scene's number (9, 12A), on an episodic production with its
episode (102/9, or --scene 9 --episode 102; the episode's code or ref), or the scene's ref
(sc102-9). A node id only as id:123. A number that names several scenes (scene 9 of two
episodes) is refused with the candidates. Other objects are named by ref, or by id (a bare
number that is not a ref, or id:123).

Effective on the very next request; recorded in activity. A grant made here is never revoked
by a document sync. --expires takes an ISO-8601 time in the future. ${COMMON_FLAGS}.`,
  flags: {
    engagement_id: '--engagement',
    node_id: '--scene/--character',
    delivery_id: '--delivery',
    access: '--access',
    expires_at: '--expires',
  },
  async run(args) {
    const { values } = parse(args, {
      production: { type: 'string' },
      engagement: { type: 'string' },
      scene: { type: 'string' },
      episode: { type: 'string' },
      character: { type: 'string' },
      delivery: { type: 'string' },
      access: { type: 'string' },
      'own-po': { type: 'boolean' },
      expires: { type: 'string' },
      json: { type: 'boolean' },
    });
    const code = required(values.production, '--production');
    const engagement = required(values.engagement, '--engagement');
    const targets = [
      values.scene,
      values.character,
      values.delivery,
      values['own-po'] ? 'own-po' : undefined,
    ];
    if (targets.filter((t) => t !== undefined).length !== 1) {
      throw new CliError('name exactly one of --scene, --character, --delivery or --own-po');
    }
    if (values.episode !== undefined && values.scene === undefined)
      throw new CliError('--episode goes with --scene (the episode of the scene number)');
    const access = values.access;
    if (access !== undefined && access !== 'read' && access !== 'submit') {
      throw new CliError('--access is read or submit');
    }
    const g = await withDb(loadConfig(values), async (h) => {
      const pid = await productionId(h, code);
      const engagement_id = await resolveId(h, pid, code, 'engagement', engagement);
      const { scene, character, delivery } = values;
      const kind = scene
        ? ('scene' as const)
        : character
          ? ('character' as const)
          : delivery
            ? ('delivery' as const)
            : ('own_po' as const);
      const node_id = scene
        ? await resolveScene(h, pid, code, scene, values.episode)
        : character
          ? await resolveId(h, pid, code, 'character', character)
          : undefined;
      const delivery_id =
        kind === 'delivery' && delivery ? await resolveId(h, pid, code, 'delivery', delivery) : undefined;
      return addGrant(h.db, pid, actor(), {
        engagement_id,
        kind,
        node_id,
        delivery_id,
        access,
        expires_at: values.expires,
      });
    });
    out(values.json ? JSON.stringify(g) : `added ${line(g)}`);
  },
};

const revoke: Command = {
  name: 'revoke',
  summary: 'revoke a grant at once',
  usage: `usage: prodgraph grants revoke ID --production CODE [--json]

Revokes a grant (see grants list for ids); the very next request no longer reaches what it
named. Recorded in activity. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values, positionals } = parse(
      args,
      { production: { type: 'string' }, json: { type: 'boolean' } },
      1,
    );
    const code = required(values.production, '--production');
    const target = positionals[0];
    if (!target || !/^\d{1,9}$/.test(target))
      throw new CliError('grants revoke needs a grant ID (see grants list)');
    const g = await withDb(loadConfig(values), async (h) =>
      revokeGrant(h.db, await productionId(h, code), actor(), Number(target)),
    );
    out(values.json ? JSON.stringify(g) : `revoked ${line(g)}`);
  },
};

export const grantsCommand: Command = {
  name: 'grants',
  summary: 'list, add and revoke what vendor engagements reach',
  usage: `usage: prodgraph grants list|add|revoke … (prodgraph grants SUBCOMMAND --help for each)`,
  subcommands: [list, add, revoke],
};
