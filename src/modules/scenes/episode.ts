/**
 * The episode keys of a scene-shaped record: both present on an episodic production, both
 * absent (never null) on a single one.
 */
export function episodeFields(
  format: string,
  episodeId: number | null,
  episodeCode: string | null,
): { episode_id?: number; episode_code?: string } {
  if (format !== 'episodic' || episodeId === null || episodeCode === null) return {};
  return { episode_id: episodeId, episode_code: episodeCode };
}
