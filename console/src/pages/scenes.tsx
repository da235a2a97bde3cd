import { useCallback } from 'preact/hooks';
import { must, page } from '../api/client';
import { useSession } from '../session';
import { href } from '../router';
import { SceneBundleView, type MediaLoader } from '../ui/bundles';
import { useLoad } from '../ui/load';
import { Busy, ErrorNote } from '../ui/notes';
import { Pager, usePaged } from '../ui/paged';
import { Page } from '../ui/page';
import { TableBox } from '../ui/table';

const PAGE = 50;

export function Scenes() {
  const { api } = useSession();
  const paged = usePaged(
    (cursor, signal) =>
      page(api.GET('/api/v1/scenes', { params: { query: { limit: PAGE, cursor } }, signal })),
    [],
  );
  const rows = paged.data?.rows;
  return (
    <Page title="Scenes" ready={!!rows}>
      <p class="muted">In script order, {PAGE} a page.</p>
      <ErrorNote error={paged.error} />
      {!rows && !paged.error && <Busy />}
      {rows && (
        <TableBox label={`Scenes, page ${paged.number}`}>
          <table aria-busy={paged.loading}>
            <caption class="sr-only">Scenes, page {paged.number}</caption>
            <thead>
              <tr>
                <th scope="col">Scene</th>
                <th scope="col">Slugline</th>
                <th scope="col">Status</th>
                <th scope="col">Episode</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.node_id}>
                  <th scope="row">
                    <a href={href('scenes', s.node_id)}>{s.number || '—'}</a>
                  </th>
                  <td>{s.slugline}</td>
                  <td>{s.status}</td>
                  <td>{s.episode_code ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {rows && rows.length === 0 && <p class="empty">No scenes.</p>}
      <Pager paged={paged} label="Scenes" />
    </Page>
  );
}

/** Media for a production-wide key: its own key on the media route, shown from a blob. */
export function useOwnMedia(): MediaLoader {
  const { api } = useSession();
  return useCallback<MediaLoader>(
    (id, signal) =>
      must(api.GET('/api/v1/media/{id}/content', { params: { path: { id } }, parseAs: 'blob', signal })),
    [api],
  );
}

export function SceneDetail({ id }: { id: number }) {
  const { api } = useSession();
  const media = useOwnMedia();
  const bundle = useLoad(
    (signal) =>
      must(api.GET('/api/v1/bundles/scene/{node_id}', { params: { path: { node_id: id } }, signal })),
    [id],
  );
  const b = bundle.data;
  return (
    <Page title={b ? `Scene ${b.scene.number}` : 'Scene'} ready={!!b}>
      <p>
        <a href={href('scenes')}>← All scenes</a>
      </p>
      <ErrorNote error={bundle.error} />
      {!b && !bundle.error && <Busy />}
      {b && <SceneBundleView bundle={b} media={media} />}
    </Page>
  );
}
