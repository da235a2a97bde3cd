import { createServer } from 'node:net';
import { UserError } from '../errors.js';

/** The one line a user needs when the port is taken: which, and how to pick another. */
export const portTaken = (host: string, port: number) =>
  new UserError(
    `port ${port} on ${host} is already in use (another prodgraph?); stop it, or pick another port with --port N or PORT=N`,
    'conflict',
  );

/**
 * Refuses before anything is written when the port the server will listen on is taken, so
 * `npm start` never mints demo keys for a server that cannot start.
 */
export function assertPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? portTaken(host, port) : err),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
