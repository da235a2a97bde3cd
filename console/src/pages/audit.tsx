import { useEffect, useState } from 'preact/hooks';
import { must, page } from '../api/client';
import type { AuditEvent } from '../api/types';
import { useSession } from '../session';
import { useLoad } from '../ui/load';
import { Busy, ErrorNote } from '../ui/notes';
import { Pager, usePaged } from '../ui/paged';
import { Page } from '../ui/page';
import { Field, when } from '../ui/controls';
import { TableBox } from '../ui/table';

const PAGE = 100;

/** The filter's choices: a family of actions, or one action. */
const ACTIONS = [
  ['grant', 'Grants'],
  ['key', 'Keys'],
  ['engagement', 'Engagements'],
  ['organisation', 'Organisations'],
  ['webhook', 'Webhooks'],
  ['delivery', 'Delivery status'],
  ['package', 'Package files and downloads'],
  ['package.download', 'Package downloads'],
  ['media.download', 'Media downloads'],
  ['submission', 'Reviews'],
  ['session', 'Sign-ins'],
  ['access.refused', 'Refused access'],
] as const;

interface Filters {
  engagement: string;
  action: string;
  since: string;
  until: string;
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

/** `key 12`, `grant 4`: the object a row names, typed as the filter takes it (`key:12`). */
const objectOf = (e: AuditEvent) =>
  e.object_type === null ? '—' : `${e.object_type}${e.object_id === null ? '' : ` ${e.object_id}`}`;

function parseObject(text: string): { object_type?: string; object_id?: number } {
  const [type, id] = text
    .trim()
    .toLowerCase()
    .split(/[\s:]+/);
  if (!type || !/^[a-z_]+$/.test(type)) return {};
  const n = Number(id);
  return { object_type: type, ...(id && Number.isInteger(n) && n > 0 ? { object_id: n } : {}) };
}

function FilterForm({
  engagements,
  filters,
  set,
  actor,
  onActor,
  object,
  onObject,
}: {
  engagements: ReturnType<typeof useEngagements>;
  filters: Filters;
  set: (f: Partial<Filters>) => void;
  actor: string;
  onActor: (v: string) => void;
  object: string;
  onObject: (v: string) => void;
}) {
  return (
    <form
      class="filters"
      role="search"
      aria-label="Filter the audit trail"
      onSubmit={(e) => e.preventDefault()}
    >
      <Field label="Who" id="f-actor" hint="A key's prefix or label, or the name shown">
        <input
          id="f-actor"
          type="search"
          aria-describedby="f-actor-hint"
          value={actor}
          onInput={(e) => onActor(e.currentTarget.value)}
        />
      </Field>
      <Field label="Vendor" id="f-engagement">
        <select
          id="f-engagement"
          value={filters.engagement}
          onChange={(e) => set({ engagement: e.currentTarget.value })}
        >
          <option value="">Any</option>
          {engagements.data?.map((e) => (
            <option key={e.id} value={String(e.id)}>
              {e.organisation.name} ({e.ref ?? e.id})
            </option>
          ))}
        </select>
      </Field>
      <Field label="What" id="f-action">
        <select id="f-action" value={filters.action} onChange={(e) => set({ action: e.currentTarget.value })}>
          <option value="">Anything</option>
          {ACTIONS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Object" id="f-object" hint="A kind, or a kind and id: grant, key 12, media 40">
        <input
          id="f-object"
          type="search"
          aria-describedby="f-object-hint"
          value={object}
          onInput={(e) => onObject(e.currentTarget.value)}
        />
      </Field>
      <Field label="From" id="f-since">
        <input
          id="f-since"
          type="date"
          value={filters.since}
          onInput={(e) => set({ since: e.currentTarget.value })}
        />
      </Field>
      <Field label="Before" id="f-until">
        <input
          id="f-until"
          type="date"
          value={filters.until}
          onInput={(e) => set({ until: e.currentTarget.value })}
        />
      </Field>
      <ErrorNote error={engagements.error} title="Vendors could not be listed" />
    </form>
  );
}

/** Every engagement, archived ones too: the filter offers them and the table names them. */
function useEngagements() {
  const { api } = useSession();
  return useLoad(
    (signal) =>
      must(api.GET('/api/v1/admin/engagements', { params: { query: { include_archived: '1' } }, signal })),
    [],
  );
}

/** Who did what, when and from where: the production's audit trail, newest first. */
export function Audit() {
  const { api } = useSession();
  const engagements = useEngagements();
  const vendor = (id: number | null) => {
    if (id === null) return '—';
    const e = engagements.data?.find((x) => x.id === id);
    return e ? `${e.organisation.name} (${e.ref ?? e.id})` : String(id);
  };
  const [filters, setFilters] = useState<Filters>({ engagement: '', action: '', since: '', until: '' });
  const [actorText, setActorText] = useState('');
  const [objectText, setObjectText] = useState('');
  const actor = useSettled(actorText.trim());
  const object = useSettled(objectText);
  const query = {
    limit: PAGE,
    ...(actor ? { actor } : {}),
    ...(filters.engagement ? { engagement_id: Number(filters.engagement) } : {}),
    ...(filters.action ? { action: filters.action } : {}),
    ...parseObject(object),
    // dates are whole UTC days: from the start of one, before the start of the other
    ...(filters.since ? { since: `${filters.since}T00:00:00Z` } : {}),
    ...(filters.until ? { until: `${filters.until}T00:00:00Z` } : {}),
  };
  const paged = usePaged(
    (cursor, signal) =>
      page(api.GET('/api/v1/admin/audit', { params: { query: { ...query, cursor } }, signal })),
    [query],
  );
  const rows = paged.data?.rows;
  return (
    <Page title="Audit trail" ready={!!rows}>
      <p>
        Every change to vendors' access, keys, webhooks, deliveries and reviews, every file a vendor fetched,
        and every time a known key or session was turned away from a route.
      </p>
      <FilterForm
        engagements={engagements}
        filters={filters}
        set={(f) => setFilters({ ...filters, ...f })}
        actor={actorText}
        onActor={setActorText}
        object={objectText}
        onObject={setObjectText}
      />
      <ErrorNote error={paged.error} />
      {!rows && !paged.error && <Busy />}
      {rows && rows.length > 0 && (
        <TableBox label={`Audit trail, page ${paged.number}`}>
          <table aria-busy={paged.loading}>
            <caption class="sr-only">Audit trail, page {paged.number}</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Object</th>
                <th scope="col">Summary</th>
                <th scope="col">Vendor</th>
                <th scope="col">Address</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.id} class={e.outcome === 'refused' ? 'inactive' : ''}>
                  <td>{when(e.at)}</td>
                  <th scope="row">
                    {e.actor}
                    {e.key_prefix && (
                      <>
                        {' '}
                        <code>{e.key_prefix}…</code>
                      </>
                    )}
                  </th>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>{objectOf(e)}</td>
                  <td>{e.summary}</td>
                  <td>{vendor(e.engagement_id)}</td>
                  <td>{e.ip ?? 'CLI'}</td>
                  <td>{e.outcome === 'ok' ? 'Done' : 'Refused'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {rows && rows.length === 0 && <p class="empty">Nothing recorded matches these filters.</p>}
      <Pager paged={paged} label="Audit trail" />
    </Page>
  );
}
