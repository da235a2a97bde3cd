import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UserError } from '../errors.js';
import { assets, departments, episodes, organisations, people, scenes } from './breakdown.js';
import { activity, costReports, jobs, library, purchaseOrders, scriptChanges } from './history.js';
import { approvals, deliveries, departmentNotes, engagements, shootDays, submissions } from './operations.js';
import { makePlan, ref, type Plan } from './plan.js';
import { emptyTally, type Tally } from './tally.js';
import { documentChunks, type OutputFormat } from './write.js';

export type { Tally } from './tally.js';

export interface GenerateOptions {
  /** 1 is a season the size of a real show; 0.01 a hundredth of it. */
  scale: number;
  seed: number;
}

export const MAX_SCALE = 10;
export const DEFAULT_SEED = 1;

/** Checks the command-line values; every refusal names the flag. */
export function parseGenerateOptions(raw: { scale?: string; seed?: string }): GenerateOptions {
  const scaleText = raw.scale?.trim();
  if (!scaleText) throw new UserError('--scale is required (1 is a full season; 0.01 a hundredth)');
  const scale = /^(\d+(\.\d*)?|\.\d+)$/.test(scaleText) ? Number(scaleText) : NaN;
  if (!(scale > 0 && scale <= MAX_SCALE)) {
    throw new UserError(`--scale: "${raw.scale}" is not a number greater than 0 and at most ${MAX_SCALE}`);
  }
  const seedText = raw.seed?.trim() ?? String(DEFAULT_SEED);
  const seed = /^\d{1,10}$/.test(seedText) ? Number(seedText) : NaN;
  if (!(seed >= 0 && seed <= 0x7fffffff)) {
    throw new UserError(`--seed: "${raw.seed}" is not a whole number from 0 to ${0x7fffffff}`);
  }
  return { scale, seed };
}

/** YAML for .yaml/.yml files, JSON for anything else (smaller and much faster to read back). */
export const formatOf = (file: string | undefined): OutputFormat =>
  file && /\.ya?ml$/i.test(file) ? 'yaml' : 'json';

/** The production code of a generated document: the seed keeps two generated productions apart. */
export const generatedCode = (seed: number) => `generated-${seed}`;

function productionBlock(plan: Plan) {
  return {
    code: generatedCode(plan.seed),
    title: `Generated season (scale ${plan.scale}, seed ${plan.seed})`,
    logline: 'A generated episodic season, sized like a real show, for load and scale testing.',
    status: 'active',
    phase: 'production',
    accent: 'amber',
    format: 'episodic',
    season_number: 2,
    current_episode: ref.episode(Math.floor(plan.counts.episodes / 2)),
    filespace: `${generatedCode(plan.seed)}-main`,
  };
}

/**
 * Writes a deterministic production document to `sink`: the same scale and seed give the same
 * bytes. Rows are produced and written one at a time, never held as one document.
 */
export async function generateTo(
  sink: Writable,
  options: GenerateOptions,
  format: OutputFormat,
): Promise<Tally> {
  const plan = makePlan(options.scale, options.seed);
  const tally = emptyTally();
  const section = <T>(
    name: string,
    make: (plan: Plan, tally: Tally) => Iterable<T>,
  ): [string, Iterable<T>] => [name, { [Symbol.iterator]: () => make(plan, tally)[Symbol.iterator]() }];
  const chunks = documentChunks(
    {
      production: productionBlock(plan),
      sections: [
        section('episodes', episodes),
        section('organisations', organisations),
        section('departments', departments),
        section('people', people),
        section('scenes', scenes),
        section('assets', assets),
        section('shoot_days', shootDays),
        section('approvals', approvals),
        section('department_notes', departmentNotes),
        section('deliveries', deliveries),
        section('engagements', engagements),
        section('submissions', submissions),
        section('purchase_orders', purchaseOrders),
        section('cost_reports', costReports),
        section('script_changes', scriptChanges),
        section('activity', activity),
        section('jobs', jobs),
        section('library', library),
      ],
    },
    format,
  );
  await pipeline(Readable.from(chunks, { objectMode: false }), sink, { end: sink !== process.stdout });
  return tally;
}

/**
 * Generates into a file (written beside it, renamed into place when complete, so an
 * interrupted run never leaves a truncated document behind) or onto stdout.
 */
export async function generate(options: GenerateOptions, out?: string): Promise<Tally> {
  const format = formatOf(out);
  if (!out) return generateTo(process.stdout, options, format);
  const partial = `${out}.partial`;
  try {
    const tally = await generateTo(createWriteStream(partial), options, format);
    await rename(partial, out);
    return tally;
  } catch (err) {
    await rm(partial, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'ENOTDIR') {
      throw new UserError(`--out: cannot write "${out}" (${code})`);
    }
    throw err;
  }
}
