import { useEffect, useState } from 'preact/hooks';
import { followChanges } from '@prodgraph/client';
import { isAbort, must } from '../api/client';
import type { Activity, Production } from '../api/types';
import { useSession } from '../session';
import { useLoad } from '../ui/load';
import { describe, ErrorNote, Busy } from '../ui/notes';
import { when } from '../ui/controls';
import { Page } from '../ui/page';
import { href } from '../router';

/** Each count, and the page that lists what it counts (departments have none of their own). */
const STATS: Array<[keyof Production['stats'], string, string | null]> = [
  ['scenes', 'Scenes', href('scenes')],
  ['nodes', 'Scenes and assets', href('assets')],
  ['departments', 'Departments', null],
  ['open_approvals', 'Open approvals', href('approvals')],
  ['deliveries_in_flight', 'Deliveries in flight', href('deliveries')],
];

type Live =
  { state: 'starting' } | { state: 'live'; last: string | null } | { state: 'stopped'; why: string };

/**
 * Follows the change feed with @prodgraph/client's followChanges: long polls (`wait`) that the
 * server holds until something commits, so the overview hears of a change within about a
 * second and costs one held request while nothing happens; a dropped connection resumes where
 * it stopped. A burst of changes makes one refresh, not one per change.
 */
function useChangeFeed(onChange: () => void): Live {
  const { api } = useSession();
  const [live, setLive] = useState<Live>({ state: 'starting' });
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    (async () => {
      // where "now" is, fixed first: nothing that commits after the badge says Live is missed
      const head = await must(
        api.GET('/api/v1/changes', { params: { query: { after: 'now' } }, signal: abort.signal }),
      );
      setLive({ state: 'live', last: null });
      const feed = followChanges(api, { after: head.next_cursor, wait: 25, signal: abort.signal });
      for await (const change of feed) {
        setLive({ state: 'live', last: change.at });
        clearTimeout(timer);
        timer = setTimeout(onChange, 150);
      }
    })().catch((err) => {
      // the feed itself outlives dropped connections: only a refusal that asking again cannot
      // cure (a revoked key, a lost scope), or a server that never answered at start, ends it
      if (!abort.signal.aborted && !isAbort(err)) setLive({ state: 'stopped', why: describe(err).text });
    });
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [api]);
  return live;
}

function LiveBadge({ live }: { live: Live }) {
  const text =
    live.state === 'starting'
      ? 'Connecting to live updates…'
      : live.state === 'live'
        ? `Live${live.last ? `: last change ${when(live.last)}` : ''}`
        : `Live updates stopped: ${live.why}`;
  return (
    <p class={`live ${live.state}`} role="status">
      {text}
    </p>
  );
}

function ActivityList({ rows }: { rows: Activity[] }) {
  if (rows.length === 0) return <p class="empty">Nothing has happened yet.</p>;
  return (
    <ol class="activity">
      {rows.map((a) => (
        <li key={a.id}>
          <time dateTime={a.at}>{when(a.at)}</time> <strong>{a.actor}</strong> {a.verb} {a.summary}
        </li>
      ))}
    </ol>
  );
}

export function Overview() {
  const { api, me } = useSession();
  const production = useLoad((signal) => must(api.GET('/api/v1/production', { signal })), []);
  const activity = useLoad(
    (signal) => must(api.GET('/api/v1/activity', { params: { query: { limit: 15 } }, signal })),
    [],
  );
  const live = useChangeFeed(() => {
    production.reload();
    activity.reload();
  });
  const p = production.data;
  return (
    <Page title="Overview" ready={!!p}>
      <LiveBadge live={live} />
      <ErrorNote error={production.error} />
      {!p && !production.error && <Busy />}
      {p && (
        <section aria-labelledby="prod-title">
          <h2 id="prod-title">
            {p.title} <span class="muted">({me.production.code})</span>
          </h2>
          {p.logline && <p class="logline">{p.logline}</p>}
          <p class="muted">
            {p.format === 'episodic'
              ? `Series${p.season_number ? `, season ${p.season_number}` : ''}`
              : 'Feature'}{' '}
            · {p.phase} · {p.status}
          </p>
          <dl class="stats">
            {STATS.map(([k, label, to]) => (
              <div key={k} class={to ? 'linked' : undefined}>
                <dt>{to ? <a href={to}>{label}</a> : label}</dt>
                <dd>{p.stats[k].toLocaleString()}</dd>
              </div>
            ))}
          </dl>
        </section>
      )}
      <section aria-labelledby="activity-title">
        <h2 id="activity-title">Latest activity</h2>
        <ErrorNote error={activity.error} />
        {activity.data ? <ActivityList rows={activity.data} /> : !activity.error && <Busy />}
      </section>
    </Page>
  );
}
