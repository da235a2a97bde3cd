import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { run } from '../src/cli/main.js';

/**
 * Runs `prodgraph import` exactly as the CLI does, in a process of its own, and reports its
 * wall time and the process's peak resident memory. Usage: import-child.ts DOC DB MEDIA STATS_FILE
 */
const [doc, db, media, statsFile] = process.argv.slice(2);
if (!doc || !db || !media || !statsFile) throw new Error('usage: import-child.ts DOC DB MEDIA STATS_FILE');
const started = performance.now();
await run(['import', doc, '--db', db, '--media', media]);
const ms = performance.now() - started;
writeFileSync(
  statsFile,
  JSON.stringify({ ms: Math.round(ms), peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }),
);
