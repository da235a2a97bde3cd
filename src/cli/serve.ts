import { loadConfig, type Config } from '../config.js';
import { serve } from '../server.js';
import { COMMON_FLAGS, parse, type Command } from './args.js';
import { portTaken } from './port.js';

/** Serves, turning a taken port into the one line that names it and how to pick another. */
export async function serveOn(config: Config): Promise<void> {
  try {
    await serve(config);
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? portTaken(config.host, config.port) : err;
  }
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the service',
  usage: `usage: prodgraph serve [--host H] [--port N] [--workers N|auto] [--drain-ms MS]

Runs the service (default 127.0.0.1:8080; env HOST, PORT). --workers (env PRODGRAPH_WORKERS)
runs N server processes sharing the port: one per core by default on PostgreSQL, one on SQLite
(reads scale with workers there, writes still take turns at the one writer). On SIGTERM the
server drains for --drain-ms (env PRODGRAPH_DRAIN_MS, default 5000; 0: none): /healthz answers
503 while it still serves, so a load balancer moves away before it stops. ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, {
      host: { type: 'string' },
      port: { type: 'string' },
      workers: { type: 'string' },
      'drain-ms': { type: 'string' },
    });
    const { 'drain-ms': drainMs, ...rest } = values;
    await serveOn(loadConfig({ ...rest, drainMs }));
  },
};
