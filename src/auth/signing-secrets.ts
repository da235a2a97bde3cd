import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import { storageFailure } from '../db/failures.js';
import { ensureSecret, liveSecrets } from './signing-repository.js';

/** How long a media ticket lives (the media-ticket module mints them). */
export const TICKET_TTL_SECONDS = 15 * 60;

/**
 * A secret retired by a rotation keeps verifying this long: the longest life of anything it
 * signed (a media ticket), and a minute more for a ticket checked as it expires.
 */
export const KEEP_RETIRED_MS = (TICKET_TTL_SECONDS + 60) * 1000;
/** How often a server reads the secrets again: a rotation through another server signs here within this. */
const REFRESH_MS = 30_000;
/** A signature no secret verifies reads them again (a newer generation made elsewhere), at most this often. */
const MISS_REFRESH_MS = 1000;

/**
 * The secrets that sign and verify media tickets. Without `PRODGRAPH_TICKET_SECRET`, they are
 * kept in the database (made by the first server to start, changed by `prodgraph secrets
 * rotate`), so every server of a deployment signs and verifies alike; each server reads them
 * at start, every REFRESH_MS, and when a signature fails to verify.
 */
export class SigningSecrets {
  private signing: Buffer;
  private verifying: Buffer[];
  /** When a signature no secret verified last made this server read them. */
  private missedAt = 0;
  private reading: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Why the secrets have never been read yet (the database was not available), else null. */
  private unreadable: Error | null = null;
  private onError?: (err: unknown) => void;

  private constructor(
    private readonly db: Db | null,
    fixed: Buffer,
  ) {
    this.signing = fixed;
    this.verifying = [fixed];
  }

  /** The configured secret (PRODGRAPH_TICKET_SECRET), or the database's, made if there is none yet. */
  static async open(db: Db, config: Config, onError?: (err: unknown) => void): Promise<SigningSecrets> {
    if (config.ticketSecret) return new SigningSecrets(null, Buffer.from(config.ticketSecret, 'utf8'));
    const secrets = new SigningSecrets(db, Buffer.alloc(0));
    secrets.onError = onError;
    try {
      await secrets.read();
    } catch (err) {
      // A database that is not available now must not stop the server from starting (or a
      // balancer's health check from finding it down): tickets wait for the first good read.
      if (storageFailure(err) !== 'unavailable') throw err;
      secrets.unreadable = err as Error;
      onError?.(err);
    }
    secrets.timer = setInterval(() => void secrets.read().catch((err) => onError?.(err)), REFRESH_MS);
    secrets.timer.unref();
    return secrets;
  }

  /**
   * The secret new signatures are made with. Before the secrets were ever read (the database was
   * not available at start), the read's failure: the request answers 503 as for any outage, and
   * the secrets are read again.
   */
  current(): Buffer {
    if (this.signing.length === 0 && this.unreadable !== null) {
      void this.read().catch((err) => this.onError?.(err));
      throw this.unreadable;
    }
    return this.signing;
  }

  /** Every secret a signature may have been made with, the current one first. */
  all(): readonly Buffer[] {
    return this.verifying;
  }

  /**
   * After a signature no known secret verifies: reads the secrets again (at most once a
   * second, however many forged tickets arrive), true when that may have brought a new one.
   */
  async reread(): Promise<boolean> {
    if (this.db === null || Date.now() - this.missedAt < MISS_REFRESH_MS) return false;
    this.missedAt = Date.now();
    await this.read();
    return true;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private read(): Promise<void> {
    this.reading ??= this.readNow().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readNow(): Promise<void> {
    let rows = await liveSecrets(this.db!, KEEP_RETIRED_MS);
    // every secret deleted by hand: make one again rather than sign with none
    if (rows.length === 0) {
      await ensureSecret(this.db!);
      rows = await liveSecrets(this.db!, KEEP_RETIRED_MS);
    }
    this.signing = Buffer.from((rows.find((r) => r.retired_at === null) ?? rows[0]!).secret, 'utf8');
    this.verifying = rows.map((r) => Buffer.from(r.secret, 'utf8'));
    this.unreadable = null;
  }
}
