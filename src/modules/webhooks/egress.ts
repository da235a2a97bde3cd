import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import type { Cidr } from '../../config-network.js';
import {
  carriedIpv4,
  inRange,
  isInternal,
  isNever,
  parseAddress,
  rangeOf,
  type Address,
  type Range,
} from './addresses.js';

/*
 * Where a webhook may be delivered. A subscription names a URL, and an admin key of any
 * production can make one: without a check, the server would post to its own loopback, the
 * private network around it or the cloud's metadata service, and the delivery log would tell
 * an open port from a closed one. So the address actually connected to (after DNS, for every
 * address a name resolves to, and again on the socket once connected) is judged:
 * - never: link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 among them),
 *   unspecified, multicast and reserved ranges, whatever the allow-list says;
 * - internal (loopback, private, shared and unique-local ranges): only when
 *   PRODGRAPH_WEBHOOK_ALLOW lists a range that holds it;
 * - an IPv6 address that carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is
 *   judged as that IPv4 address too, so no spelling of a metadata address gets through;
 * - anything else (the public internet): reached.
 */

export type Verdict = 'reach' | 'never' | 'internal';

export class Egress {
  private readonly allow: Range[];
  /** Connections are kept alive between deliveries (a busy receiver is not reconnected per change); each was judged when it connected. */
  private readonly agents: { http: HttpAgent; https: HttpsAgent };

  constructor(allow: readonly Cidr[]) {
    this.allow = allow.map(rangeOf);
    const options = { keepAlive: true, maxFreeSockets: 4, lookup: this.lookup as never };
    this.agents = { http: new HttpAgent(options), https: new HttpsAgent(options) };
  }

  /** Closes the kept connections (the worker is stopping). */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** An IPv6 address carrying an IPv4 one (NAT64, 6to4, …) is judged as both, the stricter verdict winning. */
  judge(address: string): Verdict {
    const ip = parseAddress(address);
    if (!ip) return 'never';
    const own = this.verdict(ip);
    const carried = carriedIpv4(ip);
    if (carried === null || own === 'never') return own;
    const inner = this.verdict(carried);
    return inner === 'reach' ? own : inner;
  }

  private verdict(ip: Address): Verdict {
    if (isNever(ip)) return 'never';
    if (isInternal(ip) && !this.allow.some((r) => inRange(ip, r))) return 'internal';
    return 'reach';
  }

  /**
   * A `lookup` for the connection: resolves as Node would, then keeps only addresses that may
   * be reached, so the socket can only ever connect to one of them.
   */
  private readonly lookup = (
    hostname: string,
    options: LookupAllOptions | number | undefined,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const opts = typeof options === 'number' ? { family: options } : (options ?? {});
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const reachable = addresses.filter((a) => this.judge(a.address) === 'reach');
      const [first] = reachable;
      if (!first) return callback(new RefusedAddress(), '');
      if ((opts as LookupAllOptions).all) return callback(null, reachable);
      callback(null, first.address, first.family);
    });
  };

  /**
   * POSTs `body` to `url` and answers the status code. Refuses (RefusedAddress) before
   * connecting when the host is an address that may not be reached, and destroys the socket if
   * it ever connects to one. Redirects are not followed. `signal` aborts it.
   */
  post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<number> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && this.judge(host) !== 'reach') return Promise.reject(new RefusedAddress());
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<number>((resolve, reject) => {
      const req = send(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal,
        agent: url.protocol === 'https:' ? this.agents.https : this.agents.http,
      });
      req.once('socket', (socket: Socket) => {
        const check = () => {
          const peer = socket.remoteAddress;
          if (!peer || this.judge(peer) !== 'reach') req.destroy(new RefusedAddress());
        };
        // a kept connection was judged when it connected; a new one is judged once it does
        if (socket.connecting) socket.once('connect', check);
        else check();
      });
      req.once('response', (res: IncomingMessage) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', () => resolve(res.statusCode ?? 0));
      });
      req.once('error', reject);
      req.end(body);
    });
  }
}

/** The receiver's address is one webhooks may not reach. */
export class RefusedAddress extends Error {
  constructor() {
    super('the address is not one webhooks may reach');
    this.name = 'RefusedAddress';
  }
}

/** A literal address in a subscription's URL that is never reached, refused when the subscription is made. */
export function neverReached(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 && new Egress([]).judge(host) === 'never';
}
