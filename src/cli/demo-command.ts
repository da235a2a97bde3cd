import { loadConfig } from '../config.js';
import { COMMON_FLAGS, out, parse, withDb, type Command } from './args.js';
import { loadDemo } from './demo.js';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'load the demo productions if absent and mint demo keys',
  usage: `usage: prodgraph demo [--host H] [--port N]

Loads the two shipped demo productions when they are absent and mints a fresh pair of demo
keys on the series (printed once, with a curl line for --host/--port). ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, { host: { type: 'string' }, port: { type: 'string' } });
    const config = loadConfig(values);
    await withDb(config, async (h) => {
      for (const line of await loadDemo(h.db, config)) out(line);
    });
  },
};
