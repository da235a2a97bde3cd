import { constants } from 'node:fs';
import { access, stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { sql } from 'kysely';
import { describeDatabase } from '../backup/manifest.js';
import type { Config } from '../config.js';
import { KEEP_RETIRED_MS } from '../auth/signing-secrets.js';
import { liveSecrets } from '../auth/signing-repository.js';
import type { Db } from '../db/index.js';
import { FileMediaStore } from '../media/store.js';

/*
 * What `prodgraph doctor` checks of an installation, and what `serve` says at start: each check
 * answers what it found and, when something is wrong, what to do about it.
 */

export type Level = 'ok' | 'warn' | 'fail';

export interface Finding {
  check: string;
  level: Level;
  detail: string;
  /** What to do, when the level is not ok. */
  fix?: string;
}

/** Media rows looked at for their files: all of them up to this many, an even sample beyond. */
export const MEDIA_SAMPLE = 5000;

export async function productionCodes(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('productions').select('code').orderBy('code').execute();
  return rows.map((r) => r.code);
}

/** Of the files the database names, how many were looked for and which are not in the media folder. */
export async function missingMedia(db: Db, mediaDir: string, sample = MEDIA_SAMPLE) {
  const store = new FileMediaStore(mediaDir);
  const { n } = await db
    .selectFrom('media')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const total = Number(n);
  const every = Math.max(1, Math.ceil(total / sample));
  // an even sample by id: every k-th row, so a large store is checked in bounded time
  const rows = await db
    .selectFrom('media')
    .select(['id', 'storage_key', 'size'])
    .$if(every > 1, (q) => q.where(sql<boolean>`id % ${every} = 0`))
    .orderBy('id')
    .limit(sample)
    .execute();
  const missing: string[] = [];
  for (const r of rows) {
    const s = await store.stat(r.storage_key);
    if (!s || s.size !== Number(r.size)) missing.push(r.storage_key);
  }
  return { total, looked: rows.length, missing };
}

export async function mediaFolder(mediaDir: string): Promise<Finding> {
  const s = await stat(mediaDir).catch(() => null);
  if (!s)
    return {
      check: 'media folder',
      level: 'warn',
      detail: `${mediaDir} does not exist yet (the first upload makes it)`,
    };
  if (!s.isDirectory())
    return {
      check: 'media folder',
      level: 'fail',
      detail: `${mediaDir} is not a folder`,
      fix: 'point --media / PRODGRAPH_MEDIA at a folder',
    };
  const readable = await access(mediaDir, constants.R_OK | constants.W_OK | constants.X_OK).then(
    () => true,
    () => false,
  );
  if (!readable)
    return {
      check: 'media folder',
      level: 'fail',
      detail: `${mediaDir} cannot be read and written by this user`,
      fix: `chown the folder to the user the server runs as`,
    };
  if ((s.mode & 0o077) !== 0)
    return {
      check: 'media folder',
      level: 'warn',
      detail: `${mediaDir} is readable by others (mode ${(s.mode & 0o777).toString(8)}); it holds unreleased media`,
      fix: `chmod 700 ${mediaDir}`,
    };
  return { check: 'media folder', level: 'ok', detail: `${mediaDir}, owner-only` };
}

/** Below either, a disk is low: under 1 GiB free, or under 5% of it. */
export const LOW_DISK = { bytes: 1024 ** 3, share: 0.05 };

/**
 * Free space where the database file and the media folder live: a full disk refuses writes
 * (507). `low` says when a disk counts as low (a test passes its own; the sizes differ).
 */
export async function freeDisk(config: Config, low = LOW_DISK): Promise<Finding[]> {
  const places = new Map<string, string>();
  if (config.db.dialect === 'sqlite' && config.db.path !== ':memory:')
    places.set('database disk', dirname(config.db.path));
  places.set('media disk', config.mediaDir);
  const out: Finding[] = [];
  for (const [check, path] of places) {
    let probe = path;
    while (!(await stat(probe).catch(() => null)) && dirname(probe) !== probe) probe = dirname(probe);
    const fs = await statfs(probe).catch(() => null);
    if (!fs) continue;
    const free = fs.bavail * fs.bsize;
    const share = fs.blocks > 0 ? fs.bavail / fs.blocks : 1;
    const gb = (free / 1024 ** 3).toFixed(1);
    const isLow = free < low.bytes || share < low.share;
    out.push({
      check,
      level: isLow ? 'warn' : 'ok',
      detail: `${gb} GB free (${Math.round(share * 100)}%) at ${probe}`,
      ...(isLow ? { fix: 'free some space or grow the disk: writes are refused (507) once it is full' } : {}),
    });
  }
  return out;
}

/**
 * The clock: not behind the database's newest change, and (PostgreSQL) agreeing with the
 * database server's. `now` is this machine's time (a test passes a skewed one).
 */
export async function clock(db: Db, dialect: 'sqlite' | 'postgres', now = Date.now()): Promise<Finding> {
  const newest = await db
    .selectFrom('changes')
    .select((eb) => eb.fn.max('at').as('at'))
    .executeTakeFirst()
    .catch(() => undefined);
  const newestAt = newest?.at ? Date.parse(String(newest.at)) : null;
  if (newestAt !== null && newestAt - now > 60_000)
    return {
      check: 'clock',
      level: 'warn',
      detail: `the newest change is dated ${new Date(newestAt).toISOString()}, ${Math.round((newestAt - now) / 1000)} s ahead of this clock`,
      fix: 'set the clock right (NTP): cursors, tickets and timestamps assume it only moves forward',
    };
  if (dialect === 'postgres') {
    const { rows } = await sql<{ now: Date }>`select now() as now`.execute(db);
    const skew = Math.abs(new Date(rows[0]?.now ?? now).getTime() - now);
    if (skew > 5000)
      return {
        check: 'clock',
        level: 'warn',
        detail: `${Math.round(skew / 1000)} s apart from the database server's`,
        fix: 'run NTP on both machines',
      };
  }
  return { check: 'clock', level: 'ok', detail: new Date(now).toISOString() };
}

/**
 * How media tickets are signed, never the secret: PRODGRAPH_TICKET_SECRET, or the database's
 * secret (its generation and age, and how many retired ones still verify).
 */
export async function ticketSigning(db: Db, config: Config, now = Date.now()): Promise<Finding> {
  const check = 'ticket signing';
  if (config.ticketSecret)
    return {
      check,
      level: 'ok',
      detail:
        'PRODGRAPH_TICKET_SECRET, from the environment (every server must be given the same; unset it to use the database’s secret)',
    };
  const rows = await liveSecrets(db, KEEP_RETIRED_MS);
  const newest = rows.find((r) => r.retired_at === null);
  if (!newest)
    return {
      check,
      level: 'ok',
      detail:
        'no secret in the database yet: the first server to start makes one, and every server shares it',
    };
  const retired = rows.length - 1;
  return {
    check,
    level: 'ok',
    detail: `the database's secret, shared by every server on it: generation ${newest.generation}, made ${newest.created_at} (${age(now - Date.parse(newest.created_at))} ago)${retired ? `; ${retired} retired by a rotation still verifying the tickets they signed` : ''}`,
  };
}

/** A duration as people say it: seconds, minutes, hours or days. */
function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} days`;
}

/** A database as it may be shown: a path, or the PostgreSQL URL without its password or options. */
export const shownDatabase = (config: Config) =>
  `${config.db.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'} ${describeDatabase(config.db)}`;
