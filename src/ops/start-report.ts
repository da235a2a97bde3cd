import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Db } from '../db/index.js';
import type { Config } from '../config.js';
import { missingMedia, productionCodes, shownDatabase, ticketSigning } from './checks.js';

/** Media rows looked at when the server starts: enough to notice a wrong folder, quick on any store. */
const START_SAMPLE = 500;

/**
 * One line at start saying what the server serves — the database (a path, or the URL without its
 * password), the media folder, the productions by code — and a warning when there is no
 * production (a mistyped or empty database) or the media folder lacks files the database names
 * (the wrong folder), so neither starts silently; and one saying how media tickets are signed
 * (never the secret). `prodgraph doctor` checks more.
 */
export async function reportStart(app: FastifyInstance, config: Config): Promise<void> {
  await reportServing(app.log, app.ctx.db, config);
}

/** reportStart for a process that builds no app (the primary of several workers). */
export async function reportServing(log: FastifyBaseLogger, db: Db, config: Config): Promise<void> {
  const database = shownDatabase(config);
  try {
    const codes = await productionCodes(db);
    log.info(
      { database, media: config.mediaDir, productions: codes },
      `serving ${codes.length} production${codes.length === 1 ? '' : 's'}${codes.length ? ` (${codes.join(', ')})` : ''} from ${database}, media in ${config.mediaDir}`,
    );
    const signing = await ticketSigning(db, config);
    log.info({ ticket_signing: signing.detail }, `media tickets signed with ${signing.detail}`);
    if (codes.length === 0)
      log.warn(
        { database },
        'the database holds no production: check --db / PRODGRAPH_DB, or import one (prodgraph import FILE)',
      );
    const media = await missingMedia(db, config.mediaDir, START_SAMPLE);
    if (media.missing.length > 0)
      log.warn(
        {
          media: config.mediaDir,
          missing: media.missing.length,
          looked: media.looked,
          example: media.missing[0],
        },
        `the media folder lacks ${media.missing.length} of ${media.looked} files the database names: check --media / PRODGRAPH_MEDIA (prodgraph doctor says more)`,
      );
  } catch (err) {
    log.warn({ err, database }, 'could not look at what the database holds');
  }
}
