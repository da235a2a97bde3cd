import type { CharacterBundle, SceneBundle, Version } from '../api/types';
import { Thumb, type MediaLoader } from './thumb';
import { when } from './controls';
import { TableBox } from './table';

export type { MediaLoader };

function Versions({ label, versions, media }: { label: string; versions: Version[]; media: MediaLoader }) {
  if (versions.length === 0) return <span class="muted">No released version</span>;
  return (
    <ul class="versions">
      {versions.map((v) => (
        <li key={v.id}>
          {v.media_id != null ? (
            <Thumb
              alt={`${label} v${v.version}${v.variant ? ` (${v.variant})` : ''}`}
              id={v.media_id}
              load={media}
            />
          ) : (
            <span class="thumb thumb-none">No image</span>
          )}
          <span class="caption">
            v{v.version}
            {v.variant ? ` ${v.variant}` : ''} · {v.status}
          </span>
        </li>
      ))}
    </ul>
  );
}

function SceneFacts({ bundle }: { bundle: SceneBundle }) {
  return (
    <div class="columns">
      <section>
        <h4>Shoot days</h4>
        {bundle.shoot_days.length ? (
          <ul>
            {bundle.shoot_days.map((d) => (
              <li key={d.id}>
                Day {d.day_number} · {d.date ?? 'no date'} · {d.status}
              </li>
            ))}
          </ul>
        ) : (
          <p class="empty">Not scheduled.</p>
        )}
      </section>
      <section>
        <h4>Approvals</h4>
        {bundle.approvals.length ? (
          <ul>
            {bundle.approvals.map((a) => (
              <li key={a.id}>
                {a.title} · {a.status}
              </li>
            ))}
          </ul>
        ) : (
          <p class="empty">None.</p>
        )}
      </section>
      <section>
        <h4>Department notes</h4>
        {bundle.department_notes.length ? (
          <ul>
            {bundle.department_notes.map((n) => (
              <li key={n.id}>
                {n.summary} <span class="muted">({when(n.created_at)})</span>
              </li>
            ))}
          </ul>
        ) : (
          <p class="empty">None.</p>
        )}
      </section>
    </div>
  );
}

/** A scene bundle; `titled` false when the surrounding section already names the scene. */
export function SceneBundleView({
  bundle,
  media,
  titled = true,
}: {
  bundle: SceneBundle;
  media: MediaLoader;
  titled?: boolean;
}) {
  const s = bundle.scene;
  return (
    <article class="bundle" aria-label={`Scene ${s.number}`}>
      {titled && (
        <h2>
          Scene {s.number}
          {s.episode_code ? ` (${s.episode_code})` : ''}: {s.slugline}
        </h2>
      )}
      <p class="muted">
        {s.status} · {s.revision_color} pages
      </p>
      {s.synopsis && <p>{s.synopsis}</p>}
      <TableBox label="Assets the scene uses">
        <table>
          <caption>Assets the scene uses, with their released versions</caption>
          <thead>
            <tr>
              <th scope="col">Asset</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Released versions</th>
            </tr>
          </thead>
          <tbody>
            {bundle.assets.map((a) => (
              <tr key={a.node_id}>
                <th scope="row">{a.label}</th>
                <td>{a.kind}</td>
                <td>{a.status}</td>
                <td>
                  <Versions label={a.label} versions={a.released_versions} media={media} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      {bundle.assets.length === 0 && <p class="empty">The scene uses no asset.</p>}
      <SceneFacts bundle={bundle} />
    </article>
  );
}

export function CharacterBundleView({ bundle, media }: { bundle: CharacterBundle; media: MediaLoader }) {
  const c = bundle.character;
  return (
    <article class="bundle" aria-label={`Character ${c.label}`}>
      <h3>{c.label}</h3>
      <p class="muted">{c.status}</p>
      {bundle.costumes.length === 0 && <p class="empty">No costume.</p>}
      {bundle.costumes.map((co) => (
        <section key={co.node_id} class="costume">
          <h4>{co.label}</h4>
          <Versions label={co.label} versions={co.released_versions} media={media} />
          {co.ingredients.length > 0 && (
            <ul class="ingredients">
              {co.ingredients.map((g) => (
                <li key={g.id}>
                  {g.media_id != null && (
                    <Thumb alt={`${g.label} (${g.kind})`} id={g.media_id} load={media} />
                  )}
                  <span class="caption">
                    {g.label} · {g.kind}
                    {g.relation ? ` · ${g.relation}` : ''}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
      ))}
    </article>
  );
}
