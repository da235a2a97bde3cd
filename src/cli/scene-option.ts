import type { DbHandle } from '../db/index.js';
import { formatAndEpisodes, hasEpisode, scenesNamed } from '../modules/scenes/repository.js';
import { CliError } from './args.js';

/*
 * A scene on the command line is named the way a person reads it, never by a bare node id (a
 * coordinator typing `--scene 9` means scene 9, not node 9):
 *   9  12A             its number (any case), when only one live scene has it
 *   102/9              its number in an episode (the episode's code or ref), on an episodic production
 *   --episode 102      the same episode, as a flag of its own
 *   sc102-9            its ref
 *   id:123             its node id, only in this explicit form
 * What names more than one scene (scene 9 of several episodes; a ref that is another scene's
 * number) is refused with the candidates, never guessed.
 */

type Candidate = Awaited<ReturnType<typeof scenesNamed>>[number];

/** How a candidate reads: `102/9 (sc102-9) "9 INT. …"`, or `9 (sc9) "…"` without episodes. */
const shown = (s: Candidate) =>
  `${s.episode_code ? `${s.episode_code}/` : ''}${s.number ?? '?'}${s.ref ? ` (${s.ref})` : ''} "${s.label}"`;

const ID = /^id:(\d{1,9})$/;

/** The forms the option takes, for the refusals. */
const forms = (episodic: boolean) =>
  episodic
    ? 'name it by its number with its episode (e.g. 102/9, or --episode 102), by its ref, or by node id as id:123'
    : 'name it by its number (e.g. 12A), by its ref, or by node id as id:123';

/** The one scene `text` (with `episode`, when given) names in the production, or a refusal saying why. */
export async function resolveScene(
  h: DbHandle,
  productionId: number,
  code: string,
  text: string,
  episode?: string,
): Promise<number> {
  const { format } = await formatAndEpisodes(h.db, productionId);
  const episodic = format === 'episodic';
  if (episode !== undefined) await checkEpisode(h, productionId, code, episodic, episode, text);
  const explicitId = ID.exec(text);
  const slash = text.indexOf('/');
  const [inEpisode, numberText] =
    slash > 0 && episode === undefined ? [text.slice(0, slash), text.slice(slash + 1)] : [episode, text];
  const candidates = await scenesNamed(h.db, productionId, {
    id: explicitId ? Number(explicitId[1]) : undefined,
    ref: text,
    number: numberText === '' ? undefined : { text: numberText, episode: inEpisode },
  });
  // a ref outside the named episode is not the scene meant
  const named = candidates.filter(
    (s) => episode === undefined || s.episode_code === episode || s.episode_ref === episode,
  );
  const where = `production "${code}"${episode !== undefined ? `, episode ${episode}` : ''}`;
  if (named.length === 0) throw new CliError(`no scene "${text}" in ${where} (${forms(episodic)})`);
  if (named.length > 1)
    throw new CliError(
      `scene "${text}" names ${named.length} scenes in ${where}: ${named.map(shown).join(', ')}; ${forms(episodic)}`,
    );
  return named[0]!.id;
}

async function checkEpisode(
  h: DbHandle,
  productionId: number,
  code: string,
  episodic: boolean,
  episode: string,
  text: string,
): Promise<void> {
  if (!episodic) throw new CliError(`--episode: production "${code}" is not episodic; name the scene alone`);
  if (ID.test(text) || text.includes('/'))
    throw new CliError(`--episode goes with a scene number (--scene 9 --episode 102), not with "${text}"`);
  if (!(await hasEpisode(h.db, productionId, episode)))
    throw new CliError(
      `--episode: no episode "${episode}" in production "${code}" (an episode's code or ref)`,
    );
}
