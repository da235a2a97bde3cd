import { parseDbTarget } from '../src/config.js';
import { openDatabase, type Db } from '../src/db/index.js';
import { generatedCode } from '../src/generate/index.js';
import { mintKey } from '../src/auth/key-service.js';
import type { BenchOptions } from './options.js';

/** What the measured requests need: keys, and the ids they rotate over. */
export interface Fixture {
  productionCode: string;
  filespace: string;
  /** Production-wide: read, write, read:money. */
  wideKey: string;
  /** Bound to engagement e001 (the one with 501 grants at scale 1): read, submit:turnover, read:money. */
  vendorKey: string;
  sceneCount: number;
  /** Every asset row (every node but scenes). */
  assetCount: number;
  scenes: number[];
  vendorScenes: number[];
  vendorCharacters: number[];
  characters: number[];
  assets: number[];
  department: { slug: string; assets: number };
  vendorGrants: number;
}

/** Evenly spaced picks from a list, so a route rotates over the whole production, not one hot row. */
const spread = <T>(rows: T[], count: number): T[] => {
  if (rows.length <= count) return rows;
  return Array.from({ length: count }, (_, i) => rows[Math.floor((i * rows.length) / count)]!);
};

const ROTATION = 200;

async function pick(db: Db, productionId: number) {
  const nodes = (kind: string) =>
    db
      .selectFrom('nodes')
      .where('production_id', '=', productionId)
      .where('kind', '=', kind)
      .select('id')
      .orderBy('id')
      .execute()
      .then((rows) => rows.map((r) => r.id));
  const engagement = await db
    .selectFrom('engagements')
    .where('production_id', '=', productionId)
    .where('ref', '=', 'e001')
    .select('id')
    .executeTakeFirstOrThrow();
  const grants = await db
    .selectFrom('grants')
    .where('engagement_id', '=', engagement.id)
    .select(['kind', 'node_id', 'revoked_at', 'expires_at'])
    .orderBy('id')
    .execute();
  const now = new Date().toISOString();
  const live = (kind: string) =>
    grants
      .filter(
        (g) => g.kind === kind && g.revoked_at === null && (g.expires_at === null || g.expires_at > now),
      )
      .map((g) => g.node_id!);
  const assets = await db
    .selectFrom('nodes')
    .where('production_id', '=', productionId)
    .where('kind', '<>', 'scene')
    .select('id')
    .orderBy('id')
    .execute();
  const department = await db
    .selectFrom('departments')
    .where('production_id', '=', productionId)
    .where('slug', '=', 'vfx')
    .select((eb) => [
      'slug',
      eb
        .selectFrom('nodes')
        .whereRef('nodes.department_id', '=', 'departments.id')
        .select(eb.fn.countAll<number>().as('n'))
        .as('assets'),
    ])
    .executeTakeFirstOrThrow();
  const scenes = await nodes('scene');
  return {
    sceneCount: scenes.length,
    assetCount: assets.length,
    scenes: spread(scenes, ROTATION),
    vendorScenes: spread(live('scene'), ROTATION),
    vendorCharacters: spread(live('character'), ROTATION),
    characters: spread(await nodes('character'), ROTATION),
    assets: spread(
      assets.map((a) => a.id),
      1_000,
    ),
    department: { slug: department.slug, assets: Number(department.assets) },
    vendorGrants: grants.length,
  };
}

export async function prepareFixture(db: string, options: BenchOptions): Promise<Fixture> {
  const handle = openDatabase(parseDbTarget(db));
  try {
    const code = generatedCode(options.seed);
    const production = await handle.db
      .selectFrom('productions')
      .where('code', '=', code)
      .select(['id', 'filespace'])
      .executeTakeFirstOrThrow();
    const wide = await mintKey(handle.db, {
      production: code,
      label: 'bench, production-wide',
      scopes: ['read', 'write', 'read:money'],
    });
    const vendor = await mintKey(handle.db, {
      production: code,
      label: 'bench, vendor',
      engagement: 'e001',
      scopes: ['read', 'submit:turnover', 'read:money'],
    });
    return {
      productionCode: code,
      filespace: production.filespace!,
      wideKey: wide.token,
      vendorKey: vendor.token,
      ...(await pick(handle.db, production.id)),
    };
  } finally {
    await handle.close();
  }
}
