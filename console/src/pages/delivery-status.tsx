import { useState } from 'preact/hooks';
import { DELIVERY_TRANSITIONS } from '../../../src/domain/delivery-status.js';
import { setDeliveryStatus, type DeliveryStatus } from '../api/production-side';
import type { Delivery } from '../api/types';
import { useSession } from '../session';
import { useAction } from '../ui/action';
import { ErrorNote } from '../ui/notes';
import { Field, when } from '../ui/controls';

/** Where a delivery may go from each status: the server's own table (it refuses any other move). */
const NEXT = DELIVERY_TRANSITIONS;

/** A step along draft → ready → sent → accepted (the others go back, or aside). */
const forward = (from: DeliveryStatus, to: DeliveryStatus) =>
  from !== 'blocked' &&
  (to === 'ready' || to === 'sent' || to === 'accepted') &&
  !(from === 'sent' && to === 'ready');

/** What the button for each move says. */
function moveLabel(from: DeliveryStatus, to: DeliveryStatus, external: boolean): string {
  if (to === 'blocked') return 'Block';
  if (from === 'blocked') return `Unblock as ${to}`;
  if (to === 'ready') return from === 'sent' ? 'Recall (back to ready)' : 'Mark ready';
  if (to === 'sent') return external ? 'Send to the vendor' : 'Send';
  if (to === 'accepted') return 'Mark accepted';
  return `Make ${to}`;
}

const MEANING: Record<DeliveryStatus, string> = {
  draft: 'Being put together: nobody outside sees its package.',
  ready: 'Ready to send: vendors do not see its package yet.',
  sent: 'Sent: the engagements granted on it can fetch its package.',
  accepted: 'Accepted: final.',
  blocked: 'Blocked: waiting on something before it can move on.',
};

export function StatusPanel({
  delivery,
  manage,
  onMoved,
}: {
  delivery: Delivery;
  manage: boolean;
  onMoved: (d: Delivery) => void;
}) {
  const { api } = useSession();
  const [note, setNote] = useState('');
  const action = useAction();
  const next = NEXT[delivery.status];
  const move = (to: DeliveryStatus) =>
    void action.run(async () => {
      const moved = await setDeliveryStatus(api, delivery.id, {
        status: to,
        ...(note.trim() ? { note } : {}),
      });
      setNote('');
      onMoved(moved);
    });
  return (
    <section aria-labelledby="status-title">
      <h2 id="status-title">Status</h2>
      <p>
        <span class={`badge status-${delivery.status}`}>{delivery.status}</span> {MEANING[delivery.status]}
        {delivery.sent_at && <span class="muted"> Sent {when(delivery.sent_at)}.</span>}
      </p>
      {manage && next.length > 0 && (
        <div class="card">
          <Field label="Note (optional)" id="status-note" hint="Kept with the change in the activity feed">
            <input
              id="status-note"
              maxLength={2000}
              aria-describedby="status-note-hint"
              value={note}
              onInput={(e) => setNote(e.currentTarget.value)}
            />
          </Field>
          <div class="buttons" role="group" aria-label="Next steps">
            {next.map((to) => (
              <button
                key={to}
                type="button"
                class={to === 'blocked' ? 'danger' : forward(delivery.status, to) ? 'primary' : undefined}
                disabled={action.busy}
                onClick={() => move(to)}
              >
                {moveLabel(delivery.status, to, delivery.kind === 'external')}
              </button>
            ))}
          </div>
          <ErrorNote error={action.error} />
        </div>
      )}
    </section>
  );
}
