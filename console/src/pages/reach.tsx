import { useCallback, useState } from 'preact/hooks';
import { must, page, type Api } from '../api/client';
import type {
  BundleEntry,
  CharacterBundle,
  Engagement,
  PurchaseOrders,
  SceneBundle,
  SubmissionRow,
  Turnover,
  VendorView,
} from '../api/types';
import { has, useSession } from '../session';
import { href } from '../router';
import { CharacterBundleView, SceneBundleView, type MediaLoader } from '../ui/bundles';
import { useLoad } from '../ui/load';
import { Busy, Empty, ErrorNote } from '../ui/notes';
import { Page } from '../ui/page';
import { when } from '../ui/controls';
import { TableBox } from '../ui/table';
import { TurnoverDetail } from './turnover-view';
import { SubmissionStatus } from './submissions';

/** What one engagement sees: the admin's "see as vendor" answer, or a vendor key's own routes. */
interface Summary {
  engagement?: Engagement;
  /** false: an archived engagement (known to the admin view only). */
  reaches?: boolean;
  judged_at: string;
  bundles: BundleEntry[];
  /** More bundles than one page shows. */
  more: boolean;
  turnovers: Turnover[];
  /** null: this key lacks read:money, so it is refused purchase orders. */
  purchase_orders: PurchaseOrders | null;
  /** What the engagement submitted, newest first. */
  submissions: VendorView['submissions'];
  /** More submissions than the page reads (a vendor key's own view only). */
  moreSubmissions?: boolean;
}

/** Where one view's answers come from. */
interface ReachSource {
  summary(signal: AbortSignal): Promise<Summary>;
  scene(nodeId: number, signal: AbortSignal): Promise<SceneBundle>;
  character(nodeId: number, signal: AbortSignal): Promise<CharacterBundle>;
  media: MediaLoader;
  /** The vendor's own key: it may submit work (the admin's view only looks). */
  own: boolean;
}

/** A bundle, fetched when its section is first opened (and again on each refresh). */
function Lazy<T>({
  summary,
  open: initiallyOpen,
  load,
  show,
}: {
  summary: string;
  open: boolean;
  load: (signal: AbortSignal) => Promise<T>;
  show: (data: T) => preact.JSX.Element;
}) {
  const [open, setOpen] = useState(initiallyOpen);
  return (
    <details class="reach-item" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>{summary}</summary>
      {open && <Loaded load={load} show={show} />}
    </details>
  );
}

function Loaded<T>({
  load,
  show,
}: {
  load: (signal: AbortSignal) => Promise<T>;
  show: (data: T) => preact.JSX.Element;
}) {
  const got = useLoad(load, []);
  if (got.error) return <ErrorNote error={got.error} />;
  if (!got.data) return <Busy />;
  return show(got.data);
}

const OPEN_AT_ONCE = 6;
/** A vendor's own page lists this many bundles; each is fetched only when opened. */
const BUNDLES_SHOWN = 200;
/** The newest submissions shown, as many as the see-as-vendor answer carries. */
const SUBMISSIONS_SHOWN = 50;
/** A vendor's own submissions are read this many a page, for at most this many pages. */
const SUBMISSION_PAGE = 200;
const SUBMISSION_PAGES = 10;

/**
 * A vendor key's own submissions, newest first, from its own `GET /submissions` (which lists
 * them oldest first, page by page): the same list the see-as-vendor answer carries.
 */
async function ownSubmissions(
  api: Api,
  signal: AbortSignal,
): Promise<{ rows: VendorView['submissions']; more: boolean }> {
  const read: SubmissionRow[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < SUBMISSION_PAGES; n++) {
    const query = { limit: SUBMISSION_PAGE, ...(cursor ? { cursor } : {}) };
    const got = await page(api.GET('/api/v1/submissions', { params: { query }, signal }));
    read.push(...got.rows);
    if (!got.next) return { rows: newest(read), more: false };
    cursor = got.next;
  }
  return { rows: newest(read), more: true };
}

const newest = (rows: SubmissionRow[]): VendorView['submissions'] =>
  rows
    .slice(-SUBMISSIONS_SHOWN)
    .reverse()
    .map((s) => ({
      id: s.id,
      delivery_id: s.delivery_id,
      title: s.title,
      created_at: s.created_at,
      status: s.status,
      review: s.review,
      media: s.media.map((m) => ({ id: m.id, label: m.label, kind: m.kind, content_type: m.content_type })),
    }));

const expiry = (b: BundleEntry) => (b.expires_at ? ` (granted until ${when(b.expires_at)})` : '');

function ReachView({
  reach,
  source,
  round,
  refresh,
}: {
  reach: Summary;
  source: ReachSource;
  round: number;
  refresh: () => void;
}) {
  const scenes = reach.bundles.filter((b) => b.kind === 'scene');
  const characters = reach.bundles.filter((b) => b.kind === 'character');
  return (
    <>
      <p class="muted" role="status">
        Judged {when(reach.judged_at)}: exactly what a key of this engagement is answered at this moment.
      </p>
      {reach.reaches === false && (
        <div class="note warn">
          This engagement is archived: its keys reach nothing, not even their own uploads.
        </div>
      )}
      <Turnovers reach={reach} source={source} round={round} refresh={refresh} />
      <section aria-labelledby="r-scenes">
        <h2 id="r-scenes">Scenes ({scenes.length})</h2>
        {scenes.length === 0 && <Empty>No scene is granted.</Empty>}
        {scenes.map((s, i) => (
          <Lazy
            key={`${round}-${s.node_id}`}
            open={i < OPEN_AT_ONCE}
            summary={
              s.kind === 'scene'
                ? `Scene ${s.number}${s.episode_code ? ` (${s.episode_code})` : ''}: ${s.slugline}${expiry(s)}`
                : ''
            }
            load={(signal) => source.scene(s.node_id, signal)}
            show={(b) => <SceneBundleView bundle={b} media={source.media} titled={false} />}
          />
        ))}
      </section>
      <section aria-labelledby="r-characters">
        <h2 id="r-characters">Characters ({characters.length})</h2>
        {characters.length === 0 && <Empty>No character is granted.</Empty>}
        {characters.map((c, i) => (
          <Lazy
            key={`${round}-${c.node_id}`}
            open={i < OPEN_AT_ONCE}
            summary={c.kind === 'character' ? `${c.label}${expiry(c)}` : ''}
            load={(signal) => source.character(c.node_id, signal)}
            show={(b) => <CharacterBundleView bundle={b} media={source.media} />}
          />
        ))}
      </section>
      {reach.more && (
        <p class="note warn">
          More bundles are granted than this page lists; each one is still fetched only when it is opened.
        </p>
      )}
      <Money reach={reach} />
      <Submissions reach={reach} />
    </>
  );
}

function Turnovers({
  reach,
  source,
  round,
  refresh,
}: {
  reach: Summary;
  source: ReachSource;
  round: number;
  refresh: () => void;
}) {
  const turnovers = reach.turnovers;
  return (
    <section aria-labelledby="r-turnovers">
      <h2 id="r-turnovers">Turnovers ({turnovers.length})</h2>
      {turnovers.length === 0 ? (
        <Empty>No delivery is granted.</Empty>
      ) : (
        <TableBox label="Turnovers">
          <table>
            <caption class="sr-only">Turnovers</caption>
            <thead>
              <tr>
                <th scope="col">Turnover</th>
                <th scope="col">Status</th>
                <th scope="col">Due</th>
                <th scope="col">May submit</th>
                <th scope="col">Package</th>
                <th scope="col">Submitted</th>
              </tr>
            </thead>
            <tbody>
              {turnovers.map((t) => (
                <tr key={t.id}>
                  <th scope="row">{t.title}</th>
                  <td>{t.status}</td>
                  <td>{t.due ?? '—'}</td>
                  <td>{t.can_submit ? 'Yes (submit grant)' : 'No (read only)'}</td>
                  <td>{t.package.length ? plural(t.package.length, 'file') : '—'}</td>
                  <td>{latest(t)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {turnovers.map((t) => (
        <TurnoverDetail
          key={`${round}-${t.id}`}
          turnover={t}
          media={source.media}
          own={source.own}
          onSubmitted={refresh}
        />
      ))}
    </section>
  );
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** How many submissions, and where the newest stands. */
function latest(t: Turnover): string {
  const subs = t.submissions;
  const last = subs[subs.length - 1];
  if (!last) return '—';
  const state =
    last.status === 'accepted'
      ? 'accepted'
      : last.status === 'changes_requested'
        ? 'changes requested'
        : 'waiting';
  return `${subs.length} (newest: ${state})`;
}

function Money({ reach }: { reach: Summary }) {
  const money = reach.purchase_orders;
  return (
    <section aria-labelledby="r-money">
      <h2 id="r-money">Purchase orders</h2>
      {money === null ? (
        <Empty>This key does not hold the read:money scope: it is refused purchase orders.</Empty>
      ) : money.purchase_orders.length === 0 ? (
        <Empty>None visible (an own purchase orders grant shows the vendor its own).</Empty>
      ) : (
        <TableBox label="Purchase orders">
          <table>
            <caption class="sr-only">
              Purchase orders{money.week_of ? `, cost report of the week of ${money.week_of}` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Description</th>
                <th scope="col">Account</th>
                <th scope="col">Amount</th>
                <th scope="col">Status</th>
                <th scope="col">Date</th>
              </tr>
            </thead>
            <tbody>
              {money.purchase_orders.map((o) => (
                <tr key={o.id}>
                  <th scope="row">{o.description}</th>
                  <td>{o.account}</td>
                  <td class="num">{o.amount.toLocaleString(undefined, { minimumFractionDigits: 2 })}</td>
                  <td>{o.status}</td>
                  <td>{o.date}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </section>
  );
}

function Submissions({ reach }: { reach: Summary }) {
  const shown = reach.submissions.length;
  return (
    <section aria-labelledby="r-subs">
      <h2 id="r-subs">Its submissions ({shown === SUBMISSIONS_SHOWN ? `the newest ${shown}` : shown})</h2>
      {reach.moreSubmissions && (
        <p class="note warn">
          More submissions than this page reads ({(SUBMISSION_PAGE * SUBMISSION_PAGES).toLocaleString()}): the
          newest of those are shown; <code>GET /api/v1/submissions</code> lists them all.
        </p>
      )}
      {shown === 0 ? (
        <Empty>Nothing submitted yet.</Empty>
      ) : (
        <ul>
          {reach.submissions.map((s) => (
            <li key={s.id}>
              {when(s.created_at)}: <strong>{s.title}</strong> ({s.media.map((m) => m.label).join(', ')}){' '}
              <SubmissionStatus status={s.status} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function ReachPage({
  title,
  source,
  intro,
}: {
  title: (summary: Summary | undefined) => string;
  source: ReachSource;
  intro?: preact.JSX.Element;
}) {
  const [round, setRound] = useState(0);
  const reach = useLoad((signal) => source.summary(signal), [source, round]);
  return (
    <Page
      title={title(reach.data)}
      ready={!!reach.data}
      actions={
        <button type="button" onClick={() => setRound(round + 1)} disabled={reach.loading}>
          {reach.loading && reach.data ? 'Refreshing…' : 'Refresh'}
        </button>
      }
    >
      {intro}
      <ErrorNote error={reach.error} />
      {!reach.data && !reach.error && <Busy />}
      {reach.data && (
        <ReachView reach={reach.data} source={source} round={round} refresh={() => setRound(round + 1)} />
      )}
    </Page>
  );
}

/** An administrator sees an engagement's view: computed by the server with that engagement as the caller. */
export function SeeAsVendor({ engagementId: id }: { engagementId: number }) {
  const { api } = useSession();
  const media = useCallback<MediaLoader>(
    (media_id, signal) =>
      must<Blob>(
        api.GET('/api/v1/admin/engagements/{id}/view/media/{media_id}/content', {
          params: { path: { id, media_id } },
          parseAs: 'blob',
          signal,
        }),
      ),
    [api, id],
  );
  const [source] = useState<ReachSource>(() => ({
    media,
    own: false,
    summary: (signal) =>
      must(api.GET('/api/v1/admin/engagements/{id}/view', { params: { path: { id } }, signal })).then(
        (v): Summary => ({ ...v, more: false }),
      ),
    scene: (node_id, signal) =>
      must(
        api.GET('/api/v1/admin/engagements/{id}/view/bundles/scene/{node_id}', {
          params: { path: { id, node_id } },
          signal,
        }),
      ),
    character: (node_id, signal) =>
      must(
        api.GET('/api/v1/admin/engagements/{id}/view/bundles/character/{node_id}', {
          params: { path: { id, node_id } },
          signal,
        }),
      ),
  }));
  return (
    <ReachPage
      title={(v) =>
        v?.engagement
          ? `See as ${v.engagement.organisation.name} (${v.engagement.ref ?? v.engagement.id})`
          : 'See as vendor'
      }
      source={source}
      intro={
        <p>
          <a href={href('vendors', id)}>← Grants and keys of this engagement</a>. No key is minted to show
          this: the server runs the vendor's own requests with this engagement as the caller.
        </p>
      }
    />
  );
}

/** A vendor key's own view: the same page, from its own routes and its own key. */
export function OwnReach() {
  const { api, me } = useSession();
  const media = useCallback<MediaLoader>(
    (id, signal) =>
      must<Blob>(
        api.GET('/api/v1/media/{id}/content', { params: { path: { id } }, parseAs: 'blob', signal }),
      ),
    [api],
  );
  const [source] = useState<ReachSource>(() => ({
    media,
    own: true,
    summary: async (signal): Promise<Summary> => {
      const judged = new Date().toISOString();
      const [bundles, turnovers, money, submitted] = await Promise.all([
        page(api.GET('/api/v1/bundles', { params: { query: { limit: BUNDLES_SHOWN } }, signal })),
        must(api.GET('/api/v1/turnovers', { signal })),
        has(me, 'read:money') ? must(api.GET('/api/v1/purchase-orders', { signal })) : null,
        ownSubmissions(api, signal),
      ]);
      return {
        judged_at: judged,
        bundles: bundles.rows,
        more: bundles.next !== null,
        turnovers,
        purchase_orders: money,
        submissions: submitted.rows,
        moreSubmissions: submitted.more,
      };
    },
    scene: (node_id, signal) =>
      must(api.GET('/api/v1/bundles/scene/{node_id}', { params: { path: { node_id } }, signal })),
    character: (node_id, signal) =>
      must(api.GET('/api/v1/bundles/character/{node_id}', { params: { path: { node_id } }, signal })),
  }));
  return (
    <ReachPage title={() => `What ${me.engagement?.organisation ?? 'this vendor'} sees`} source={source} />
  );
}
