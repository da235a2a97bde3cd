import { useState } from 'preact/hooks';
import { must } from '../api/client';
import type { AllowedPerson } from '../api/types';
import { useSession } from '../session';
import { useAction } from '../ui/action';
import { ConfirmButton, Field, when } from '../ui/controls';
import { useLoad } from '../ui/load';
import { Busy, Empty, ErrorNote } from '../ui/notes';
import { Page } from '../ui/page';
import { TableBox } from '../ui/table';

const ROLES = [
  ['viewer', 'viewer: browses'],
  ['coordinator', 'coordinator: everything but keys, webhooks and sign-in'],
  ['admin', 'admin: everything'],
] as const;

function AllowForm({ onAllowed }: { onAllowed: () => void }) {
  const { api } = useSession();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<AllowedPerson['role']>('coordinator');
  const [person, setPerson] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { email: email.trim(), role, ...(person.trim() ? { person: person.trim() } : {}) };
      await must(api.POST('/api/v1/admin/sign-in-people', { body }));
      setEmail('');
      setPerson('');
      onAllowed();
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="allow-title">
      <h3 id="allow-title">Let someone sign in</h3>
      <Field label="Email" id="allow-email" hint="As your identity provider knows it">
        <input
          id="allow-email"
          type="email"
          required
          aria-describedby="allow-email-hint"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </Field>
      <Field label="Role" id="allow-role" hint="What they may do in this console">
        <select
          id="allow-role"
          aria-describedby="allow-role-hint"
          value={role}
          onChange={(e) => setRole(e.currentTarget.value as AllowedPerson['role'])}
        >
          {ROLES.map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Person (ref, optional)"
        id="allow-person"
        hint="The production's person their work is recorded under"
      >
        <input
          id="allow-person"
          aria-describedby="allow-person-hint"
          value={person}
          onInput={(e) => setPerson(e.currentTarget.value)}
        />
      </Field>
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        {action.busy ? 'Allowing…' : 'Allow'}
      </button>
    </form>
  );
}

function People({ round, changed }: { round: number; changed: () => void }) {
  const { api } = useSession();
  const action = useAction();
  const people = useLoad((signal) => must(api.GET('/api/v1/admin/sign-in-people', { signal })), [round]);
  const withdraw = (p: AllowedPerson) =>
    action.run(async () => {
      await must(api.DELETE('/api/v1/admin/sign-in-people/{id}', { params: { path: { id: p.id } } }));
      changed();
    });
  const rows = people.data;
  return (
    <section aria-labelledby="people-title">
      <h2 id="people-title">Who may sign in</h2>
      <ErrorNote error={people.error} />
      <ErrorNote error={action.error} />
      {!rows && !people.error && <Busy />}
      {rows && rows.length === 0 && <Empty>Nobody yet: only keys sign in.</Empty>}
      {rows && rows.length > 0 && (
        <TableBox label="Who may sign in">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Person</th>
                <th scope="col">Since</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((p) => (
                <tr key={p.id}>
                  <th scope="row">{p.email}</th>
                  <td>{p.role}</td>
                  <td>{p.person?.name ?? '—'}</td>
                  <td>{when(p.created_at)}</td>
                  <td>
                    <ConfirmButton
                      label="Withdraw"
                      confirm={`Withdraw ${p.email}'s sign-in (their sessions end now)?`}
                      onConfirm={() => withdraw(p)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <AllowForm onAllowed={changed} />
    </section>
  );
}

function Sessions({ round, changed }: { round: number; changed: () => void }) {
  const { api, person } = useSession();
  const action = useAction();
  const sessions = useLoad((signal) => must(api.GET('/api/v1/admin/sessions', { signal })), [round]);
  const end = (id: number) =>
    action.run(async () => {
      await must(api.DELETE('/api/v1/admin/sessions/{id}', { params: { path: { id } } }));
      changed();
    });
  const rows = sessions.data;
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Signed in now</h2>
      <ErrorNote error={sessions.error} />
      <ErrorNote error={action.error} />
      {!rows && !sessions.error && <Busy />}
      {rows && rows.length === 0 && <Empty>Nobody is signed in.</Empty>}
      {rows && rows.length > 0 && (
        <TableBox label="Live sessions">
          <table>
            <thead>
              <tr>
                <th scope="col">Who</th>
                <th scope="col">Role</th>
                <th scope="col">From</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last seen</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.id}>
                  <th scope="row">
                    {s.name} <small>{s.email}</small>
                  </th>
                  <td>{s.role}</td>
                  <td>{s.address ?? '—'}</td>
                  <td>{when(s.created_at)}</td>
                  <td>{when(s.last_seen_at)}</td>
                  <td>
                    {s.id === person?.id ? (
                      'This session'
                    ) : (
                      <ConfirmButton
                        label="End"
                        confirm={`End ${s.name}'s session now?`}
                        onConfirm={() => end(s.id)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </section>
  );
}

/** Who may sign in with the studio's identity provider, and who is signed in now. */
export function SignInAdmin() {
  const [round, setRound] = useState(0);
  const changed = () => setRound((r) => r + 1);
  return (
    <Page title="Sign-in">
      <People round={round} changed={changed} />
      <Sessions round={round} changed={changed} />
    </Page>
  );
}
