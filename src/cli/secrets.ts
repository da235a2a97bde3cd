import { KEEP_RETIRED_MS } from '../auth/signing-secrets.js';
import { rotateSecret } from '../auth/signing-repository.js';
import { loadConfig } from '../config.js';
import type { Db } from '../db/index.js';
import { operatorActor } from '../auth/audit-actor.js';
import { recordInstallationAudit } from '../auth/audit-record.js';
import { cliActor, COMMON_FLAGS, out, parse, withDb, type Command } from './args.js';

const rotate: Command = {
  name: 'rotate',
  summary: 'make a new secret to sign media tickets with',
  usage: `usage: prodgraph secrets rotate [--json]

Makes a new secret in the database to sign media tickets with. Every server on the database
signs with it within 30 seconds (and accepts a ticket it signed at once); tickets signed before
stay valid until they expire (15 minutes), as the secret it replaces keeps verifying them until
then. The secret itself is never printed. Has no effect on a server given
PRODGRAPH_TICKET_SECRET, which signs with that instead.

  --json   print {"generation":N}

${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, { json: { type: 'boolean' } });
    const config = loadConfig(values);
    // every production's media tickets are signed with it: each production's trail records it
    const audit = (trx: Db, generation: number) =>
      recordInstallationAudit(trx, {
        actor: operatorActor(cliActor()),
        action: 'signing_secret.rotate',
        object: { type: 'signing_secret', id: generation },
        summary: `rotated the media-ticket signing secret to generation ${generation}`,
      });
    const generation = await withDb(config, (h) => rotateSecret(h.db, KEEP_RETIRED_MS, audit));
    if (values.json) out(JSON.stringify({ generation }));
    else {
      out(
        `media tickets are signed with secret generation ${generation} from now on; tickets signed before stay valid until they expire`,
      );
      if (config.ticketSecret)
        out(
          'note: PRODGRAPH_TICKET_SECRET is set here: a server given it signs with it, not with the database’s secret',
        );
    }
  },
};

export const secretsCommand: Command = {
  name: 'secrets',
  summary: 'the secrets that sign media tickets',
  usage: `usage: prodgraph secrets rotate [--json]`,
  subcommands: [rotate],
};
