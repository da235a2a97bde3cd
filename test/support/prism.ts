import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import type { LightMyRequestResponse } from 'fastify';

/*
 * Stoplight Prism (`prism proxy`) between a test and a real server: every request goes through
 * it to the server, and Prism checks the request and the answer against the OpenAPI document
 * the server serves. With `--errors` a violation of the answer becomes Prism's own 500 problem
 * answer; every violation (of the request too) is also named in the `sl-violations` header and
 * logged, and both are collected here.
 */

const PRISM_CLI = createRequire(import.meta.url).resolve('@stoplight/prism-cli/dist/index.js');

export interface PrismProxy {
  /** Where Prism listens: send requests here instead of to the server. */
  url: string;
  /** Every violation Prism logged since it started (its `Violation: …` lines). */
  logged: string[];
  close(): Promise<void>;
}

/**
 * Starts `prism proxy <document> <upstream> --errors` on a free loopback port (the document a
 * file: Prism gives up fetching one over HTTP after 5 s). With
 * `validateRequest: false` a request the document does not describe is still forwarded (to see
 * how the server refuses it), and only the answer is checked.
 */
export async function startPrism(
  document: string,
  upstream: string,
  options: { validateRequest: boolean },
): Promise<PrismProxy> {
  const child = spawn(
    process.execPath,
    [
      PRISM_CLI,
      'proxy',
      document,
      upstream,
      '--errors',
      `--validate-request=${options.validateRequest}`,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--cors=false',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
  );
  const logged: string[] = [];
  const output: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const onLine = (line: string) => {
      output.push(line);
      if (/Violation:/.test(line)) logged.push(line.trim());
      const listening = /Prism is listening on (http:\/\/[^\s]+)/.exec(line);
      if (listening) resolve(listening[1]!);
    };
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    child.once('exit', (code) =>
      reject(new Error(`prism exited (${code}) before listening:\n${output.join('\n')}`)),
    );
  });
  return {
    url: url.replace(/\/$/, ''),
    logged,
    close: () => stop(child),
  };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** What `app.inject` takes, as far as the samples use it. */
interface InjectOptions {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
}

/**
 * An `app.inject` look-alike that sends the request over HTTP to `base` (Prism, here) and
 * answers what came back, so the same samples run in process or through a proxy.
 */
export function injectOver(base: string) {
  return (options: InjectOptions): Promise<LightMyRequestResponse> =>
    new Promise((resolve, reject) => {
      const body = options.payload === undefined ? undefined : Buffer.from(options.payload);
      const req = httpRequest(
        `${base}${options.url}`,
        {
          method: options.method ?? 'GET',
          headers: { ...options.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const rawPayload = Buffer.concat(chunks);
            const text = rawPayload.toString('utf8');
            resolve({
              statusCode: res.statusCode ?? 0,
              statusMessage: res.statusMessage ?? '',
              headers: res.headers,
              rawPayload,
              body: text,
              payload: text,
              json: () => JSON.parse(text),
            } as unknown as LightMyRequestResponse);
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

/** The violations Prism names in an answer's `sl-violations` header. */
export function violationsOf(res: LightMyRequestResponse): Array<{ location: string[]; message: string }> {
  const header = res.headers['sl-violations'];
  if (typeof header !== 'string') return [];
  return header.startsWith('Too many violations!')
    ? [{ location: [], message: header.slice(0, 500) }]
    : (JSON.parse(header) as Array<{ location: string[]; message: string }>);
}
