import { useState } from 'preact/hooks';
import { must } from '../api/client';
import type { ApiKey, Engagement, MintedKey } from '../api/types';
import { useSession } from '../session';
import { useAction } from '../ui/action';
import { useLoad } from '../ui/load';
import { Busy, Empty, ErrorNote } from '../ui/notes';
import { ConfirmButton, Field, ShownOnce, when } from '../ui/controls';
import { TableBox } from '../ui/table';

const VENDOR_SCOPES = [
  ['read', 'read: bundles, turnovers, media'],
  ['submit:turnover', 'submit:turnover: upload work on turnovers it may submit to'],
  ['read:money', 'read:money: its own purchase orders'],
] as const;

function MintForm({ engagement, onMinted }: { engagement: Engagement; onMinted: (k: MintedKey) => void }) {
  const { api } = useSession();
  const [label, setLabel] = useState(`${engagement.organisation.name} automation`);
  const [scopes, setScopes] = useState<ApiKey['scopes']>(['read', 'submit:turnover']);
  const [expires, setExpires] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = {
        label: label.trim(),
        engagement_id: engagement.id,
        scopes,
        // a date alone: the key stops at midnight UTC that day; none: the server's default, if any
        ...(expires ? { expires_at: `${expires}T00:00:00Z` } : {}),
      };
      onMinted(await must(api.POST('/api/v1/admin/keys', { body })));
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="mint-title">
      <h3 id="mint-title">Mint a key for this vendor</h3>
      <Field
        label="Label"
        id="key-label"
        hint="Who or what holds the key: it names the key in the activity feed"
      >
        <input
          id="key-label"
          required
          maxLength={200}
          aria-describedby="key-label-hint"
          value={label}
          onInput={(e) => setLabel(e.currentTarget.value)}
        />
      </Field>
      <Field
        label="Expires"
        id="key-expires"
        hint="Optional: the key is refused from midnight UTC that day. Empty: the server's default for vendor keys, if one is set"
      >
        <input
          id="key-expires"
          type="date"
          aria-describedby="key-expires-hint"
          value={expires}
          onInput={(e) => setExpires(e.currentTarget.value)}
        />
      </Field>
      <fieldset>
        <legend>Scopes</legend>
        <div class="checks">
          {VENDOR_SCOPES.map(([scope, text]) => (
            <label key={scope}>
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) =>
                  setScopes(e.currentTarget.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope))
                }
              />{' '}
              {text}
            </label>
          ))}
        </div>
      </fieldset>
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.busy || scopes.length === 0}>
        {action.busy ? 'Minting…' : 'Mint key'}
      </button>
    </form>
  );
}

const expired = (k: ApiKey) => k.expires_at !== null && Date.parse(k.expires_at) <= Date.now();

function stateOf(k: ApiKey): string {
  if (k.revoked_at) return `Revoked ${when(k.revoked_at)}`;
  return expired(k) ? 'Expired' : 'Active';
}

function KeyTable({
  rows,
  caption,
  revoke,
}: {
  rows: ApiKey[];
  caption: string;
  revoke: (k: ApiKey) => Promise<unknown>;
}) {
  return (
    <TableBox label={caption}>
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Starts with</th>
            <th scope="col">Scopes</th>
            <th scope="col">Made</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">State</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((k) => (
            <tr key={k.id} class={k.revoked_at || expired(k) ? 'inactive' : ''}>
              <th scope="row">{k.label}</th>
              <td>
                <code>{k.prefix}…</code>
              </td>
              <td>{k.scopes.join(', ')}</td>
              <td>{when(k.created_at)}</td>
              <td>{k.last_used_at ? when(k.last_used_at) : 'Never'}</td>
              <td>{k.expires_at ? when(k.expires_at) : 'Never'}</td>
              <td>{stateOf(k)}</td>
              <td>
                {!k.revoked_at && (
                  <ConfirmButton
                    label="Revoke"
                    confirm={`Revoke key "${k.label}"?`}
                    onConfirm={() => revoke(k)}
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

/** The keys bound to an engagement (never their tokens), with revoke and mint (the token shown once). */
export function Keys({ engagement, onChange }: { engagement: Engagement; onChange: () => void }) {
  const { api } = useSession();
  const [round, setRound] = useState(0);
  const [minted, setMinted] = useState<MintedKey | null>(null);
  const action = useAction();
  const keys = useLoad(
    (signal) =>
      must(api.GET('/api/v1/admin/keys', { params: { query: { engagement_id: engagement.id } }, signal })),
    [engagement.id, round],
  );
  const changed = () => {
    setRound(round + 1);
    onChange();
  };
  const revoke = (k: ApiKey) =>
    action.run(async () => {
      await must(api.POST('/api/v1/admin/keys/{id}/revoke', { params: { path: { id: k.id } } }));
      changed();
    });
  const rows = keys.data;
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">Keys</h2>
      <ErrorNote error={keys.error} />
      <ErrorNote error={action.error} />
      {!rows && !keys.error && <Busy />}
      {rows && rows.length === 0 && <Empty>No key yet.</Empty>}
      {rows && rows.length > 0 && (
        <KeyTable rows={rows} caption={`Keys bound to ${engagement.ref}`} revoke={revoke} />
      )}
      {minted?.token && (
        <ShownOnce
          title={`Key "${minted.label}" minted`}
          secret={minted.token}
          what="key"
          onDone={() => setMinted(null)}
        >
          <p>
            The vendor uses it as <code>Authorization: Bearer …</code> on the API, or signs in to this console
            with it.
          </p>
        </ShownOnce>
      )}
      {!engagement.archived_at && !minted && (
        <MintForm
          engagement={engagement}
          onMinted={(k) => {
            setMinted(k);
            changed();
          }}
        />
      )}
    </section>
  );
}
