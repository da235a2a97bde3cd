import { pino } from 'pino';
import { loggerOptions } from '../src/http/logging.js';

/**
 * The cost of one `request completed` line, as the server writes it (its logger options, its
 * batched standard output), against the same logger writing through sonic-boom's own batching
 * (`minLength: 8192`, what the server used before) and through a destination that discards
 * every line (the logger's own work, no writing). Run with standard output sent to /dev/null:
 *   node --import tsx bench/log-lines.ts > /dev/null
 */
const LINES = 300_000;
const request = {
  method: 'GET',
  url: '/api/v1/bundles/scene/123',
  host: '127.0.0.1:8080',
  ip: '127.0.0.1',
  socket: { remotePort: 51234 },
};
const reply = { statusCode: 200 };

function nsPerLine(stream: { write(line: string): unknown }): number {
  const { stream: _ignored, ...options } = loggerOptions('info', stream);
  const log = pino(options, stream);
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < LINES; i++) {
      // as Fastify does: a child logger per request, then one line when it is answered
      log
        .child({ reqId: `req-${i}` })
        .info({ req: request, res: reply, responseTime: 0.53 }, 'request completed');
    }
    best = Math.min(best, Number(process.hrtime.bigint() - start) / LINES);
  }
  return best;
}

const server = loggerOptions('info').stream;
const variants: [string, { write(line: string): unknown }][] = [
  ['the server (lines joined once per 8 kB batch)', server],
  ["sonic-boom's own batching (minLength 8192)", pino.destination({ dest: 1, minLength: 8192, sync: false })],
  ['discarded (the logger alone)', { write: () => undefined }],
];
for (const [name, stream] of variants)
  console.error(`${nsPerLine(stream).toFixed(0).padStart(6)} ns a line  ${name}`);
