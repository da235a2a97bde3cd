import { connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

/** One answer read off a connection (an interim `100 Continue` is one too, with no body). */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const FILLER = Buffer.alloc(64 * 1024, 0x5a);

/**
 * One HTTP/1.1 connection driven by hand, as a test needs it when what matters is the
 * connection itself: what the server reads of a body, whether an answer arrives while the body
 * is still being sent, whether the connection is kept, closed (a FIN) or reset afterwards.
 */
export class RawConnection {
  private buffered = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  /** How the connection ended: still open, closed by the server (FIN) or reset (an error). */
  ended: 'open' | 'end' | 'reset' = 'open';
  /** Bytes written so far. */
  sent = 0;
  readonly closed: Promise<void>;
  /** This end's port (the server's `remotePort` for this connection). */
  readonly localPort: number;

  private constructor(readonly socket: Socket) {
    this.localPort = socket.localPort!;
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.notify();
    });
    socket.on('end', () => {
      if (this.ended === 'open') this.ended = 'end';
      this.notify();
    });
    socket.on('error', () => {
      if (this.ended === 'open') this.ended = 'reset';
      this.notify();
    });
    // `once` rejects on an 'error' before 'close': a reset is noted above, not thrown
    this.closed = once(socket, 'close').then(
      () => this.notify(),
      () => this.notify(),
    );
  }

  static async open(port: number): Promise<RawConnection> {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Whether the server has started to answer. */
  get answering(): boolean {
    return this.buffered.length > 0;
  }

  write(data: Buffer | string): boolean {
    if (this.socket.destroyed || !this.socket.writable) return false;
    this.sent += Buffer.byteLength(data);
    return this.socket.write(data);
  }

  /**
   * Sends `total` bytes of filler as fast as the server takes them (framed as chunks when
   * `chunked`), stopping early when an answer starts arriving or the connection ends, as a
   * client that reads while it sends does. Resolves with the bytes of filler sent.
   */
  async stream(total: number, chunked = false): Promise<number> {
    let left = total;
    while (left > 0 && !this.answering && this.ended === 'open' && this.socket.writable) {
      const piece = FILLER.subarray(0, Math.min(left, FILLER.length));
      left -= piece.length;
      const ok = chunked
        ? [this.write(`${piece.length.toString(16)}\r\n`), this.write(piece), this.write('\r\n')].every(
            Boolean,
          )
        : this.write(piece);
      if (!ok && this.socket.writable) {
        // a reset while sending ends the loop below (this.ended), not the test
        await Promise.race([
          once(this.socket, 'drain').catch(() => undefined),
          this.closed,
          this.untilData(),
        ]);
      }
    }
    return total - left;
  }

  private untilData(): Promise<void> {
    return new Promise((resolve) => {
      const before = this.buffered.length;
      const check = () => {
        if (this.buffered.length > before || this.ended !== 'open') resolve();
        else this.wake = check;
      };
      this.wake = check;
    });
  }

  /** The next answer; rejects when the connection ends before one arrives, or after `timeoutMs`. */
  async answer(timeoutMs = 10_000): Promise<RawAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.ended !== 'open' || this.socket.destroyed)
        throw new Error(`the connection ended (${this.ended}) before an answer arrived`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no answer within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Waits (at most `timeoutMs`) for the connection to close; how it ended. */
  async closedWithin(timeoutMs = 5000): Promise<RawConnection['ended']> {
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<'gave up'>(
      (resolve) => (timer = setTimeout(() => resolve('gave up'), timeoutMs)),
    );
    const outcome = await Promise.race([this.closed, gaveUp]);
    clearTimeout(timer);
    if (outcome === 'gave up') throw new Error(`the connection was still open after ${timeoutMs} ms`);
    return this.ended;
  }

  private parse(): RawAnswer | null {
    const end = this.buffered.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const [statusLine = '', ...lines] = this.buffered.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = status < 200 ? 0 : Number(headers['content-length'] ?? NaN);
    if (Number.isNaN(length)) throw new Error(`an answer without Content-Length: ${statusLine}`);
    if (this.buffered.length < end + 4 + length) return null;
    const body = this.buffered.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffered = this.buffered.subarray(end + 4 + length);
    return { status, headers, body };
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** The server side of every connection a server accepts, to read what it read off each. */
export function serverSockets(server: Server): { of(client: RawConnection): Socket } {
  const sockets = new Map<number, Socket>();
  server.on('connection', (s: Socket) => sockets.set(s.remotePort!, s));
  return {
    of(client) {
      const s = sockets.get(client.localPort);
      if (!s) throw new Error('the server never saw this connection');
      return s;
    },
  };
}

/** A request's head, as a client writes it. */
export function head(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `${method} ${path} HTTP/1.1\r\nHost: test\r\n${lines.join('')}\r\n`;
}
