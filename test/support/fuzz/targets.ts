import fc from 'fast-check';

/*
 * Webhook targets a hostile admin subscribes: the cloud metadata service and other addresses
 * webhooks never reach, in every spelling a URL parser accepts, and loopback in as many
 * (reached only when PRODGRAPH_WEBHOOK_ALLOW lists it).
 */

/** Hosts never reached: refused with 422 when subscribed, whatever the allow-list. */
export const NEVER_HOSTS = [
  '169.254.169.254',
  '2852039166', // decimal
  '0xa9fea9fe', // hexadecimal
  '0251.0376.0251.0376', // octal
  '169.254.43518', // a.b.c
  '169.16689662', // a.b
  '169.254.169.254.', // a trailing dot
  '[::ffff:169.254.169.254]',
  '[::ffff:a9fe:a9fe]',
  '[0:0:0:0:0:ffff:169.254.169.254]',
  '[::169.254.169.254]', // IPv4-compatible
  '[::ffff:0:169.254.169.254]', // IPv4-translated
  '[64:ff9b::169.254.169.254]', // NAT64
  '[2002:a9fe:a9fe::]', // 6to4
  '[2001:0:4136:e378:8000:63bf:5601:5601]', // Teredo (the client's address inverted)
  '[::FFFF:A9FE:A9FE]',
  '[fd00:ec2::254]',
  '[fe80::1]',
  '169.254.0.1',
  '100.100.100.200',
  '0.0.0.0',
  '0',
  '[::]',
  '224.0.0.1',
];

/** Loopback, by address and by name: subscribed, never reached unless allowed. */
export const LOOPBACK_HOSTS = [
  '127.0.0.1',
  'localhost',
  'LocalHost',
  '[::1]',
  '2130706433',
  '0177.0.0.1',
  '0x7f000001',
  '127.1',
  '127.254.0.1',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
];

const PATHS = ['/', '/hook', '/latest/meta-data/iam/', '/computeMetadata/v1/?recursive=true', '/x#frag'];

export interface Target {
  url: string;
  /** A host webhooks never reach (refused when subscribed). */
  never: boolean;
}

/** A URL at one of those hosts: http or https, the receiver's port or another, any path. */
export function webhookTarget(receiverPort: number): fc.Arbitrary<Target> {
  const host = fc.oneof(
    fc.constantFrom(...NEVER_HOSTS).map((h) => ({ host: h, never: true })),
    fc.constantFrom(...LOOPBACK_HOSTS).map((h) => ({ host: h, never: false })),
  );
  const port = fc.constantFrom('', `:${receiverPort}`, ':80', ':22', ':5432', ':6379');
  return fc
    .tuple(fc.constantFrom('http', 'https', 'HTTP'), host, port, fc.constantFrom(...PATHS))
    .map(([scheme, h, p, path]) => ({ url: `${scheme}://${h.host}${p}${path}`, never: h.never }));
}

/** A few of them as plain values, for the `url` field wherever the fuzz fills one in. */
export function plausibleTargets(receiverPort: number): string[] {
  return [
    ...['169.254.169.254', '[::ffff:169.254.169.254]', '2852039166', '[::169.254.169.254]'].map(
      (h) => `http://${h}/latest/meta-data/`,
    ),
    ...['127.0.0.1', 'localhost', '[::1]', '0177.0.0.1'].map((h) => `http://${h}:${receiverPort}/hook`),
    'https://hooks.example.test/prodgraph',
  ];
}
