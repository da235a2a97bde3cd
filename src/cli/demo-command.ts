import { loadConfig } from '../config.js';
import { COMMON_FLAGS, out, parse, withDb, type Command } from './args.js';
import { loadDemo } from './demo.js';
import { assertPortFree } from './port.js';
import { serveOn } from './serve.js';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'load the demo productions if absent and mint demo keys',
  usage: `usage: prodgraph demo [--serve] [--host H] [--port N]

Loads the two shipped demo productions when they are absent and mints a fresh pair of demo
keys on the series (printed once, with a curl line for --host/--port). With --serve it then
runs the service (what \`npm start\` does), refusing a taken port before minting any key.
${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, {
      host: { type: 'string' },
      port: { type: 'string' },
      serve: { type: 'boolean' },
    });
    const config = loadConfig(values);
    // with --serve (npm start) the keys are for this very server: a taken port stops us before minting
    if (values.serve) await assertPortFree(config.host, config.port);
    await withDb(
      config,
      async (h) => {
        for (const line of await loadDemo(h.db, config)) out(line);
      },
      { create: true },
    );
    if (values.serve) await serveOn(config);
  },
};
