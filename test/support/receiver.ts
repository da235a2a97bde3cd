import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: {
    webhook_id: number;
    production: string;
    change: { cursor: string; kind: string; id: number; op: string };
  };
  at: number;
  /** The sender's end of the connection (which process sent it: see pidOwningPort). */
  remotePort: number;
}

/** A real HTTP receiver on a local port; `answer` decides each response (status, or a delay first). */
export class Receiver {
  readonly got: Received[] = [];
  answer: (r: Received) => Promise<number> | number = () => 200;
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const r: Received = {
          headers: req.headers,
          body,
          json: JSON.parse(body),
          at: Date.now(),
          remotePort: req.socket.remotePort ?? 0,
        };
        this.got.push(r);
        void Promise.resolve(this.answer(r)).then((status) => {
          if (!res.destroyed) res.writeHead(status).end();
        });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** What arrived, as `kind:id`, in arrival order. */
  lines(): string[] {
    return this.got.map((r) => `${r.json.change.kind}:${r.json.change.id}`);
  }
}

// generous: it only waits as long as the condition takes, and a loaded CI machine is slow
export async function until(
  what: string,
  test: () => boolean | Promise<boolean>,
  ms = 20_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
