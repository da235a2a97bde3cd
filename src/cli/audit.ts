import { once } from 'node:events';
import { stringify } from 'csv-stringify/sync';
import { loadConfig } from '../config.js';
import { normaliseInstant } from '../domain/page.js';
import { isAppError } from '../errors.js';
import { durationMs } from '../auth/key-service.js';
import type { AuditEvent } from '../modules/audit/schemas.js';
import { allAudit, filterOf } from '../modules/audit/service.js';
import { CliError, COMMON_FLAGS, out, parse, productionId, required, withDb, type Command } from './args.js';

const COLUMNS: Array<keyof AuditEvent> = [
  'id',
  'at',
  'actor',
  'person_id',
  'key_id',
  'key_prefix',
  'key_label',
  'engagement_id',
  'action',
  'object_type',
  'object_id',
  'summary',
  'ip',
  'outcome',
];

/**
 * One CSV row (RFC 4180), through csv-stringify. Formulas are escaped: labels and summaries are
 * people's text, and a cell starting with `=`, `+`, `-` or `@` would run in a spreadsheet.
 */
const csvLine = (e: AuditEvent) =>
  stringify([COLUMNS.map((c) => e[c] ?? '')], { escape_formulas: true, record_delimiter: '' });

/** `--since`: an instant, a date, or a duration back from now (`30d`: the last thirty days). */
function instantOf(flag: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const back = durationMs(raw);
  if (back !== null) return new Date(Date.now() - back).toISOString();
  try {
    return normaliseInstant(flag, raw);
  } catch (err) {
    if (isAppError(err))
      throw new CliError(
        `--${flag}: "${raw}" is neither a date-time (2026-11-01T00:00:00Z), a date nor a duration (30d)`,
      );
    throw err;
  }
}

/** Waits while stdout is full, so a long export is never held in memory. */
async function drained(): Promise<void> {
  if (process.stdout.writableNeedDrain) await once(process.stdout, 'drain');
}

const exportAudit: Command = {
  name: 'export',
  summary: "stream a production's audit trail as JSON lines or CSV",
  usage: `usage: prodgraph audit export --production CODE --since WHEN [--until WHEN] [--format jsonl|csv]
                              [--actor TEXT] [--engagement ID] [--action ACTION] [--object TYPE[:ID]]

Prints the audit rows from --since (an ISO-8601 date-time, a date, or a duration back from now:
30d, 12h, 8w) to --until (default now), oldest first, one per line, streamed: jsonl (default)
writes one JSON object a line; csv writes a header line and then one row a line (RFC 4180).
The filters are those of GET /api/v1/admin/audit: --actor a key's prefix or label, or the actor
as shown; --engagement the engagement's id; --action an action (grant.create) or a family (grant);
--object a kind of object, or a kind and an id (key:12). ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, {
      production: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      format: { type: 'string' },
      actor: { type: 'string' },
      engagement: { type: 'string' },
      action: { type: 'string' },
      object: { type: 'string' },
    });
    const code = required(values.production, '--production');
    const format = values.format ?? 'jsonl';
    if (format !== 'jsonl' && format !== 'csv')
      throw new CliError(`--format: "${format}" is not jsonl or csv`);
    const since = instantOf('since', required(values.since, '--since'));
    const until = instantOf('until', values.until);
    const [objectType, objectId] = (values.object ?? '').split(':');
    if (values.engagement !== undefined && !/^[1-9]\d{0,9}$/.test(values.engagement))
      throw new CliError(`--engagement: "${values.engagement}" is not an engagement id`);
    if (objectId !== undefined && !/^[1-9]\d{0,9}$/.test(objectId))
      throw new CliError(`--object: "${values.object}" is not TYPE or TYPE:ID`);
    const filter = filterOf({
      actor: values.actor,
      engagement_id: values.engagement === undefined ? undefined : Number(values.engagement),
      action: values.action,
      object_type: objectType || undefined,
      object_id: objectId === undefined ? undefined : Number(objectId),
      since,
      until,
    });
    await withDb(loadConfig(values), async (h) => {
      const pid = await productionId(h, code);
      if (format === 'csv') out(COLUMNS.join(','));
      let n = 0;
      for await (const e of allAudit(h.db, pid, filter)) {
        out(format === 'csv' ? csvLine(e) : JSON.stringify(e));
        if (++n % 1000 === 0) await drained();
      }
    });
  },
};

export const auditCommand: Command = {
  name: 'audit',
  summary: "read a production's audit trail",
  usage: `usage: prodgraph audit export … (prodgraph audit export --help)`,
  subcommands: [exportAudit],
};
