#!/usr/bin/env node
import { describeFailure, run } from './cli/main.js';

// A reader that stops early (`prodgraph generate … | head`) closes the pipe: that is the
// reader's choice, not a failure, so the command ends at once and quietly.
const closedPipe = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'EPIPE';
process.stdout.on('error', (err) => {
  if (closedPipe(err)) process.exit(0);
  throw err;
});

run(process.argv.slice(2)).catch((err: unknown) => {
  if (closedPipe(err)) process.exit(0);
  process.stderr.write(`prodgraph: ${describeFailure(err)}\n`);
  process.exitCode = 1;
});
