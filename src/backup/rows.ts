import type { Db } from '../db/index.js';
import { BackupError, type Manifest } from './manifest.js';
import { countRows } from './tables.js';

/** The rows of every table the manifest counted, compared: a restore that lost a row says so. */
export async function compareRows(db: Db, manifest: Manifest): Promise<number> {
  const tables = Object.keys(manifest.database.rows);
  const now = await countRows(db, tables);
  for (const t of tables) {
    if (now[t] !== manifest.database.rows[t])
      throw new BackupError(
        `table ${t}: ${now[t]} rows restored, the manifest counted ${manifest.database.rows[t]}`,
      );
  }
  return tables.reduce((n, t) => n + (now[t] ?? 0), 0);
}
