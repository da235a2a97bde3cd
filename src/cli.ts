#!/usr/bin/env node
import { describeFailure, run } from './cli/main.js';

run(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`prodgraph: ${describeFailure(err)}\n`);
  process.exitCode = 1;
});
