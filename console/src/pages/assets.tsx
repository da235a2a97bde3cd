import { useEffect, useState } from 'preact/hooks';
import { must, page } from '../api/client';
import { href } from '../router';
import { useSession } from '../session';
import { useLoad } from '../ui/load';
import { Busy, ErrorNote } from '../ui/notes';
import { Pager, usePaged } from '../ui/paged';
import { Page } from '../ui/page';
import { Field, when } from '../ui/controls';
import { TableBox } from '../ui/table';

const PAGE = 100;
const STATUSES = ['planned', 'active', 'blocked', 'done'] as const;

interface Filters {
  department: string;
  kind: string;
  status: '' | (typeof STATUSES)[number];
  released: '' | 'true' | 'false';
}

/** A text filter applied once typing pauses, so each key press is not a request. */
function useSettled(value: string, ms = 350): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

function FilterForm({
  filters,
  kind,
  onKind,
  set,
}: {
  filters: Filters;
  kind: string;
  onKind: (v: string) => void;
  set: (f: Partial<Filters>) => void;
}) {
  const { api } = useSession();
  const departments = useLoad((signal) => must(api.GET('/api/v1/departments', { signal })), []);
  return (
    <form class="filters" role="search" aria-label="Filter assets" onSubmit={(e) => e.preventDefault()}>
      <Field label="Department" id="f-dept">
        <select
          id="f-dept"
          value={filters.department}
          onChange={(e) => set({ department: e.currentTarget.value })}
        >
          <option value="">Any</option>
          {departments.data?.map((d) => (
            <option key={d.slug} value={d.slug}>
              {d.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Kind" id="f-kind">
        <input
          id="f-kind"
          type="search"
          placeholder="character, prop…"
          value={kind}
          onInput={(e) => onKind(e.currentTarget.value)}
        />
      </Field>
      <Field label="Status" id="f-status">
        <select
          id="f-status"
          value={filters.status}
          onChange={(e) => set({ status: e.currentTarget.value as Filters['status'] })}
        >
          <option value="">Any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Released version" id="f-released">
        <select
          id="f-released"
          value={filters.released}
          onChange={(e) => set({ released: e.currentTarget.value as Filters['released'] })}
        >
          <option value="">Either</option>
          <option value="true">Has one</option>
          <option value="false">Has none</option>
        </select>
      </Field>
      <ErrorNote error={departments.error} title="Departments could not be listed" />
    </form>
  );
}

export function Assets() {
  const { api } = useSession();
  const [filters, setFilters] = useState<Filters>({ department: '', kind: '', status: '', released: '' });
  const [kindText, setKindText] = useState('');
  const kind = useSettled(kindText.trim());
  const query = {
    limit: PAGE,
    ...(filters.department ? { department: filters.department } : {}),
    ...(kind ? { kind } : {}),
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.released ? { released: filters.released } : {}),
  };
  const paged = usePaged(
    (cursor, signal) => page(api.GET('/api/v1/assets', { params: { query: { ...query, cursor } }, signal })),
    [query],
  );
  const rows = paged.data?.rows;
  return (
    <Page title="Assets" ready={!!rows}>
      <FilterForm
        filters={filters}
        kind={kindText}
        onKind={setKindText}
        set={(f) => setFilters({ ...filters, ...f })}
      />
      <ErrorNote error={paged.error} />
      {!rows && !paged.error && <Busy />}
      {rows && (
        <TableBox label={`Assets, page ${paged.number}`}>
          <table aria-busy={paged.loading}>
            <caption class="sr-only">Assets, page {paged.number}</caption>
            <thead>
              <tr>
                <th scope="col">Asset</th>
                <th scope="col">Kind</th>
                <th scope="col">Department</th>
                <th scope="col">Status</th>
                <th scope="col">Versions</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => (
                <tr key={a.node_id}>
                  <th scope="row">
                    <a href={href('assets', a.node_id)}>{a.label}</a>
                  </th>
                  <td>{a.kind}</td>
                  <td>{a.department ?? '—'}</td>
                  <td>{a.status}</td>
                  <td>{a.versions}</td>
                  <td>{when(a.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {rows && rows.length === 0 && <p class="empty">No asset matches these filters.</p>}
      <Pager paged={paged} label="Assets" />
    </Page>
  );
}
