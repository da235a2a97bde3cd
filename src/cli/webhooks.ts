import { loadConfig } from '../config.js';
import { ENGAGEMENT_EVENT_KINDS } from '../auth/clamp.js';
import { CHANGE_KINDS } from '../db/change-log.js';
import type { Webhook } from '../modules/webhooks/schemas.js';
import {
  addWebhook,
  listDeliveries,
  listWebhooks,
  removeWebhook,
  setWebhookActive,
} from '../modules/webhooks/service.js';
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
const line = (w: Webhook) =>
  `webhook ${w.id} to ${w.url}${w.kinds ? ` (${w.kinds.join(', ')})` : ''}${w.engagement_id !== null ? ` for engagement ${w.engagement_id}` : ''}`;

function idOf(positionals: string[], what: string): number {
  const raw = positionals[0];
  if (!raw) throw new CliError(`webhooks ${what} needs an ID`);
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647)
    throw new CliError(`"${raw}" is not a webhook id`);
  return Number(raw);
}

const add: Command = {
  name: 'add',
  summary: 'subscribe a URL to the production’s changes; prints the signing secret once',
  usage: `usage: prodgraph webhooks add URL --production CODE [--kinds k1,k2] [--after CURSOR] [--engagement REF_OR_ID] [--json]

Each change of the production (as GET /api/v1/changes lists it) is POSTed to URL as JSON,
signed with HMAC-SHA256 in the Prodgraph-Signature header, at least once, in commit order, by
the running server (prodgraph serve). Prints the signing secret once: keep it.

  --kinds k1,k2            only these kinds (${CHANGE_KINDS.join(', ')}); default every kind
  --after CURSOR           start after this change feed cursor (replay); default: from now on
  --engagement REF_OR_ID   a webhook for a vendor engagement: sent only what that engagement can
                           see (its turnovers, their sent packages, its own submissions and their
                           reviews, its own grants and their expiry); kinds among ${ENGAGEMENT_EVENT_KINDS.join(', ')}
  --json                   print the subscription with its secret

Recorded in activity. ${COMMON_FLAGS}.`,
  flags: { url: 'URL', kinds: '--kinds', after: '--after', engagement_id: '--engagement' },
  async run(args) {
    const { values, positionals } = parse(
      args,
      {
        production: { type: 'string' },
        kinds: { type: 'string' },
        after: { type: 'string' },
        engagement: { type: 'string' },
        json: { type: 'boolean' },
      },
      1,
    );
    const code = required(values.production, '--production');
    const url = positionals[0];
    if (!url) throw new CliError('webhooks add needs a URL');
    const kinds = values.kinds
      ?.split(',')
      .map((k) => k.trim())
      .filter(Boolean);
    const unknown = kinds?.filter((k) => !(CHANGE_KINDS as readonly string[]).includes(k)) ?? [];
    if (unknown.length)
      throw new CliError(`--kinds: unknown kind "${unknown[0]}" (${CHANGE_KINDS.join(', ')})`);
    const w = await withDb(loadConfig(values), async (h) => {
      const pid = await productionId(h, code);
      const engagement =
        values.engagement === undefined
          ? undefined
          : await resolveId(h, pid, code, 'engagement', values.engagement);
      return addWebhook(h.db, pid, actor(), {
        url,
        ...(kinds?.length ? { kinds: [...new Set(kinds)] as Webhook['kinds'] } : {}),
        ...(values.after ? { after: values.after } : {}),
        ...(engagement !== undefined ? { engagement_id: engagement } : {}),
      });
    });
    if (values.json) {
      out(JSON.stringify(w));
      return;
    }
    out(`added ${line(w)}`);
    out(`signing secret (shown once): ${w.secret}`);
  },
};

const list: Command = {
  name: 'list',
  summary: 'list webhook subscriptions and how their delivery goes',
  usage: `usage: prodgraph webhooks list --production CODE [--json]

Lists subscriptions (never their secrets): id, URL, kinds, active, failures in a row, last
delivery, next attempt, last error, and the engagement an engagement webhook is for. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, { production: { type: 'string' }, json: { type: 'boolean' } });
    const code = required(values.production, '--production');
    const rows = await withDb(loadConfig(values), async (h) =>
      listWebhooks(h.db, await productionId(h, code)),
    );
    if (values.json) {
      out(JSON.stringify(rows));
      return;
    }
    table(
      [
        'ID',
        'URL',
        'KINDS',
        'ACTIVE',
        'FAILURES',
        'LAST DELIVERED',
        'NEXT ATTEMPT',
        'LAST ERROR',
        'ENGAGEMENT',
      ],
      rows.map((w) => [
        w.id,
        w.url,
        w.kinds?.join(',') ?? 'all',
        w.active ? 'yes' : 'paused',
        w.failures,
        w.last_delivered_at,
        w.next_attempt_at,
        w.last_error,
        w.engagement_id ?? 'production',
      ]),
    );
  },
};

const deliveries: Command = {
  name: 'deliveries',
  summary: 'show a subscription’s delivery log, newest first',
  usage: `usage: prodgraph webhooks deliveries ID --production CODE [--limit N] [--json]

Every attempt: when, which change, the attempt number, the receiver's status or why none came,
how long it took. The newest 1,000 attempts are kept. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values, positionals } = parse(
      args,
      { production: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
      1,
    );
    const code = required(values.production, '--production');
    const id = idOf(positionals, 'deliveries');
    const limit = values.limit === undefined ? 50 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new CliError('--limit: a whole number from 1');
    const rows = await withDb(loadConfig(values), async (h) =>
      listDeliveries(h.db, await productionId(h, code), id, limit),
    );
    if (values.json) {
      out(JSON.stringify(rows));
      return;
    }
    table(
      ['AT', 'CHANGE', 'ATTEMPT', 'DELIVERED', 'STATUS', 'MS', 'ERROR'],
      rows.map((d) => [
        d.at,
        `${d.change.kind ?? '?'}:${d.change.id ?? '?'}:${d.change.op ?? '?'}`,
        d.attempt,
        d.delivered ? 'yes' : 'no',
        d.status_code,
        d.duration_ms,
        d.error,
      ]),
    );
  },
};

function toggle(name: 'pause' | 'resume' | 'remove', summary: string, detail: string): Command {
  return {
    name,
    summary,
    usage: `usage: prodgraph webhooks ${name} ID --production CODE [--json]

${detail} Recorded in activity. ${COMMON_FLAGS}.`,
    async run(args) {
      const { values, positionals } = parse(
        args,
        { production: { type: 'string' }, json: { type: 'boolean' } },
        1,
      );
      const code = required(values.production, '--production');
      const id = idOf(positionals, name);
      const w = await withDb(loadConfig(values), async (h) => {
        const pid = await productionId(h, code);
        return name === 'remove'
          ? removeWebhook(h.db, pid, actor(), id)
          : setWebhookActive(h.db, pid, actor(), id, name === 'resume');
      });
      out(values.json ? JSON.stringify(w) : `${name === 'pause' ? 'paused' : `${name}d`} ${line(w)}`);
    },
  };
}

export const webhooksCommand: Command = {
  name: 'webhooks',
  summary: 'subscribe URLs to the production’s changes; list, pause, resume, remove; show deliveries',
  usage: `usage: prodgraph webhooks add|list|pause|resume|remove|deliveries … (prodgraph webhooks SUBCOMMAND --help for each)`,
  subcommands: [
    add,
    list,
    toggle(
      'pause',
      'stop delivering until resumed (changes are kept)',
      'Stops deliveries; the changes wait for it.',
    ),
    toggle(
      'resume',
      'deliver again, from where it stopped',
      'Delivers again from where it stopped, with every change made while paused; a failing receiver is retried at once.',
    ),
    toggle(
      'remove',
      'remove a subscription and its delivery log',
      'Removes the subscription and its delivery log.',
    ),
    deliveries,
  ],
};
