import { round, serve, stage, underWatch, type Served } from './setup.js';

/*
 * What one deeply nested JSON body costs the server: 32 MB of `[[[[…]]]]` to POST /mcp with a
 * read-only vendor key, and 19 MiB (its body limit) to POST /api/v1/storage/events with a storage
 * agent's key (and with the vendor key, refused at the door before the body is read). The control, in the same run on the same server: a
 * 32 MB body of the same size that is flat (one long string), so the cost of reading 32 MB is
 * not counted as the nesting's. Reports the answer's status and time, the longest /healthz
 * answer while it ran (how long the event loop was held) and the server's RSS.
 *
 *   node --import tsx bench/hostile/nested-json.ts [port]     (port: default 8401)
 */

const SIZE = 32 * 1024 * 1024;
const nestedOf = (bytes: number) => '['.repeat(bytes / 2) + ']'.repeat(bytes / 2);
const nested = nestedOf(SIZE);
/** Storage events take at most 2 KiB per allowed event (10,000): a body just under that. */
const nestedEvents = nestedOf(19 * 1024 * 1024);
const flat = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'ping',
  params: { pad: 'x'.repeat(SIZE - 80) },
});

async function send(served: Served, path: string, key: string, body: string) {
  const r = await fetch(`${served.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body,
  });
  const text = await r.text();
  return { status: r.status, body: text.slice(0, 160) };
}

async function sendSafely(served: Served, path: string, key: string, body: string) {
  try {
    return await send(served, path, key, body);
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? String(err);
    return {
      status: 0,
      body: `no answer: ${cause}; server ${served.child.exitCode === null ? 'alive' : `exited ${served.child.exitCode}`}`,
    };
  }
}

async function main() {
  const port = Number(process.argv[2] ?? 8401);
  const s = await stage();
  const served = await serve(s, port);
  const cases = [
    { name: 'control: 32 MB flat body, POST /mcp (vendor)', path: '/mcp', key: s.vendorKey, body: flat },
    { name: '32 MB nested, POST /mcp (vendor, read only)', path: '/mcp', key: s.vendorKey, body: nested },
    {
      name: '19 MiB nested, POST /storage/events (storage agent)',
      path: '/api/v1/storage/events',
      key: s.wideKey,
      body: nestedEvents,
    },
    {
      name: '19 MiB nested, POST /storage/events (vendor: refused at the door)',
      path: '/api/v1/storage/events',
      key: s.vendorKey,
      body: nestedEvents,
    },
    { name: '32 MB nested, POST /mcp again (vendor)', path: '/mcp', key: s.vendorKey, body: nested },
  ];
  try {
    // warm: the MCP SDK loads on the first call
    await send(served, '/mcp', s.vendorKey, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }));
    console.log(`server RSS at rest: ${round(await served.rssMb())} MiB`);
    for (const c of cases) {
      const before = await served.rssMb();
      const m = await underWatch(served, () => sendSafely(served, c.path, c.key, c.body));
      const after = await served.rssMb();
      console.log(
        `${c.name}: ${m.result.status} in ${round(m.ms)} ms; longest /healthz ${round(m.longestProbeMs)} ms (${m.failedProbes} failed); ` +
          `RSS ${round(before)} → peak ${round(m.peakRssMb)} (+${round(m.peakRssMb - before)}) → ${round(after)} MiB after` +
          `\n    ${m.result.body.replace(/\s+/g, ' ')}`,
      );
    }
  } finally {
    await served.stop();
  }
}

await main();
