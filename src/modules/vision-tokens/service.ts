// No repository: a mint stores nothing of its own; its activity entry goes through the activity log's writer (appendActivity).
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/values.js';
import { errors } from '../../errors.js';
import { appendActivity } from '../../db/activity-log.js';
import { entryFor } from '../activity/write-entry.js';
import type { SessionToken } from './schemas.js';
import { ProviderFailure, type SessionTokenProvider } from './provider.js';

export const NO_PROVIDER =
  'no vision provider is configured: set PRODGRAPH_VISION_TOKEN_URL and PRODGRAPH_VISION_CREDENTIAL ' +
  '(or PRODGRAPH_VISION_CREDENTIAL_FILE) and restart the service';

/**
 * Exchanges the server-held provider credential for a short-lived client token limited to one
 * of the two allowed models (the first when none is named), and records who minted it.
 */
export async function mintSessionToken(
  ctx: AppContext,
  principal: Principal,
  provider: SessionTokenProvider | null,
  requestedModel: string | undefined,
): Promise<SessionToken> {
  const { models, tokenLifetimeSeconds } = ctx.config.vision;
  const model = requestedModel ?? models[0];
  if (!models.includes(model)) throw errors.invalid('model', `must be one of ${models.join(', ')}`);
  if (!provider) throw errors.unavailable(NO_PROVIDER);

  let minted;
  try {
    minted = await provider.mint({ model, lifetimeSeconds: tokenLifetimeSeconds });
  } catch (err) {
    if (err instanceof ProviderFailure) throw errors.badGateway(`the vision provider ${err.message}`);
    throw err;
  }
  await appendActivity(
    ctx.db,
    entryFor(principal, 'minted vision token', `session token for model ${model}`, null, nowIso()),
  );
  return { token: minted.token, expires_at: minted.expiresAt.toISOString(), model, provider: provider.name };
}
