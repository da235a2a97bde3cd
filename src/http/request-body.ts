import type { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { errors, type AppError } from '../errors.js';
import { closeGently } from './lingering-close.js';

/*
 * What is read of a request's body, and what happens to the part that is not.
 *
 * - An upload route declares `config.upload = { maxBytes }`: the most bytes its whole body may
 *   carry (every file, field and the form's framing). A body declared larger (Content-Length)
 *   is refused with 413 before a byte of it is read. A chunked form is counted as it arrives
 *   and refused the moment it passes the limit (busboy, its reader, fails with the 413, so the
 *   files staged so far are discarded and nothing more is staged); a JSON body is stopped at the
 *   route's body limit by Fastify's parser, which is `maxBytes` unless the route sets less.
 * - A client that asks `Expect: 100-continue` is told to send its body only when something
 *   starts reading it, so a refusal before that (401, 403, 404, 413, 415) costs it nothing.
 * - An answer that goes out while the body is still arriving (any refusal of an upload, a 507
 *   from a full disk) settles the rest of the body so the connection stays usable: a small one
 *   (declared, at most DRAIN_BYTES) is read and dropped and the connection kept alive; anything
 *   else is answered with `Connection: close` and the connection closed gently
 *   (closeGently), so the client reads the answer rather than a reset, and its
 *   next request goes out on a new connection instead of dying on this one.
 */

/** What an upload route declares in its `config`. */
export interface UploadRule {
  /** The most bytes the whole request body may carry. */
  maxBytes: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An upload route: how large its body may be (requestBody). */
    upload?: UploadRule;
  }
}

const MULTIPART = 'multipart/form-data';

/** The rest of a body up to this size is read and dropped to keep the connection; beyond it, it is closed. */
export const DRAIN_BYTES = 1024 * 1024;

const heldContinue = Symbol('prodgraph.heldContinue');
type HeldRequest = IncomingMessage & { [heldContinue]?: boolean };

/** The body's length as declared, or null for a chunked body (or none declared). */
function declaredLength(request: FastifyRequest): number | null {
  const raw = request.headers['content-length'];
  if (raw === undefined || request.headers['transfer-encoding'] !== undefined) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

const tooLarge = (maxBytes: number, declared?: number): AppError =>
  errors.tooLarge(
    declared === undefined
      ? `the request body is larger than this endpoint takes (at most ${maxBytes} bytes); reading stopped at the limit and nothing was stored`
      : `the request body (${declared} bytes, as its Content-Length declares) is larger than this endpoint takes (at most ${maxBytes} bytes); nothing of it was read`,
  );

/**
 * Counts a chunked form as it is read and fails it at the limit: its reader (busboy, piped by
 * @fastify/multipart, which listens for the body's errors) gets the 413 and stops; no more is read.
 */
function meterBody(raw: IncomingMessage, maxBytes: number): void {
  let seen = 0;
  const meter = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen <= maxBytes) return;
    raw.removeListener('data', meter);
    raw.unpipe();
    raw.pause();
    const err = tooLarge(maxBytes);
    // a body nobody listens to for errors is not being read by a form reader: cut it off
    if (raw.listenerCount('error') > 0) raw.emit('error', err);
    else raw.destroy(err);
  };
  // paused first: listening must not start the body flowing before its reader asks for it
  raw.pause();
  raw.on('data', meter);
}

/**
 * `Expect: 100-continue`: the 100 goes out when the body is first read (the stream's `_read`),
 * not before the request is routed and authorised as Node would otherwise send it.
 */
function continueWhenRead(req: HeldRequest, res: ServerResponse): void {
  req[heldContinue] = true;
  const read = req._read.bind(req);
  req._read = (size: number) => {
    if (req[heldContinue]) {
      req[heldContinue] = false;
      if (!res.headersSent && !res.writableEnded) res.writeContinue();
    }
    read(size);
  };
}

/** Drops the rest of a body on a kept connection (as Node does for a body nobody read). */
function drain(raw: IncomingMessage): void {
  raw.unpipe();
  raw.removeAllListeners('data');
  raw.resume();
}

/** When an answer goes out: what becomes of the body not yet read (see the top of this file). */
function settleBody(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw as HeldRequest;
  // app.inject: no connection to keep or close
  if (!(raw.socket instanceof Socket) || raw.readableEnded) return;
  if (raw.complete) return drain(raw);
  const declared = declaredLength(request);
  if (!raw[heldContinue] && declared !== null && declared <= DRAIN_BYTES) return drain(raw);
  reply.header('connection', 'close');
  closeGently(raw.socket, raw);
}

async function requestBodyPlugin(app: FastifyInstance) {
  // after the request rules (415 for the wrong type comes first), before anything reads the body
  app.addHook('preParsing', async (request) => {
    const rule = request.routeOptions.config.upload;
    if (rule === undefined) return;
    const declared = declaredLength(request);
    if (declared !== null && declared > rule.maxBytes) throw tooLarge(rule.maxBytes, declared);
    // Fastify's own body parsers stop a chunked body at the route's body limit (maxBytes, set
    // above); a form is read by busboy outside them, so it is counted here
    if (declared === null && request.mediaType?.toLowerCase() === MULTIPART)
      meterBody(request.raw, rule.maxBytes);
  });
  app.addHook('onSend', async (request, reply) => settleBody(request, reply));
  // Node sends `100 Continue` itself unless someone listens for `checkContinue`
  app.server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    continueWhenRead(req, res);
    app.server.emit('request', req, res);
  });
}

export const requestBody = fp(requestBodyPlugin, {
  name: 'prodgraph-request-body',
  dependencies: ['prodgraph-request-rules'],
});
