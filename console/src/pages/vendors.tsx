import { useMemo, useState } from 'preact/hooks';
import { must } from '../api/client';
import { createOrganisation } from '../api/production-side';
import type { Engagement } from '../api/types';
import { abilities, useSession } from '../session';
import { go, href } from '../router';
import { useAction } from '../ui/action';
import { useLoad } from '../ui/load';
import { Busy, Empty, ErrorNote } from '../ui/notes';
import { Page } from '../ui/page';
import { Field, when } from '../ui/controls';
import { TableBox } from '../ui/table';

const slug = (name: string) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');

/** A handle's own words, without the kind of thing it names ("org-northlight" → "northlight"). */
const bare = (handle: string) => handle.replace(/^(org|organi[sz]ation|vendor|eng|engagement)-/, '');

/**
 * The reference suggested for a new engagement: `eng-` and the organisation's own handle (its
 * ref without its `org-`, else its name), never a prefix twice (ref "org-northlight" gives
 * "eng-northlight"; a new "Brand New VFX Co" without a ref gives "eng-brand-new-vfx-co"), and
 * one the listed engagements do not already use (`-2`, `-3`… when taken).
 */
export function suggestRef(org: { ref: string | null; name: string }, taken: ReadonlySet<string>): string {
  const fromRef = org.ref ? bare(slug(org.ref)) : '';
  const base = `eng-${fromRef || bare(slug(org.name)) || 'vendor'}`;
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

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

/** The organisation select's choice that opens the new organisation's name field. */
const NEW_ORG = 'new';

function EngageForm({
  taken,
  onEngaged,
}: {
  taken: ReadonlySet<string>;
  onEngaged: (e: Engagement) => void;
}) {
  const { api, me } = useSession();
  const [round, setRound] = useState(0);
  const orgs = useLoad((signal) => must(api.GET('/api/v1/admin/organisations', { signal })), [round]);
  const [org, setOrg] = useState('');
  const [newName, setNewName] = useState('');
  const [ref, setRef] = useState('');
  const [refTyped, setRefTyped] = useState(false);
  const [picked, setPicked] = useState<string[]>([]);
  const action = useAction();
  const suggest = (o: { ref: string | null; name: string } | undefined) => {
    if (!refTyped) setRef(o && o.name.trim() ? suggestRef(o, taken) : '');
  };
  const pickOrg = (id: string) => {
    setOrg(id);
    suggest(id === NEW_ORG ? { ref: null, name: newName } : orgs.data?.find((x) => String(x.id) === id));
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      let organisationId = Number(org);
      if (org === NEW_ORG) organisationId = (await createOrganisation(api, { name: newName.trim() })).id;
      const body = { ref: ref.trim(), organisation_id: organisationId, departments: picked };
      const engaged = await must(api.POST('/api/v1/admin/engagements', { body })).catch((err: unknown) => {
        if (org === NEW_ORG) {
          // the organisation is made: it is listed and chosen, so engaging again makes no second one
          setOrg(String(organisationId));
          setNewName('');
          setRound((r) => r + 1);
        }
        throw err;
      });
      onEngaged(engaged);
    });
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
          <option value={NEW_ORG}>A new organisation…</option>
        </select>
      </Field>
      {org === NEW_ORG && (
        <Field
          label="New organisation’s name"
          id="eng-org-name"
          hint="Added to the production’s organisations when you engage it"
        >
          <input
            id="eng-org-name"
            required
            maxLength={200}
            aria-describedby="eng-org-name-hint"
            value={newName}
            onInput={(e) => {
              setNewName(e.currentTarget.value);
              suggest({ ref: null, name: e.currentTarget.value });
            }}
          />
        </Field>
      )}
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
          onInput={(e) => {
            setRef(e.currentTarget.value);
            setRefTyped(e.currentTarget.value !== '');
          }}
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
  const taken = useMemo(() => new Set((rows ?? []).flatMap((e) => (e.ref ? [e.ref] : []))), [rows]);
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
        <TableBox label="Engagements">
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
        </TableBox>
      )}
      <EngageForm taken={taken} onEngaged={(e) => go('vendors', e.id)} />
    </Page>
  );
}
