import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { NOT_KEPT } from '../../http/reference-headers.js';
import { errorResponses } from '../../http/schemas.js';
import { errors } from '../../errors.js';
import { jsonParser } from '../../http/json-body.js';
import { lookBrief } from './brief-service.js';
import { LookBrief, LookParams, SessionToken, sessionTokenRequest } from './schemas.js';
import { HttpTokenProvider, type ProviderFailure } from './token-provider.js';
import { mintSessionToken } from './token-service.js';

const read = { scopes: ['read'], surface: 'production' } as const;

export async function visionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { vision } = app.ctx.config;
  const log = app.log.child({ module: 'vision' });
  const provider = vision.provider
    ? new HttpTokenProvider(vision.provider, {
        timeoutMs: vision.timeoutMs,
        // reason and status only: the provider's body and the credential never reach a log
        onFailure: (f: ProviderFailure) =>
          log.warn(
            { provider: vision.provider?.name, reason: f.reason, status: f.status, code: f.networkCode },
            'vision provider could not mint a session token',
          ),
      })
    : null;

  // Both bodies are optional here: `Content-Type: application/json` with nothing after it is
  // "no body", as browsers and curl send it, not a malformed document.
  const json = jsonParser(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    json(request, text, (err, value) => {
      // a literal `null` is a body, and not an object; only nothing at all means "no body"
      if (!err && value === null) return done(errors.invalid('body', 'must be an object'), undefined);
      done(err, value);
    });
  });

  const [first, second] = vision.models;
  app.post(
    '/vision/session-token',
    {
      config: {
        auth: read,
        responseHeaders: NOT_KEPT(200),
        rateLimit: {
          max: vision.mintsPerMinute,
          timeWindow: 60_000,
          // after auth and validation: the principal is known, and a refused request costs nothing
          hook: 'preHandler',
          keyGenerator: (request) => `vision-session-token:${principalOf(request).keyId}`,
          errorResponseBuilder: (_request, context) => {
            const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
            return errors.tooManyRequests(
              `this key may mint at most ${context.max} vision session tokens a minute; retry in ${seconds} s`,
              seconds,
            );
          },
        },
      },
      // no body at all is a request for the default model, not a body that is not an object
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
      schema: {
        operationId: 'createVisionSessionToken',
        summary: 'Mint a short-lived client token for the generation provider',
        description:
          "Exchanges the production's server-held provider credential for a short-lived client token " +
          `limited to one model, so a browser or on-set tool can call the provider directly. \`model\` is ` +
          `\`${first}\` (the default, also when there is no body) or \`${second}\`; anything else is 422. ` +
          'The answer is never cached (`Cache-Control: no-store`). Each mint appends an activity entry ' +
          `naming the key and the model. At most ${vision.mintsPerMinute} mints a minute per key ` +
          '(`PRODGRAPH_VISION_MINTS_PER_MINUTE`, shown in `RateLimit-Limit`/`-Remaining`/`-Reset`, shared by every process on PostgreSQL); ' +
          'beyond that 429 with `Retry-After` (seconds). ' +
          '503 when no provider is configured; 502 when the provider is unreachable, does not answer ' +
          `within ${vision.timeoutMs} ms, refuses, or answers something that is not a token (the ` +
          "provider's own answer is never passed on).",
        tags: ['vision'],
        body: sessionTokenRequest(vision.models),
        response: { 200: SessionToken, ...errorResponses(400, 422, 429, 502, 503) },
      },
    },
    async (request, reply) => {
      const token = await mintSessionToken(app.ctx, principalOf(request), provider, request.body?.model);
      reply.header('cache-control', 'no-store');
      return token;
    },
  );

  app.post(
    '/vision/looks/:version_id/brief',
    {
      config: { auth: read },
      schema: {
        operationId: 'createLookBrief',
        summary: 'Look brief of a released still',
        description:
          "A structured look brief distilled from the pixels of a released version's still: size, a " +
          'palette of up to 8 named colours with their shares, exposure (mean luma, key, contrast, clipped ' +
          'and crushed fractions), colour (saturation, warmth, dominant hue) and a one-sentence summary. ' +
          'Deterministic and computed here (no provider, no network); stored per version and source ' +
          "file, and served from the store until the version's media changes. No request body. An " +
          "unknown version, another production's, or one not released: 404, alike. A released version " +
          'without media, or whose media is not a still image (video, animated, undecodable) or would take ' +
          'more memory to decode than one decode may (PRODGRAPH_MAX_DECODE_MB: a large progressive JPEG, ' +
          'WebP or AVIF, which cannot be shrunk while decoding): 422 naming why. Two decodes run at once per ' +
          'process; up to 16 requests wait their turn, more are refused with 503 and `Retry-After`.',
        tags: ['vision'],
        params: LookParams,
        response: { 200: LookBrief, ...errorResponses(404, 422) },
      },
    },
    async (request) => lookBrief(app.ctx, principalOf(request), request.params.version_id),
  );
}
