import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { MAX_PAGE, openPage, type Page, type PagedList, type PageQuery } from '../../domain/page.js';
import { sceneRowToScene } from './scene-row.js';
import * as repo from './repository.js';
import type { Scene } from './schemas.js';

/** Script order: pages of (position, id). */
const SCENES: PagedList = { name: 'scenes', key: ['int', 'int'], maxLimit: MAX_PAGE };

export async function listScenes(
  ctx: AppContext,
  principal: Principal,
  query: PageQuery = {},
): Promise<Page<Scene>> {
  const { window, close } = openPage(SCENES, principal.productionId, { ...query });
  const rows = await repo.listScenes(ctx.db, principal.productionId, window);
  return close(
    rows,
    (s) => [s.position, s.id],
    (s) => ({
      ...sceneRowToScene(s),
      updated_at: s.updated_at,
      ...(s.retired_at ? { retired_at: s.retired_at } : {}),
    }),
  );
}

/** Every scene, unpaged: for callers that need the whole list (MCP resources and prompts). */
export const allScenes = async (ctx: AppContext, principal: Principal): Promise<Scene[]> =>
  (await listScenes(ctx, principal)).items;
