import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/*
 * Answering a request whose body is still arriving, and then closing the connection. Closing
 * outright while the client is still sending makes the kernel answer its next bytes with a
 * reset, which can reach the client before it has read the answer (it sees ECONNRESET instead
 * of the 413 or 507). So the connection is closed the way a careful server closes it: the
 * answer, then `end()` (a FIN after the answer), then, for a moment, whatever still arrives is
 * read and dropped, until the client hangs up, LINGER_MS pass or LINGER_BYTES have been dropped,
 * whichever comes first; only then is the socket destroyed. A client that reads the answer
 * while it sends (curl, browsers, Node's http) stops within a round trip; one that never reads
 * it is cut after the bound.
 */

/** How long a closing connection's late bytes are read and dropped. */
export const LINGER_MS = 2000;
/** How many late bytes are read and dropped at most before the socket is destroyed. */
export const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * Closes `socket` once the answer is written (Node calls `destroySoon` then, for an answer
 * with `Connection: close`), lingering as described above instead of destroying it at once.
 */
export function closeGently(socket: Socket, request: IncomingMessage): void {
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.writable) this.end();
    let dropped = 0;
    const stop = () => {
      clearTimeout(timer);
      this.destroy();
    };
    // kept referenced: a socket that is not reading keeps no process alive, and a close of the
    // server waits for this one
    const timer = setTimeout(stop, LINGER_MS);
    this.once('end', stop);
    this.once('close', () => clearTimeout(timer));
    this.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER_BYTES) stop();
    });
    // reading again, whatever paused it (a body nobody read fills its buffer and stops the
    // socket): the client's end is only seen by reading up to it
    this.resume();
    // the body's readers are done with it: what the HTTP parser still hands on is dropped
    request.unpipe();
    request.removeAllListeners('data');
    request.resume();
  };
}
