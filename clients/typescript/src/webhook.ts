/*
 * Webhook deliveries carry `Prodgraph-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
 * `<t>.<raw body>` with the subscription's secret. Checked with Web Crypto alone, so the same
 * code runs in Node 20+, browsers, Deno, Bun and edge workers.
 */

export interface VerifyOptions {
  /** How far the signature's time may be from now, in seconds (default 300): older is a replay. */
  toleranceSeconds?: number;
  /** The time to judge against, in milliseconds (default: now). */
  now?: number;
}

const encoder = new TextEncoder();

function hexBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-f]+$/i.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function bytesOf(body: string | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
}

/**
 * Whether a delivery is genuine: the header's signature matches the raw body (exactly the bytes
 * received, before any JSON parsing) and its time is within the tolerance. The comparison is
 * Web Crypto's own HMAC verification, not a string compare.
 */
export async function verifyWebhook(
  secret: string,
  header: string | null | undefined,
  body: string | ArrayBuffer | ArrayBufferView,
  options: VerifyOptions = {},
): Promise<boolean> {
  if (!header) return false;
  const fields = header.split(',').map((p) => p.trim().split('=', 2) as [string, string?]);
  const t = fields.find(([k]) => k === 't')?.[1];
  if (t === undefined || !/^\d+$/.test(t)) return false;
  const now = options.now ?? Date.now();
  if (Math.abs(now / 1000 - Number(t)) > (options.toleranceSeconds ?? 300)) return false;
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  const raw = bytesOf(body);
  const signed = new Uint8Array(encoder.encode(`${t}.`).length + raw.length);
  signed.set(encoder.encode(`${t}.`));
  signed.set(raw, signed.length - raw.length);
  for (const [k, v] of fields) {
    const given = k === 'v1' && v ? hexBytes(v) : null;
    if (given && (await crypto.subtle.verify('HMAC', key, given, signed))) return true;
  }
  return false;
}
