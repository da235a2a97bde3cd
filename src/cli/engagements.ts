import { loadConfig } from '../config.js';
import { addEngagement, archiveEngagement, listEngagements } from '../modules/admin/service.js';
import type { Engagement } from '../modules/admin/schemas.js';
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

const actor = cliAdminActor;
const line = (e: Engagement) =>
  `engagement "${e.ref}" (id ${e.id}) for ${e.organisation.name}${e.archived_at ? `, archived ${e.archived_at}` : ''}`;

const list: Command = {
  name: 'list',
  summary: "list the production's vendor engagements",
  usage: `usage: prodgraph engagements list --production CODE [--all] [--json]

Lists engagements with their organisation, departments, live grants, unrevoked keys and
source (document or admin). --all includes archived ones. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, {
      production: { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const code = required(values.production, '--production');
    const rows = await withDb(loadConfig(values), async (h) =>
      listEngagements(h.db, await productionId(h, code), { includeArchived: values.all ?? false }),
    );
    if (values.json) {
      out(JSON.stringify(rows));
      return;
    }
    table(
      ['ID', 'REF', 'ORGANISATION', 'DEPARTMENTS', 'GRANTS', 'KEYS', 'SOURCE', 'ARCHIVED'],
      rows.map((e) => [
        e.id,
        e.ref,
        e.organisation.name,
        e.departments.join(','),
        e.live_grants,
        e.keys,
        e.source,
        e.archived_at,
      ]),
    );
  },
};

const add: Command = {
  name: 'add',
  summary: 'engage a vendor organisation',
  usage: `usage: prodgraph engagements add --production CODE --ref REF --organisation REF_OR_ID [--departments SLUG,SLUG] [--json]

Creates an engagement an administrator owns: a document sync never archives it. The ref must
be new to the production (refs are unique across the whole document). Recorded in activity.
${COMMON_FLAGS}.`,
  flags: { ref: '--ref', organisation_id: '--organisation', departments: '--departments' },
  async run(args) {
    const { values } = parse(args, {
      production: { type: 'string' },
      ref: { type: 'string' },
      organisation: { type: 'string' },
      departments: { type: 'string' },
      json: { type: 'boolean' },
    });
    const code = required(values.production, '--production');
    const ref = required(values.ref, '--ref');
    const org = required(values.organisation, '--organisation');
    const departments = (values.departments ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const e = await withDb(loadConfig(values), async (h) => {
      const pid = await productionId(h, code);
      const organisation_id = await resolveId(h, pid, code, 'organisation', org);
      return addEngagement(h.db, pid, actor(), { ref, organisation_id, departments });
    });
    out(values.json ? JSON.stringify(e) : `added ${line(e)}`);
  },
};

const archive: Command = {
  name: 'archive',
  summary: 'archive an engagement: it reaches nothing from the next request on',
  usage: `usage: prodgraph engagements archive REF_OR_ID --production CODE [--json]

Archives an engagement: from the very next request it reaches nothing and leaves every vendor
answer; its keys stay, reaching nothing, until revoked. Recorded in activity. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values, positionals } = parse(
      args,
      { production: { type: 'string' }, json: { type: 'boolean' } },
      1,
    );
    const code = required(values.production, '--production');
    const target = positionals[0];
    if (!target) throw new CliError('engagements archive needs a REF or an ID');
    const e = await withDb(loadConfig(values), async (h) => {
      const pid = await productionId(h, code);
      return archiveEngagement(h.db, pid, actor(), await resolveId(h, pid, code, 'engagement', target));
    });
    out(values.json ? JSON.stringify(e) : `archived ${line(e)}`);
  },
};

export const engagementsCommand: Command = {
  name: 'engagements',
  summary: 'list, add and archive vendor engagements',
  usage: `usage: prodgraph engagements list|add|archive … (prodgraph engagements SUBCOMMAND --help for each)`,
  subcommands: [list, add, archive],
};
