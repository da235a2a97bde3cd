/**
 * Media keys are `<production id>/<rest>`; the off-plane file route serves `<rest>` at
 * `/media/<rest>?t=<ticket>` for the ticket's production. Every `media_path` the API returns
 * comes from here, so it is always a path that route serves.
 */
export function mediaPathOf(storageKey: string | null | undefined): string | null {
  if (!storageKey) return null;
  const slash = storageKey.indexOf('/');
  return slash < 0 ? null : `/media/${storageKey.slice(slash + 1)}`;
}

/** The media path of a key the store made for a production (always `<production id>/<rest>`). */
export function storedMediaPath(storageKey: string): string {
  const path = mediaPathOf(storageKey);
  if (path === null) throw new Error(`internal: "${storageKey}" is not a production's storage key`);
  return path;
}

/** The storage key behind a production's media path (`rest` as it arrives on the route). */
export const storageKeyOf = (productionId: number, rest: string): string => `${productionId}/${rest}`;
