import { loadConfig } from '../config.js';
import { serve } from '../server.js';
import { COMMON_FLAGS, parse, type Command } from './args.js';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the service',
  usage: `usage: prodgraph serve [--host H] [--port N]

Runs the service (default 127.0.0.1:8080; env HOST, PORT). ${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, { host: { type: 'string' }, port: { type: 'string' } });
    await serve(loadConfig(values));
  },
};
