import { isIPv6 } from 'node:net';

/*
 * IPv6 addresses that carry an IPv4 address. A webhook's address is judged as the IPv4 address
 * it carries as well as itself: otherwise `[::169.254.169.254]` (IPv4-compatible) or
 * `[64:ff9b::169.254.169.254]` (NAT64) would name the metadata service under a form the
 * IPv4 ranges do not hold.
 */

/** The 16 bytes of an IPv6 address in any spelling (`::`, a dotted IPv4 tail, a zone). */
function bytesOf(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  // the dotted tail stands for the last two groups; its bytes replace them below
  if (dotted) text = `${text.slice(0, dotted.index)}0:0`;
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const [head, rest] = text.split('::') as [string, string | undefined];
  const before = groups(head);
  const after = rest === undefined ? [] : groups(rest);
  const words =
    rest === undefined
      ? before
      : [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  const bytes = words.flatMap((w: number) => [w >> 8, w & 0xff]);
  if (dotted) bytes.splice(12, 4, ...dotted.slice(1).map(Number));
  return bytes;
}

/**
 * The IPv4 address an IPv6 address carries, or null: IPv4-mapped (`::ffff:a.b.c.d`),
 * IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, but not `::` or `::1`),
 * NAT64 (`64:ff9b::/96`), 6to4 (`2002:AABB:CCDD::/48`) and Teredo (`2001:0::/32`, the client's
 * address inverted in the last 32 bits).
 */
export function embeddedIpv4(address: string): string | null {
  if (!isIPv6(address)) return null;
  const b = bytesOf(address);
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const ipv4 = (at: number, invert = 0) =>
    b
      .slice(at, at + 4)
      .map((x) => x ^ invert)
      .join('.');
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return ipv4(12);
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return ipv4(12);
  if (zero(0, 12) && (!zero(12, 15) || b[15]! > 1)) return ipv4(12);
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return ipv4(12);
  if (b[0] === 0x20 && b[1] === 0x02) return ipv4(2);
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return ipv4(12, 0xff);
  return null;
}
