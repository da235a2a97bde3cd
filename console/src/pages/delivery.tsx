import { useMemo, useState } from 'preact/hooks';
import { must, page, type Api } from '../api/client';
import { findDelivery, removeDeliveryFile, type Submission } from '../api/production-side';
import type { Delivery, Engagement, Grant } from '../api/types';
import { abilities, useSession } from '../session';
import { href } from '../router';
import { useAction } from '../ui/action';
import { ConfirmButton, when } from '../ui/controls';
import { FileTable } from '../ui/files';
import { useLoad } from '../ui/load';
import { Busy, Empty, ErrorNote } from '../ui/notes';
import { Page } from '../ui/page';
import { Pager, usePaged } from '../ui/paged';
import { UploadForm, type Send } from '../ui/upload';
import { StatusPanel } from './delivery-status';
import { useOwnMedia } from './scenes';
import { SubmissionCard } from './submissions';

function Facts({ d }: { d: Delivery }) {
  return (
    <dl class="facts">
      <div>
        <dt>Kind</dt>
        <dd>{d.kind === 'external' ? 'External (to a vendor)' : 'Internal (department to department)'}</dd>
      </div>
      <div>
        <dt>From → to</dt>
        <dd>
          {d.from_department ?? '—'} → {d.external_to ?? d.to_department ?? '—'}
        </dd>
      </div>
      <div>
        <dt>Due</dt>
        <dd>{d.due ?? '—'}</dd>
      </div>
      <div>
        <dt>Gated by</dt>
        <dd>
          {d.gating_approval
            ? `${d.gating_approval.title} (${d.gating_approval.status.replace('_', ' ')})`
            : '—'}
        </dd>
      </div>
    </dl>
  );
}

function Spec({ spec }: { spec: Delivery['spec'] }) {
  if (spec.length === 0) return null;
  return (
    <section aria-labelledby="spec-title">
      <h2 id="spec-title">Spec</h2>
      <ul class="spec">
        {spec.map((entry, i) => (
          <li key={i}>
            {Object.entries(entry)
              .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
              .join(' · ')}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Package({
  delivery,
  manage,
  onChange,
}: {
  delivery: Delivery;
  manage: boolean;
  onChange: () => void;
}) {
  const { api, upload } = useSession();
  const media = useOwnMedia();
  const removing = useAction();
  const files = delivery.package;
  const send: Send = (chosen, onProgress, signal) => {
    const form = new FormData();
    for (const c of chosen) {
      // each file's label goes just before it
      form.append('label', c.label.trim() || c.file.name);
      form.append('files', c.file, c.file.name);
    }
    return upload(`/api/v1/admin/deliveries/${delivery.id}/files`, form, { onProgress, signal });
  };
  const visible =
    delivery.status === 'sent' || delivery.status === 'accepted'
      ? 'The engagements granted on it can fetch these files.'
      : 'Vendors see these files once the delivery is sent.';
  return (
    <section aria-labelledby="package-title">
      <h2 id="package-title">Package ({files.length})</h2>
      <p class="muted">{visible}</p>
      <ErrorNote error={removing.error} />
      {files.length === 0 ? (
        <Empty>No file in the package yet.</Empty>
      ) : (
        <FileTable
          files={files}
          load={media}
          caption={`Package of “${delivery.title}”`}
          actions={(f) =>
            manage ? (
              <ConfirmButton
                label="Remove"
                confirm={`Take “${f.label}” out of the package?`}
                onConfirm={() =>
                  removing.run(async () => {
                    await removeDeliveryFile(api, delivery.id, f.id);
                    onChange();
                  })
                }
              />
            ) : null
          }
        />
      )}
      {manage && delivery.status !== 'accepted' && (
        <UploadForm
          id="package-upload"
          title="Add files"
          sendLabel="Upload"
          labels
          send={send}
          onSent={onChange}
        />
      )}
    </section>
  );
}

function grantState(g: Grant): string {
  if (g.revoked_at) return `revoked ${when(g.revoked_at)}`;
  if (g.live) return g.expires_at ? `live until ${when(g.expires_at)}` : 'live';
  return 'no longer live';
}

function GrantedTo({ grants, engagements }: { grants: Grant[]; engagements: Map<number, Engagement> }) {
  return (
    <section aria-labelledby="granted-title">
      <h2 id="granted-title">Granted to ({grants.filter((g) => g.live).length} live)</h2>
      {grants.length === 0 ? (
        <Empty>No engagement holds a grant on it: grant it on a vendor’s page.</Empty>
      ) : (
        <ul class="granted">
          {grants.map((g) => {
            const e = engagements.get(g.engagement_id);
            return (
              <li key={g.id} class={g.live ? '' : 'inactive'}>
                <a href={href('vendors', g.engagement_id)}>
                  {e
                    ? `${e.organisation.name} (${e.ref ?? e.id})`
                    : (g.engagement_ref ?? `#${g.engagement_id}`)}
                </a>
                : {g.access === 'submit' ? 'read and submit' : 'read'} · {grantState(g)}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

/** Submissions older than the newest the row carries: paged from `GET /submissions?delivery_id=`, oldest first. */
function OlderSubmissions({
  delivery,
  shown,
  from,
  onReviewed,
}: {
  delivery: Delivery;
  shown: number;
  from: (engagementId: number | null) => string;
  onReviewed: () => void;
}) {
  const { api, me } = useSession();
  const media = useOwnMedia();
  const [open, setOpen] = useState(false);
  return (
    <details class="older" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        The newest {shown} of {delivery.submissions_total} are below; every one, oldest first
      </summary>
      {open && (
        <AllSubmissions
          api={api}
          delivery={delivery}
          render={(s) => (
            <SubmissionCard
              key={s.id}
              submission={s}
              delivery={delivery}
              from={from(s.engagement_id)}
              media={media}
              manage={abilities(me).manage}
              onReviewed={onReviewed}
            />
          )}
        />
      )}
    </details>
  );
}

function AllSubmissions({
  api,
  delivery,
  render,
}: {
  api: Api;
  delivery: Delivery;
  render: (s: Submission) => preact.JSX.Element;
}) {
  const paged = usePaged(
    (cursor, signal) =>
      page(
        api.GET('/api/v1/submissions', {
          params: { query: { delivery_id: delivery.id, limit: SUBMISSION_PAGE, cursor } },
          signal,
        }),
      ),
    [delivery.id, delivery.updated_at],
  );
  return (
    <>
      <ErrorNote error={paged.error} />
      {!paged.data && !paged.error && <Busy />}
      {paged.data?.rows.map(render)}
      <Pager paged={paged} label="Submissions" />
    </>
  );
}

const SUBMISSION_PAGE = 20;

/** Who holds grants on the delivery, and every engagement's name: what an admin key may read. */
function useGrants(deliveryId: number, manage: boolean, round: number) {
  const { api } = useSession();
  return useLoad(
    async (signal) => {
      if (!manage) return null;
      const [grants, engagements] = await Promise.all([
        must(api.GET('/api/v1/admin/grants', { params: { query: { include_inactive: 'true' } }, signal })),
        must(
          api.GET('/api/v1/admin/engagements', { params: { query: { include_archived: 'true' } }, signal }),
        ),
      ]);
      return {
        grants: grants.filter((g) => g.kind === 'delivery' && g.delivery_id === deliveryId),
        engagements: new Map(engagements.map((e) => [e.id, e])),
      };
    },
    [deliveryId, manage, round],
  );
}

/** One delivery: its status and next steps, its package, who may fetch it, and the work sent back. */
export function DeliveryPage({ id }: { id: number }) {
  const { api, me } = useSession();
  const manage = abilities(me).manage;
  const media = useOwnMedia();
  const [round, setRound] = useState(0);
  const refresh = () => setRound((r) => r + 1);
  const found = useLoad((signal) => findDelivery(api, id, signal), [id, round]);
  const access = useGrants(id, manage, round);
  const d = found.data;
  const from = useMemo(() => {
    const names = access.data?.engagements;
    return (engagementId: number | null) => {
      const e = engagementId === null ? undefined : names?.get(engagementId);
      return e
        ? `${e.organisation.name} (${e.ref ?? e.id})`
        : engagementId === null
          ? 'the production'
          : `engagement ${engagementId}`;
    };
  }, [access.data]);
  // newest first: the work waiting for a review is at the top
  const submissions = d ? [...d.submissions].reverse() : [];
  return (
    <Page title={d ? d.title : d === null ? 'No such delivery' : 'Delivery'} ready={d !== undefined}>
      <p>
        <a href={href('deliveries')}>← All deliveries</a>
      </p>
      <ErrorNote error={found.error} />
      {d === undefined && !found.error && <Busy />}
      {d === null && <Empty>There is no delivery {id} in this production.</Empty>}
      {d && (
        <>
          <Facts d={d} />
          <Spec spec={d.spec} />
          <StatusPanel delivery={d} manage={manage} onMoved={refresh} />
          <Package delivery={d} manage={manage} onChange={refresh} />
          {manage && (
            <>
              <ErrorNote error={access.error} title="Grants could not be listed" />
              {access.data && <GrantedTo grants={access.data.grants} engagements={access.data.engagements} />}
            </>
          )}
          <section aria-labelledby="subs-title">
            <h2 id="subs-title">Submissions ({d.submissions_total})</h2>
            {submissions.length === 0 && <Empty>No vendor has submitted work on it yet.</Empty>}
            {d.submissions_total > submissions.length && (
              <OlderSubmissions delivery={d} shown={submissions.length} from={from} onReviewed={refresh} />
            )}
            {submissions.map((s) => (
              <SubmissionCard
                key={s.id}
                submission={s}
                delivery={d}
                from={from(s.engagement_id)}
                media={media}
                manage={manage}
                onReviewed={refresh}
              />
            ))}
          </section>
        </>
      )}
    </Page>
  );
}
