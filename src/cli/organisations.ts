import { loadConfig } from '../config.js';
import type { Organisation } from '../modules/admin-lookup/schemas.js';
import { listOrganisations } from '../modules/admin-lookup/service.js';
import { addOrganisation } from '../modules/organisations/service.js';
import {
  cliAdminActor,
  COMMON_FLAGS,
  out,
  parse,
  productionId,
  required,
  table,
  withDb,
  type Command,
} from './args.js';

const line = (o: Organisation) => `organisation "${o.name}" (ref ${o.ref}, id ${o.id})`;

const list: Command = {
  name: 'list',
  summary: "list the production's organisations",
  usage: `usage: prodgraph organisations list --production CODE [--json]

Lists the organisations (from the production document or added here), each with its number of
live engagements. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, { production: { type: 'string' }, json: { type: 'boolean' } });
    const code = required(values.production, '--production');
    const rows = await withDb(loadConfig(values), async (h) =>
      listOrganisations(h.db, await productionId(h, code)),
    );
    if (values.json) {
      out(JSON.stringify(rows));
      return;
    }
    table(
      ['ID', 'REF', 'NAME', 'ENGAGEMENTS'],
      rows.map((o) => [o.id, o.ref, o.name, o.engagements]),
    );
  },
};

const add: Command = {
  name: 'add',
  summary: 'add a vendor organisation, to engage it',
  usage: `usage: prodgraph organisations add --production CODE --name NAME [--ref REF] [--json]

Adds an organisation so a new vendor can be engaged at once (engagements add --organisation
REF). The name must be new to the production (compared case-insensitively after trimming);
without --ref one is made from the name (org-brand-new-vfx-co). Recorded in activity.
${COMMON_FLAGS}.`,
  flags: { name: '--name', ref: '--ref' },
  async run(args) {
    const { values } = parse(args, {
      production: { type: 'string' },
      name: { type: 'string' },
      ref: { type: 'string' },
      json: { type: 'boolean' },
    });
    const code = required(values.production, '--production');
    const name = required(values.name, '--name');
    const o = await withDb(loadConfig(values), async (h) =>
      addOrganisation(h.db, await productionId(h, code), cliAdminActor(), {
        name,
        ...(values.ref !== undefined ? { ref: values.ref } : {}),
      }),
    );
    out(values.json ? JSON.stringify(o) : `added ${line(o)}`);
  },
};

export const organisationsCommand: Command = {
  name: 'organisations',
  summary: 'list and add vendor organisations',
  usage: `usage: prodgraph organisations list|add … (prodgraph organisations SUBCOMMAND --help for each)`,
  subcommands: [list, add],
};
