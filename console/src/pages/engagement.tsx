import { useState } from 'preact/hooks';
import { ApiError, must } from '../api/client';
import type { Engagement } from '../api/types';
import { abilities, useSession } from '../session';
import { href } from '../router';
import { useAction } from '../ui/action';
import { useLoad } from '../ui/load';
import { Busy, Done, Empty, ErrorNote } from '../ui/notes';
import { Page } from '../ui/page';
import { ConfirmButton, when } from '../ui/controls';
import { Grants } from './grants';
import { Keys } from './keys';

function Summary({ e }: { e: Engagement }) {
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  return (
    <p class="muted">
      {e.departments.length ? `Works for ${e.departments.join(', ')}` : 'No department'} ·{' '}
      {plural(e.live_grants, 'live grant')} · {plural(e.keys, 'key')} ·{' '}
      {e.source === 'document' ? 'from the production document' : 'engaged here'}
    </p>
  );
}

/** One engagement: its grants, its keys, and the end of it. */
export function EngagementPage({ id }: { id: number }) {
  const { api, me, person } = useSession();
  // keys are credentials: a signed-in coordinator neither sees nor mints them
  const can = abilities(me, person);
  const [round, setRound] = useState(0);
  const archiving = useAction();
  // one engagement by id, archived or not; null when the production has none (404)
  const found = useLoad(
    (signal) =>
      must(api.GET('/api/v1/admin/engagements/{id}', { params: { path: { id } }, signal })).catch(
        (err: unknown) => {
          if (err instanceof ApiError && err.status === 404) return null;
          throw err;
        },
      ),
    [id, round],
  );
  const e = found.data;
  const refresh = () => setRound(round + 1);
  const archive = () =>
    archiving.run(async () => {
      await must(api.POST('/api/v1/admin/engagements/{id}/archive', { params: { path: { id } } }));
      refresh();
    });
  const title = e
    ? `${e.organisation.name} · ${e.ref ?? `engagement ${e.id}`}`
    : e === null
      ? 'No such engagement'
      : 'Engagement';
  return (
    <Page
      title={title}
      ready={e !== undefined}
      actions={
        e && (
          <a class="button" href={href('vendors', id, 'view')}>
            See as vendor
          </a>
        )
      }
    >
      <p>
        <a href={href('vendors')}>← All vendors</a>
      </p>
      <ErrorNote error={found.error} />
      {e === undefined && !found.error && <Busy />}
      {e === null && <Empty>There is no engagement {id} in this production.</Empty>}
      {e && (
        <>
          <Summary e={e} />
          {e.archived_at && <Done>Archived {when(e.archived_at)}: its keys reach nothing.</Done>}
          <Grants engagement={e} onChange={refresh} />
          {can.credentials && <Keys engagement={e} onChange={refresh} />}
          {!e.archived_at && (
            <section aria-labelledby="archive-title" class="danger-zone">
              <h2 id="archive-title">End the engagement</h2>
              <p>
                Archiving stops every key of this engagement from reaching anything, from the very next
                request.
              </p>
              <ErrorNote error={archiving.error} />
              <ConfirmButton label="Archive" confirm="Archive this engagement?" onConfirm={archive} />
            </section>
          )}
        </>
      )}
    </Page>
  );
}
