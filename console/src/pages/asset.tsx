import { ApiError, must } from '../api/client';
import type { Asset } from '../api/types';
import { useSession } from '../session';
import { href } from '../router';
import { when } from '../ui/controls';
import { useLoad } from '../ui/load';
import { Busy, Empty, ErrorNote } from '../ui/notes';
import { Page } from '../ui/page';
import { TableBox } from '../ui/table';
import { Thumb } from '../ui/thumb';
import { useOwnMedia } from './scenes';

type Version = Asset['versions'][number];

function VersionRow({ v, label }: { v: Version; label: string }) {
  const media = useOwnMedia();
  const name = `${label} v${v.version}${v.variant ? ` (${v.variant})` : ''}`;
  return (
    <tr>
      <th scope="row">v{v.version}</th>
      <td>
        {v.released && v.media_id != null ? (
          <Thumb id={v.media_id} load={media} alt={name} />
        ) : (
          <span class="thumb thumb-none">{v.released ? 'No image' : 'Not released'}</span>
        )}
      </td>
      <td>{v.variant || '—'}</td>
      <td>{v.status}</td>
      <td>{v.released ? 'Released' : 'Not released (locked)'}</td>
      <td>
        {v.released ? (v.created_by ?? '—') : '—'}
        {v.released && v.created_at ? <span class="muted"> · {when(v.created_at)}</span> : null}
      </td>
      <td>
        {v.notes.length === 0 ? (
          <span class="muted">—</span>
        ) : (
          <ul class="plain">
            {v.notes.map((n) => (
              <li key={n.id}>
                {n.text}{' '}
                <span class="muted">
                  ({n.author ?? 'unknown'}, {when(n.created_at)})
                </span>
              </li>
            ))}
          </ul>
        )}
      </td>
    </tr>
  );
}

function Related({ title, rows }: { title: string; rows: Array<{ node_id: number; label: string }> }) {
  if (rows.length === 0) return null;
  return (
    <p>
      {title}:{' '}
      {rows.map((r, i) => (
        <span key={r.node_id}>
          {i > 0 && ', '}
          <a href={href('assets', r.node_id)}>{r.label}</a>
        </span>
      ))}
    </p>
  );
}

/** One asset: what it is, the scenes that use it, and every version, newest first. */
export function AssetPage({ id }: { id: number }) {
  const { api } = useSession();
  const found = useLoad(
    (signal) =>
      must(api.GET('/api/v1/assets/{node_id}', { params: { path: { node_id: id } }, signal })).catch(
        (err: unknown) => {
          if (err instanceof ApiError && err.status === 404) return null;
          throw err;
        },
      ),
    [id],
  );
  const a = found.data;
  const versions = a ? [...a.versions].reverse() : [];
  return (
    <Page title={a ? a.label : a === null ? 'No such asset' : 'Asset'} ready={a !== undefined}>
      <p>
        <a href={href('assets')}>← All assets</a>
      </p>
      <ErrorNote error={found.error} />
      {a === undefined && !found.error && <Busy />}
      {a === null && <Empty>There is no asset {id} in this production.</Empty>}
      {a && (
        <>
          <p class="muted">
            {a.kind} · {a.department ?? 'no department'} · {a.status} · updated {when(a.updated_at)}
          </p>
          {a.scenes.length > 0 && (
            <p>
              Used in:{' '}
              {a.scenes.map((s, i) => (
                <span key={s.node_id}>
                  {i > 0 && ', '}
                  <a href={href('scenes', s.node_id)}>
                    Scene {s.number}
                    {s.episode_code ? ` (${s.episode_code})` : ''}
                  </a>
                </span>
              ))}
            </p>
          )}
          <Related title="Costumes" rows={a.costumes ?? []} />
          <Related title="Worn by" rows={a.worn_by ?? []} />
          <section aria-labelledby="versions-title">
            <h2 id="versions-title">Versions ({a.versions.length})</h2>
            {versions.length === 0 ? (
              <Empty>No version yet.</Empty>
            ) : (
              <TableBox label={`Versions of ${a.label}`}>
                <table>
                  <caption class="sr-only">Versions of {a.label}, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Version</th>
                      <th scope="col">Image</th>
                      <th scope="col">Variant</th>
                      <th scope="col">Status</th>
                      <th scope="col">Released</th>
                      <th scope="col">By</th>
                      <th scope="col">Notes</th>
                    </tr>
                  </thead>
                  <tbody>
                    {versions.map((v) => (
                      <VersionRow key={v.id} v={v} label={a.label} />
                    ))}
                  </tbody>
                </table>
              </TableBox>
            )}
          </section>
        </>
      )}
    </Page>
  );
}
