import cluster from 'node:cluster';
import { loadConfig } from '../config.js';
import { COMMON_FLAGS, out, parse, withDb, type Command } from './args.js';
import { loadDemo } from './demo.js';
import { assertPortFree } from './port.js';
import { serveOn } from './serve.js';

/**
 * The demo server logs warnings and errors only, unless a level is asked for: a line per
 * request would scroll the keys it has just printed out of sight.
 */
function demoEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.PRODGRAPH_LOG_LEVEL !== undefined || env.LOG_LEVEL !== undefined) return env;
  return { ...env, PRODGRAPH_LOG_LEVEL: 'warn' };
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'load the demo productions if absent and mint demo keys',
  usage: `usage: prodgraph demo [--serve] [--host H] [--port N]

Loads the two shipped demo productions when they are absent and mints a fresh set of demo
keys on the series (printed once, with a curl line for --host/--port). With --serve it then
runs the service (what \`npm start\` does), refusing a taken port before minting any key, and
prints the keys again once it is ready. The demo server logs warnings and errors only (no line
per request), so the keys stay in sight; PRODGRAPH_LOG_LEVEL=info shows every request.
${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, {
      host: { type: 'string' },
      port: { type: 'string' },
      serve: { type: 'boolean' },
    });
    const config = loadConfig(values, values.serve ? demoEnv(process.env) : process.env);
    // a worker of a demo server with several workers: the primary has loaded the demo and minted the keys
    if (values.serve && cluster.isWorker) return serveOn(config);
    // with --serve (npm start) the keys are for this very server: a taken port stops us before minting
    if (values.serve) await assertPortFree(config.host, config.port);
    const demo = await withDb(config, (h) => loadDemo(h.db, config), { create: true });
    for (const line of [...demo.loaded, ...demo.keys]) out(line);
    if (!values.serve) return;
    await serveOn(config);
    // the keys again, last on the screen: the server is ready for them
    for (const line of [`Ready: serving ${demo.base}. The keys again:`, ...demo.keys]) out(line);
  },
};
