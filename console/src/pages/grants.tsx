import { useState } from 'preact/hooks';
import { must } from '../api/client';
import type { Engagement, Grant } from '../api/types';
import { useSession } from '../session';
import { useAction } from '../ui/action';
import { useLoad } from '../ui/load';
import { Busy, Empty, ErrorNote } from '../ui/notes';
import { ConfirmButton, when } from '../ui/controls';
import { GrantForm } from './grant-form';
import { TableBox } from '../ui/table';

function grantTarget(g: Grant): string {
  if (g.kind === 'scene')
    return `Scene: ${g.node_label ?? `#${g.node_id}`}${g.episode_code ? ` (episode ${g.episode_code})` : ''}`;
  if (g.kind === 'character') return `Character: ${g.node_label ?? `#${g.node_id}`}`;
  if (g.kind === 'delivery')
    return `Delivery: ${g.delivery_title ?? `#${g.delivery_id}`} (${g.access === 'submit' ? 'read and submit' : 'read'})`;
  return 'Its own purchase orders';
}

function grantState(g: Grant): string {
  if (g.revoked_at) return `Revoked ${when(g.revoked_at)}`;
  if (g.live) return g.expires_at ? `Live until ${when(g.expires_at)}` : 'Live';
  if (g.expires_at && Date.parse(g.expires_at) <= Date.now()) return `Expired ${when(g.expires_at)}`;
  return 'Not live (its target is gone)';
}

function GrantTable({
  rows,
  caption,
  revoke,
}: {
  rows: Grant[];
  caption: string;
  revoke: (g: Grant) => Promise<unknown>;
}) {
  return (
    <TableBox label={caption}>
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">What</th>
            <th scope="col">State</th>
            <th scope="col">Made</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((g) => (
            <tr key={g.id} class={g.live ? '' : 'inactive'}>
              <th scope="row">{grantTarget(g)}</th>
              <td>{grantState(g)}</td>
              <td>{when(g.created_at)}</td>
              <td>
                {!g.revoked_at && (
                  <ConfirmButton
                    label="Revoke"
                    confirm={`Revoke "${grantTarget(g)}"?`}
                    onConfirm={() => revoke(g)}
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

/** An engagement's grants, live and past, with revoke, and the form that adds one. */
export function Grants({ engagement, onChange }: { engagement: Engagement; onChange: () => void }) {
  const { api } = useSession();
  const [round, setRound] = useState(0);
  const action = useAction();
  const grants = useLoad(
    (signal) =>
      must(
        api.GET('/api/v1/admin/grants', {
          params: { query: { engagement_id: engagement.id, include_inactive: 'true' } },
          signal,
        }),
      ),
    [engagement.id, round],
  );
  const changed = () => {
    setRound(round + 1);
    onChange();
  };
  const revoke = (g: Grant) =>
    action.run(async () => {
      await must(api.POST('/api/v1/admin/grants/{id}/revoke', { params: { path: { id: g.id } } }));
      changed();
    });
  const rows = grants.data;
  return (
    <section aria-labelledby="grants-title">
      <h2 id="grants-title">Grants</h2>
      <ErrorNote error={grants.error} />
      <ErrorNote error={action.error} />
      {!rows && !grants.error && <Busy />}
      {rows && rows.length === 0 && <Empty>Nothing granted yet: this vendor's keys reach nothing.</Empty>}
      {rows && rows.length > 0 && (
        <GrantTable rows={rows} caption={`Grants of ${engagement.ref}`} revoke={revoke} />
      )}
      {!engagement.archived_at && <GrantForm engagementId={engagement.id} onGranted={changed} />}
    </section>
  );
}
