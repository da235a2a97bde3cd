import { isIP } from 'node:net';
import ipaddr, { type IPv4, type IPv6 } from 'ipaddr.js';
import type { Cidr } from '../../config-network.js';

/*
 * The addresses a webhook may be delivered to, read and ranged by ipaddr.js. `range()` names
 * the well-known ranges; where a verdict's range is not one of them exactly (ipaddr.js's
 * `reserved` also holds the documentation ranges, which are reached), it is a CIDR.
 */

export type Address = IPv4 | IPv6;
export type Range = [Address, number];

/** Never reached, whatever the allow-list (cloud metadata at 169.254.169.254 is link-local). */
const NEVER_RANGES: ReadonlySet<string> = new Set(['unspecified', 'broadcast', 'multicast', 'linkLocal']);
const NEVER_CIDRS = cidrs('240.0.0.0/4', '100.100.100.200/32', 'fd00:ec2::254/128');

/** Reached only when allowed. NAT64, 6to4 and Teredo carry an IPv4 address, judged as well. */
const INTERNAL_RANGES: ReadonlySet<string> = new Set([
  'loopback',
  'private',
  'carrierGradeNat',
  'uniqueLocal',
  '6to4',
  'teredo',
]);
const INTERNAL_CIDRS = cidrs('192.0.0.0/24', '198.18.0.0/15', '64:ff9b::/96');

/** NAT64's well-known prefix (ipaddr.js's rfc6052 also holds 64:ff9b:1::/48, not judged as carrying one). */
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
const COMPATIBLE = ipaddr.parseCIDR('::/96');

function cidrs(...texts: string[]): Range[] {
  return texts.map((t) => ipaddr.parseCIDR(t));
}

/**
 * An address as written. The zone (`%eth0`) names an interface, not an address. ipaddr.js
 * reads `::a.b.c.d` as `::ffff:a.b.c.d`, which would make `::0.0.0.1` (that is `::1`)
 * 0.0.0.1; `0::a.b.c.d` is the same address and read as written.
 */
function read(text: string): Address {
  return ipaddr.parse(text.replace(/%.*$/, '').replace(/^::(?=\d+\.)/, '0::'));
}

/**
 * The address `text` names, an IPv4-mapped one (`::ffff:10.0.0.1`) as its IPv4 address; null
 * when it is none. Node's isIP decides: ipaddr.js would also take `127.1` or `0x7f.0.0.1`.
 */
export function parseAddress(text: string): Address | null {
  if (isIP(text) === 0) return null;
  const ip = read(text);
  return ip instanceof ipaddr.IPv6 && ip.isIPv4MappedAddress() ? ip.toIPv4Address() : ip;
}

/** An allow-list entry as a range. */
export function rangeOf(cidr: Cidr): Range {
  return [read(cidr.address), cidr.prefix];
}

/**
 * An IPv4 address is in an IPv6 range when its IPv4-mapped form is, as Node's BlockList had it
 * (an IPv4-mapped address was read as an IPv4 one, so no IPv6 address is in an IPv4 range).
 */
export function inRange(ip: Address, [net, bits]: Range): boolean {
  if (ip.kind() === net.kind()) return ip.match(net, bits);
  return ip instanceof ipaddr.IPv4 && ip.toIPv4MappedAddress().match(net, bits);
}

export function isNever(ip: Address): boolean {
  return NEVER_RANGES.has(ip.range()) || NEVER_CIDRS.some((r) => inRange(ip, r));
}

export function isInternal(ip: Address): boolean {
  return INTERNAL_RANGES.has(ip.range()) || INTERNAL_CIDRS.some((r) => inRange(ip, r));
}

/**
 * The IPv4 address an IPv6 address carries, or null: IPv4-mapped (`::ffff:a.b.c.d`),
 * IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, but not `::` or `::1`),
 * NAT64 (`64:ff9b::/96`), 6to4 (`2002:AABB:CCDD::/48`) and Teredo (`2001:0::/32`, the client's
 * address inverted in the last 32 bits). Otherwise `[::169.254.169.254]` would name the
 * metadata service under a form the IPv4 ranges do not hold.
 */
export function carriedIpv4(ip: Address): IPv4 | null {
  if (!(ip instanceof ipaddr.IPv6)) return null;
  const bytes = ip.toByteArray();
  const ipv4 = (at: number, invert = 0) => new ipaddr.IPv4(bytes.slice(at, at + 4).map((b) => b ^ invert));
  const range = ip.range();
  if (range === '6to4') return ipv4(2);
  if (range === 'teredo') return ipv4(12, 0xff);
  if (range === 'ipv4Mapped' || range === 'rfc6145' || ip.match(NAT64)) return ipv4(12);
  if (ip.match(COMPATIBLE) && range !== 'unspecified' && range !== 'loopback') return ipv4(12);
  return null;
}
