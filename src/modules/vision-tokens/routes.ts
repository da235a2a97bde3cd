import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { routesOf } from '../../http/define-route.js';
import { installOptionalJsonParser } from '../../http/json-body.js';
import { NOT_CACHED } from '../../http/reference-headers.js';
import { errorResponses } from '../../http/schemas.js';
import { errors } from '../../errors.js';
import { HttpTokenProvider, type ProviderFailure } from './provider.js';
import { SessionToken, sessionTokenRequest } from './schemas.js';
import { mintSessionToken } from './service.js';

const read = { scopes: ['read'], surface: 'production' } as const;

export async function visionTokenRoutes(fastify: FastifyInstance): Promise<void> {
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

  // the body is optional: no body at all asks for the default model
  installOptionalJsonParser(app);

  const [first, second] = vision.models;
  routesOf(app).post(
    '/vision/session-token',
    {
      config: {
        auth: read,
        responseHeaders: NOT_CACHED(200),
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
}
