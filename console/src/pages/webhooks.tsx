import { useState } from 'preact/hooks';
import { must } from '../api/client';
import type { CreatedWebhook, Webhook, WebhookDelivery } from '../api/types';
import { useSession } from '../session';
import { href } from '../router';
import { useAction } from '../ui/action';
import { useLoad } from '../ui/load';
import { Busy, Empty, ErrorNote } from '../ui/notes';
import { Page } from '../ui/page';
import { ConfirmButton, Field, ShownOnce, when } from '../ui/controls';
import { TableBox } from '../ui/table';

type Kind = NonNullable<Webhook['kinds']>[number];
const KINDS: Kind[] = [
  'asset',
  'version',
  'approval',
  'delivery',
  'scene',
  'shoot_day',
  'submission',
  'media',
  'note',
  'department_note',
  'ingredient',
  'script_change',
  'job',
  'engagement',
  'grant',
  'purchase_order',
  'cost_report',
  'person',
  'department',
  'organisation',
  'episode',
  'production',
  'storage_event',
  'storage_task',
];

function AddWebhook({ onAdded }: { onAdded: (w: CreatedWebhook) => void }) {
  const { api } = useSession();
  const [url, setUrl] = useState('');
  const [some, setSome] = useState(false);
  const [kinds, setKinds] = useState<Kind[]>([]);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const made = await must(
        api.POST('/api/v1/admin/webhooks', { body: { url: url.trim(), kinds: some ? kinds : null } }),
      );
      setUrl('');
      onAdded(made);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="hook-title">
      <h2 id="hook-title">Add a webhook</h2>
      <Field
        label="Receiver URL"
        id="hook-url"
        hint="http:// or https://; each change is POSTed there, signed with the secret"
      >
        <input
          id="hook-url"
          type="url"
          required
          maxLength={2000}
          aria-describedby="hook-url-hint"
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </Field>
      <fieldset>
        <legend>Which changes</legend>
        <label class="inline">
          <input type="radio" name="hook-which" checked={!some} onChange={() => setSome(false)} /> Every
          change
        </label>
        <label class="inline">
          <input type="radio" name="hook-which" checked={some} onChange={() => setSome(true)} /> Only these
          kinds
        </label>
        {some && (
          <div class="checks">
            {KINDS.map((k) => (
              <label key={k}>
                <input
                  type="checkbox"
                  checked={kinds.includes(k)}
                  onChange={(e) =>
                    setKinds(e.currentTarget.checked ? [...kinds, k] : kinds.filter((x) => x !== k))
                  }
                />{' '}
                {k.replace('_', ' ')}
              </label>
            ))}
          </div>
        )}
      </fieldset>
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.busy || (some && kinds.length === 0)}>
        {action.busy ? 'Adding…' : 'Add webhook'}
      </button>
    </form>
  );
}

function state(w: Webhook): string {
  if (!w.active) return 'Paused';
  if (w.failures > 0)
    return `Failing (${w.failures} in a row)${w.next_attempt_at ? `, next try ${when(w.next_attempt_at)}` : ''}`;
  return 'Delivering';
}

type Verb = 'pause' | 'resume' | 'remove';

function WebhookTable({ rows, act }: { rows: Webhook[]; act: (w: Webhook, verb: Verb) => Promise<unknown> }) {
  return (
    <TableBox label="Webhook subscriptions">
      <table>
        <caption class="sr-only">Webhook subscriptions</caption>
        <thead>
          <tr>
            <th scope="col">Receiver</th>
            <th scope="col">Kinds</th>
            <th scope="col">State</th>
            <th scope="col">Last delivered</th>
            <th scope="col">Last error</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((w) => (
            <tr key={w.id}>
              <th scope="row">
                <a href={href('webhooks', w.id)}>{w.url}</a>
              </th>
              <td>{w.kinds ? w.kinds.join(', ') : 'every change'}</td>
              <td>{state(w)}</td>
              <td>{when(w.last_delivered_at)}</td>
              <td>{w.last_error ?? '—'}</td>
              <td class="row-actions">
                {w.active ? (
                  <button type="button" onClick={() => act(w, 'pause')} aria-label={`Pause ${w.url}`}>
                    Pause
                  </button>
                ) : (
                  <button type="button" onClick={() => act(w, 'resume')} aria-label={`Resume ${w.url}`}>
                    Resume
                  </button>
                )}{' '}
                <ConfirmButton
                  label="Remove"
                  confirm={`Remove the webhook to ${w.url}?`}
                  onConfirm={() => act(w, 'remove')}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

export function Webhooks() {
  const { api } = useSession();
  const [round, setRound] = useState(0);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const action = useAction();
  const list = useLoad((signal) => must(api.GET('/api/v1/admin/webhooks', { signal })), [round]);
  const act = (w: Webhook, verb: Verb) =>
    action.run(async () => {
      const path = { params: { path: { id: w.id } } };
      if (verb === 'pause') await must(api.POST('/api/v1/admin/webhooks/{id}/pause', path));
      else if (verb === 'resume') await must(api.POST('/api/v1/admin/webhooks/{id}/resume', path));
      else await must(api.POST('/api/v1/admin/webhooks/{id}/remove', path));
      setRound(round + 1);
    });
  const rows = list.data;
  return (
    <Page
      title="Webhooks"
      ready={!!rows}
      actions={
        <button type="button" onClick={() => setRound(round + 1)}>
          Refresh
        </button>
      }
    >
      <p>
        Each subscription receives every change of the production (or the kinds it names), in order, at least
        once.
      </p>
      <ErrorNote error={list.error} />
      <ErrorNote error={action.error} />
      {!rows && !list.error && <Busy />}
      {rows && rows.length === 0 && <Empty>No webhook yet.</Empty>}
      {rows && rows.length > 0 && <WebhookTable rows={rows} act={act} />}
      {created?.secret && (
        <ShownOnce
          title={`Webhook to ${created.url} added`}
          secret={created.secret}
          what="signing secret"
          onDone={() => setCreated(null)}
        >
          <p>
            The receiver checks each delivery's <code>Prodgraph-Signature</code> header with it (the README
            shows how).
          </p>
        </ShownOnce>
      )}
      {!created && (
        <AddWebhook
          onAdded={(w) => {
            setCreated(w);
            setRound(round + 1);
          }}
        />
      )}
    </Page>
  );
}

function DeliveryTable({ rows }: { rows: WebhookDelivery[] }) {
  return (
    <TableBox label="Delivery attempts">
      <table>
        <caption class="sr-only">Delivery attempts, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Change</th>
            <th scope="col">Attempt</th>
            <th scope="col">Result</th>
            <th scope="col">Status</th>
            <th scope="col">Error</th>
            <th scope="col">Latency</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id}>
              <th scope="row">{when(d.at)}</th>
              <td>
                {d.change.kind ?? '—'} {d.change.id ?? ''} {d.change.op ?? ''}
              </td>
              <td>{d.attempt}</td>
              <td>{d.delivered ? 'Delivered' : 'Failed'}</td>
              <td>{d.status_code ?? '—'}</td>
              <td>{d.error ?? '—'}</td>
              <td class="num">{d.duration_ms} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

export function WebhookLog({ id }: { id: number }) {
  const { api } = useSession();
  const [round, setRound] = useState(0);
  const hook = useLoad(
    (signal) =>
      must(api.GET('/api/v1/admin/webhooks', { signal })).then((all) => all.find((w) => w.id === id) ?? null),
    [id, round],
  );
  const log = useLoad(
    (signal) =>
      must(
        api.GET('/api/v1/admin/webhooks/{id}/deliveries', {
          params: { path: { id }, query: { limit: 100 } },
          signal,
        }),
      ),
    [id, round],
  );
  const w = hook.data;
  const rows = log.data;
  return (
    <Page
      title={w ? `Deliveries to ${w.url}` : 'Webhook deliveries'}
      ready={!!rows}
      actions={
        <button type="button" onClick={() => setRound(round + 1)} disabled={log.loading}>
          {log.loading && rows ? 'Refreshing…' : 'Refresh'}
        </button>
      }
    >
      <p>
        <a href={href('webhooks')}>← All webhooks</a>
      </p>
      {w && (
        <p class="muted">
          {state(w)} · delivered up to change {w.cursor}
        </p>
      )}
      {w === null && <Empty>This webhook was removed.</Empty>}
      <ErrorNote error={hook.error ?? log.error} />
      {!rows && !log.error && <Busy />}
      {rows && rows.length === 0 && (
        <Empty>No delivery yet: it starts with the next change of the production.</Empty>
      )}
      {rows && rows.length > 0 && <DeliveryTable rows={rows} />}
    </Page>
  );
}
