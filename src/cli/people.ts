import { loadConfig } from '../config.js';
import { CONSOLE_ROLES } from '../domain/vocabulary.js';
import {
  allowPerson,
  listAllowed,
  parseRole,
  productionIdOf,
  withdrawPerson,
} from '../modules/sign-in-admin/service.js';
import { operatorActor } from '../auth/audit-actor.js';
import {
  CliError,
  cliActor,
  COMMON_FLAGS,
  out,
  parse,
  required,
  table,
  withDb,
  type Command,
} from './args.js';

/** Who may sign in to a production's console with the studio's identity provider. */

const allow: Command = {
  name: 'allow',
  summary: 'let an email sign in to the console, with a role',
  usage: `usage: prodgraph people allow EMAIL --production CODE --role ROLE [--person REF] [--json]

Lets EMAIL (as the identity provider vouches for it) sign in to the production's console.

  --role ROLE    ${CONSOLE_ROLES.join(', ')}: admin manages everything; coordinator everything but keys,
                 webhooks, sign-in and sessions; viewer browses
  --person REF   the production's person everything done through the sign-in is recorded under
                 (default: the production's person with this email, if one)
  --json         print the row as JSON

Again for an allowed email: the new role and person replace the old, and its open sessions end.
${COMMON_FLAGS}.`,
  async run(args) {
    const { values, positionals } = parse(
      args,
      {
        production: { type: 'string' },
        role: { type: 'string' },
        person: { type: 'string' },
        json: { type: 'boolean' },
      },
      1,
    );
    const email = positionals[0];
    if (!email) throw new CliError('people allow needs an EMAIL');
    const code = required(values.production, '--production');
    const role = parseRole(required(values.role, '--role'));
    const row = await withDb(loadConfig(values), async (h) =>
      allowPerson(
        h.db,
        await productionIdOf(h.db, code),
        { email, role, person: values.person },
        operatorActor(cliActor()),
      ),
    );
    out(
      values.json
        ? JSON.stringify(row)
        : `allowed ${row.email} as ${row.role}${row.person ? ` (${row.person.name})` : ''}`,
    );
  },
};

const list: Command = {
  name: 'list',
  summary: 'list who may sign in to the console',
  usage: `usage: prodgraph people list --production CODE [--json]

Lists the emails allowed to sign in to the production's console: role, person, since, by whom.
${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, { production: { type: 'string' }, json: { type: 'boolean' } });
    const code = required(values.production, '--production');
    const rows = await withDb(loadConfig(values), async (h) =>
      listAllowed(h.db, await productionIdOf(h.db, code)),
    );
    if (values.json) {
      out(JSON.stringify(rows));
      return;
    }
    table(
      ['EMAIL', 'ROLE', 'PERSON', 'SINCE', 'BY'],
      rows.map((r) => [r.email, r.role, r.person?.ref ?? r.person?.name ?? null, r.created_at, r.created_by]),
    );
  },
};

const revoke: Command = {
  name: 'revoke',
  summary: "withdraw an email's sign-in; its sessions end at once",
  usage: `usage: prodgraph people revoke EMAIL --production CODE

Withdraws EMAIL's sign-in to the production's console; its open sessions end at once.
${COMMON_FLAGS}.`,
  async run(args) {
    const { values, positionals } = parse(args, { production: { type: 'string' } }, 1);
    const email = positionals[0];
    if (!email) throw new CliError('people revoke needs an EMAIL');
    const code = required(values.production, '--production');
    const done = await withDb(loadConfig(values), async (h) =>
      withdrawPerson(h.db, await productionIdOf(h.db, code), email, operatorActor(cliActor())),
    );
    if (!done) throw new CliError(`${email} may not sign in to "${code}" (nothing to revoke)`);
    out(`revoked ${email.trim().toLowerCase()}'s sign-in`);
  },
};

export const peopleCommand: Command = {
  name: 'people',
  summary: 'who may sign in to the console with the identity provider',
  usage: `usage: prodgraph people allow|list|revoke … (prodgraph people SUBCOMMAND --help for each)`,
  subcommands: [allow, list, revoke],
};
