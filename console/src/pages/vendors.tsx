import { useState } from 'preact/hooks';
import { must } from '../api/client';
import type { Engagement } from '../api/types';
import { abilities, useSession } from '../session';
import { go, href } from '../router';
import { useAction } from '../ui/action';
import { useLoad } from '../ui/load';
import { Busy, Empty, ErrorNote } from '../ui/notes';
import { Page } from '../ui/page';
import { Field, when } from '../ui/controls';

const slug = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);

function DepartmentChecks({ picked, onPick }: { picked: string[]; onPick: (slugs: string[]) => void }) {
  const { api } = useSession();
  const departments = useLoad((signal) => must(api.GET('/api/v1/departments', { signal })), []);
  return (
    <fieldset>
      <legend>Departments it works for (they narrow the approvals, notes and cost lines it sees)</legend>
      <ErrorNote error={departments.error} title="Departments could not be listed" />
      <div class="checks">
        {departments.data?.map((d) => (
          <label key={d.slug}>
            <input
              type="checkbox"
              checked={picked.includes(d.slug)}
              onChange={(e) =>
                onPick(e.currentTarget.checked ? [...picked, d.slug] : picked.filter((s) => s !== d.slug))
              }
            />{' '}
            {d.name}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

function EngageForm({ onEngaged }: { onEngaged: (e: Engagement) => void }) {
  const { api, me } = useSession();
  const orgs = useLoad((signal) => must(api.GET('/api/v1/admin/organisations', { signal })), []);
  const [org, setOrg] = useState('');
  const [ref, setRef] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { ref: ref.trim(), organisation_id: Number(org), departments: picked };
      onEngaged(await must(api.POST('/api/v1/admin/engagements', { body })));
    });
  };
  const pickOrg = (id: string) => {
    setOrg(id);
    const o = orgs.data?.find((x) => String(x.id) === id);
    if (o && !ref) setRef(`eng-${slug(o.ref ?? o.name)}`);
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="engage-title">
      <h2 id="engage-title">Engage a vendor</h2>
      <ErrorNote error={orgs.error} title="Organisations could not be listed" />
      <Field label="Organisation" id="eng-org">
        <select id="eng-org" required value={org} onChange={(e) => pickOrg(e.currentTarget.value)}>
          <option value="">Choose…</option>
          {orgs.data?.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
              {o.engagements ? ` (${o.engagements} engagement${o.engagements === 1 ? '' : 's'})` : ''}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Reference"
        id="eng-ref"
        hint="A short handle, unique in the production: letters, digits, . _ : -"
      >
        <input
          id="eng-ref"
          required
          maxLength={200}
          pattern="[A-Za-z0-9][A-Za-z0-9._:\-]*"
          aria-describedby="eng-ref-hint"
          value={ref}
          onInput={(e) => setRef(e.currentTarget.value)}
        />
      </Field>
      {/* the department list needs `read`; an admin-only key engages without departments */}
      {abilities(me).browse && <DepartmentChecks picked={picked} onPick={setPicked} />}
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        {action.busy ? 'Engaging…' : 'Engage'}
      </button>
    </form>
  );
}

export function Vendors() {
  const { api } = useSession();
  const [archived, setArchived] = useState(false);
  const list = useLoad(
    (signal) =>
      must(
        api.GET('/api/v1/admin/engagements', {
          params: { query: archived ? { include_archived: 'true' } : {} },
          signal,
        }),
      ),
    [archived],
  );
  const rows = list.data;
  return (
    <Page title="Vendors" ready={!!rows}>
      <p>
        Each engagement is one vendor's access: what its keys reach is exactly what you grant it, judged on
        every request.
      </p>
      <label class="inline">
        <input type="checkbox" checked={archived} onChange={(e) => setArchived(e.currentTarget.checked)} />{' '}
        Show archived engagements
      </label>
      <ErrorNote error={list.error} />
      {!rows && !list.error && <Busy />}
      {rows && rows.length === 0 && <Empty>No vendor is engaged yet.</Empty>}
      {rows && rows.length > 0 && (
        <table>
          <caption class="sr-only">Engagements</caption>
          <thead>
            <tr>
              <th scope="col">Engagement</th>
              <th scope="col">Organisation</th>
              <th scope="col">Departments</th>
              <th scope="col">Live grants</th>
              <th scope="col">Keys</th>
              <th scope="col">State</th>
              <th scope="col">
                <span class="sr-only">See as vendor</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((e) => (
              <tr key={e.id}>
                <th scope="row">
                  <a href={href('vendors', e.id)}>{e.ref ?? `#${e.id}`}</a>
                </th>
                <td>{e.organisation.name}</td>
                <td>{e.departments.join(', ') || '—'}</td>
                <td>{e.live_grants}</td>
                <td>{e.keys}</td>
                <td>{e.archived_at ? `Archived ${when(e.archived_at)}` : 'Active'}</td>
                <td>
                  <a
                    href={href('vendors', e.id, 'view')}
                    aria-label={`See as vendor: ${e.organisation.name} (${e.ref ?? e.id})`}
                  >
                    See as vendor
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <EngageForm onEngaged={(e) => go('vendors', e.id)} />
    </Page>
  );
}
