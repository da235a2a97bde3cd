import { BlockList, isIP } from 'node:net';

/*
 * The network settings of the configuration (read with the rest by loadConfig): which
 * proxies' forwarded-for headers are believed, and which private addresses webhooks may reach.
 */

export class NetworkConfigError extends Error {}

/** One address range: an IP and its prefix length (a bare IP is the range of itself). */
export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `10.0.0.0/8`, `127.0.0.1`, `fd00::/8`; anything else is null. */
export function parseCidr(text: string): Cidr | null {
  const [address = '', bits, extra] = text.trim().split('/');
  if (extra !== undefined) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return null;
  const prefix = bits === undefined ? max : Number(bits);
  if (prefix > max) return null;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A comma-separated list of ranges, as a set an address can be checked against. */
export function parseCidrList(name: string, raw: string | undefined): { ranges: Cidr[]; list: BlockList } {
  const list = new BlockList();
  const ranges: Cidr[] = [];
  for (const part of (raw ?? '').split(',')) {
    if (part.trim() === '') continue;
    const cidr = parseCidr(part);
    if (!cidr) {
      throw new NetworkConfigError(
        `${name}: "${part.trim()}" is not an address range (like 10.0.0.0/8, 127.0.0.1/32 or fd00::/8)`,
      );
    }
    list.addSubnet(cidr.address, cidr.prefix, cidr.family);
    ranges.push(cidr);
  }
  return { ranges, list };
}

/** The names proxy-addr (Fastify's trustProxy) knows for well-known ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * PRODGRAPH_TRUST_PROXY, as Fastify's `trustProxy`: unset or `false` believes no
 * X-Forwarded-For (the client is the peer of the socket); a list of addresses, ranges or the
 * names `loopback`, `linklocal`, `uniquelocal` believes the proxies at those addresses; `true`
 * believes any (only when nothing but the proxy can reach the server).
 */
export function parseTrustProxy(raw: string | undefined): boolean | string[] {
  const text = raw?.trim() ?? '';
  if (text === '' || text === 'false') return false;
  if (text === 'true') return true;
  const entries = text.split(',').map((e) => e.trim());
  for (const e of entries) {
    if (!PROXY_RANGE_NAMES.has(e) && !parseCidr(e)) {
      throw new NetworkConfigError(
        `PRODGRAPH_TRUST_PROXY: "${e}" is not an address, a range (10.0.0.0/8) or one of loopback, linklocal, uniquelocal`,
      );
    }
  }
  return entries;
}
