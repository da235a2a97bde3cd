import { loadConfig } from '../config.js';
import { listKeys, mintKey, parseExpiry, parseScopes, revokeKey } from '../auth/key-service.js';
import { SCOPES } from '../domain/vocabulary.js';
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

/** `--expires`: absent (the defaults apply), `never` (no expiry whatever the default), or a date or duration. */
function expiryFlag(raw: string | undefined): string | null | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === 'never') return null;
  return parseExpiry(raw);
}

const mint: Command = {
  name: 'mint',
  summary: 'mint a key and print its token once',
  usage: `usage: prodgraph keys mint --production CODE --label TEXT [--scopes s1,s2] [--engagement REF] [--person REF] [--expires WHEN] [--json]

Mints a key and prints the token once (it is never stored).

  --scopes s1,s2      of ${SCOPES.join(', ')}; default read,write (read alone with --engagement);
                      admin only on a production-wide key
  --engagement REF    bind the key to a vendor engagement (round-trip endpoints only, clamped)
  --person REF        record writes under this person
  --expires WHEN      refuse the key from then on (401 key_expired): a date (2027-03-31, midnight
                      UTC), a date-time, or a duration from now (12h, 30d, 8w). Without it a vendor
                      key gets PRODGRAPH_VENDOR_KEY_DAYS when that is set; "never" overrides it
  --json              print {"id","token","prefix","scopes","engagement","expires_at"}

${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, {
      production: { type: 'string' },
      label: { type: 'string' },
      scopes: { type: 'string' },
      engagement: { type: 'string' },
      person: { type: 'string' },
      expires: { type: 'string' },
      json: { type: 'boolean' },
    });
    const config = loadConfig(values);
    const input = {
      production: required(values.production, '--production'),
      label: required(values.label, '--label'),
      scopes: parseScopes(values.scopes),
      engagement: values.engagement,
      person: values.person,
      expiresAt: expiryFlag(values.expires),
      vendorKeyDays: config.vendorKeyDays,
    };
    const key = await withDb(config, (h) => mintKey(h.db, input, operatorActor(cliActor())));
    out(values.json ? JSON.stringify(key) : key.token);
  },
};

const list: Command = {
  name: 'list',
  summary: 'list keys by prefix',
  usage: `usage: prodgraph keys list --production CODE [--json]

Lists the production's keys: id, prefix, label, scopes, engagement, person, created, last used
(to the minute), expires, revoked. Tokens are never shown (they are not stored). ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, { production: { type: 'string' }, json: { type: 'boolean' } });
    const code = required(values.production, '--production');
    const rows = await withDb(loadConfig(values), (h) => listKeys(h.db, code));
    if (values.json) {
      out(JSON.stringify(rows));
      return;
    }
    table(
      [
        'ID',
        'PREFIX',
        'LABEL',
        'SCOPES',
        'ENGAGEMENT',
        'PERSON',
        'CREATED',
        'LAST USED',
        'EXPIRES',
        'REVOKED',
      ],
      rows.map((r) => [
        r.id,
        r.prefix,
        r.label,
        r.scopes.join(','),
        r.engagement,
        r.person,
        r.created_at,
        r.last_used_at,
        r.expires_at,
        r.revoked_at,
      ]),
    );
  },
};

const revoke: Command = {
  name: 'revoke',
  summary: 'revoke a key at once',
  usage: `usage: prodgraph keys revoke ID_OR_PREFIX

Revokes a key by id, prefix or whole token; the very next request with it is refused.
${COMMON_FLAGS}.`,
  async run(args) {
    const { values, positionals } = parse(args, {}, 1);
    const target = positionals[0];
    if (!target) throw new CliError('keys revoke needs an ID or a PREFIX');
    const key = await withDb(loadConfig(values), (h) => revokeKey(h.db, target, operatorActor(cliActor())));
    out(`revoked key ${key.id} (${key.prefix})`);
  },
};

export const keysCommand: Command = {
  name: 'keys',
  summary: 'mint, list and revoke API keys',
  usage: `usage: prodgraph keys mint|list|revoke … (prodgraph keys SUBCOMMAND --help for each)`,
  subcommands: [mint, list, revoke],
};
