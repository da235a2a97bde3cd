import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { hearCommit, type CommitNews } from './change-signal.js';

/**
 * The channel a PostgreSQL schema's commits are announced on (an SQL expression). Installs sharing one database
 * work in different schemas, so each has its own channel and they never wake each other; the
 * schema's name is hashed because a channel name may hold at most 63 bytes.
 */
export const COMMIT_CHANNEL = "'prodgraph_commits_' || md5(current_schema())";

/** The first reconnection waits this long; each failure doubles it, up to RETRY_MAX_MS. */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * One dedicated PostgreSQL connection that LISTENs on the schema's commit channel and wakes this
 * process's readers on each announcement (`production:revision`), whichever process committed.
 * The connection is reopened whenever it is lost; while it is down, `listening` is false and
 * the readers poll (ChangeWatch). Emits 'up' each time it listens again:
 * commits made while it was down were not announced to it, so readers look once then.
 */
export class CommitListener extends EventEmitter implements CommitNews {
  private client: pg.Client | null = null;
  private up = false;
  private closed = false;
  private retryMs = RETRY_MIN_MS;
  private retry: NodeJS.Timeout | null = null;
  /** The newest revision per production this process committed and announced itself. */
  private readonly ownRevisions = new Map<number, number>();

  constructor(
    private readonly newClient: () => pg.Client,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    super();
  }

  get listening(): boolean {
    return this.up;
  }

  /** Resolves once listening, or once the first attempt failed (reconnection goes on behind). */
  start(): Promise<void> {
    return this.open();
  }

  committedHere(productionId: number, revision: number): void {
    if ((this.ownRevisions.get(productionId) ?? 0) < revision) this.ownRevisions.set(productionId, revision);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    this.up = false;
    await client?.end().catch(() => undefined);
  }

  private async open(): Promise<void> {
    if (this.closed) return;
    const client = this.newClient();
    this.client = client;
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, null));
    client.on('notification', (n) => this.heard(n.payload));
    try {
      await client.connect();
      const { rows } = await client.query<{ channel: string }>(`select ${COMMIT_CHANNEL} as channel`);
      // hex and underscores only, so quoting it needs no escaping
      await client.query(`LISTEN "${rows[0]!.channel}"`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.client !== client) return;
    this.up = true;
    this.retryMs = RETRY_MIN_MS;
    this.emit('up');
  }

  /** The connection failed or ended: readers poll until another listens. */
  private lost(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    this.up = false;
    client.end().catch(() => undefined);
    if (this.closed) return;
    if (err) this.onError(err);
    this.emit('down');
    this.retry = setTimeout(() => void this.open(), this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  private heard(payload: string | undefined): void {
    const [production, revision] = (payload ?? '').split(':').map(Number);
    if (!Number.isSafeInteger(production) || !Number.isSafeInteger(revision)) return;
    // this process's own commit: its readers were woken when it committed
    if ((this.ownRevisions.get(production!) ?? 0) >= revision!) return;
    hearCommit(production!, revision);
  }
}
