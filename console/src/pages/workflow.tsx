import { useState } from 'preact/hooks';
import { href } from '../router';
import { page } from '../api/client';
import { useSession } from '../session';
import { Busy, ErrorNote } from '../ui/notes';
import { Pager, usePaged } from '../ui/paged';
import { Page } from '../ui/page';
import { Field, when } from '../ui/controls';
import { TableBox } from '../ui/table';

const PAGE = 50;
const APPROVAL_STATUSES = ['pending', 'approved', 'changes_requested', 'rejected'] as const;
type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export function Approvals() {
  const { api } = useSession();
  const [status, setStatus] = useState<'' | ApprovalStatus>('pending');
  const paged = usePaged(
    (cursor, signal) =>
      page(
        api.GET('/api/v1/approvals', {
          params: { query: { limit: PAGE, cursor, ...(status ? { status } : {}) } },
          signal,
        }),
      ),
    [status],
  );
  const rows = paged.data?.rows;
  return (
    <Page title="Approvals" ready={!!rows}>
      <form class="filters" aria-label="Filter approvals" onSubmit={(e) => e.preventDefault()}>
        <Field label="Status" id="ap-status">
          <select
            id="ap-status"
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value as ApprovalStatus)}
          >
            <option value="">Any</option>
            {APPROVAL_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace('_', ' ')}
              </option>
            ))}
          </select>
        </Field>
      </form>
      <ErrorNote error={paged.error} />
      {!rows && !paged.error && <Busy />}
      {rows && (
        <TableBox label={`Approvals, page ${paged.number}`}>
          <table aria-busy={paged.loading}>
            <caption class="sr-only">Approvals, page {paged.number}</caption>
            <thead>
              <tr>
                <th scope="col">Approval</th>
                <th scope="col">On</th>
                <th scope="col">Department</th>
                <th scope="col">Status</th>
                <th scope="col">Waiting on</th>
                <th scope="col">Due</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => {
                const step = a.steps.find((s) => s.current);
                return (
                  <tr key={a.id}>
                    <th scope="row">{a.title}</th>
                    <td>
                      {a.subject
                        ? `${a.subject.label}${a.subject.version ? ` v${a.subject.version}` : ''}`
                        : '—'}
                    </td>
                    <td>{a.department ?? '—'}</td>
                    <td>{a.status.replace('_', ' ')}</td>
                    <td>{step ? (step.person_name ?? step.role ?? '—') : '—'}</td>
                    <td>{a.due ?? '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
      {rows && rows.length === 0 && <p class="empty">No approval with this status.</p>}
      <Pager paged={paged} label="Approvals" />
    </Page>
  );
}

export function Deliveries() {
  const { api } = useSession();
  const paged = usePaged(
    (cursor, signal) =>
      page(api.GET('/api/v1/deliveries', { params: { query: { limit: PAGE, cursor } }, signal })),
    [],
  );
  const rows = paged.data?.rows;
  return (
    <Page title="Deliveries" ready={!!rows}>
      <ErrorNote error={paged.error} />
      {!rows && !paged.error && <Busy />}
      {rows && (
        <TableBox label={`Deliveries, page ${paged.number}`}>
          <table aria-busy={paged.loading}>
            <caption class="sr-only">Deliveries, page {paged.number}</caption>
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Kind</th>
                <th scope="col">From → to</th>
                <th scope="col">Status</th>
                <th scope="col">Gated by</th>
                <th scope="col">Due</th>
                <th scope="col">Sent</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id}>
                  <th scope="row">
                    <a href={href('deliveries', d.id)}>{d.title}</a>
                  </th>
                  <td>{d.kind}</td>
                  <td>
                    {d.from_department ?? '—'} → {d.external_to ?? d.to_department ?? '—'}
                  </td>
                  <td>{d.status}</td>
                  <td>
                    {d.gating_approval
                      ? `${d.gating_approval.title} (${d.gating_approval.status.replace('_', ' ')})`
                      : '—'}
                  </td>
                  <td>{d.due ?? '—'}</td>
                  <td>{when(d.sent_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {rows && rows.length === 0 && <p class="empty">No deliveries.</p>}
      <Pager paged={paged} label="Deliveries" />
    </Page>
  );
}
