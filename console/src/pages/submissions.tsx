import { useState } from 'preact/hooks';
import { reviewSubmission, type Review, type Submission } from '../api/production-side';
import type { Delivery } from '../api/types';
import { useSession } from '../session';
import { useAction } from '../ui/action';
import { FileTable } from '../ui/files';
import { ErrorNote } from '../ui/notes';
import { when } from '../ui/controls';
import type { MediaLoader } from '../ui/thumb';

export const DECISION: Record<Review['decision'], string> = {
  accepted: 'Accepted',
  changes_requested: 'Changes requested',
};

const STATUS: Record<Submission['status'], string> = {
  submitted: 'Waiting for review',
  ...DECISION,
};

export const SubmissionStatus = ({ status }: { status: Submission['status'] }) => (
  <span class={`badge status-${status}`}>{STATUS[status]}</span>
);

/** The production's answer to a submission, as its vendor and the coordinators read it. */
export function ReviewShown({ review }: { review: Review }) {
  return (
    <div class={`note ${review.decision === 'accepted' ? 'done' : 'warn'} review`}>
      <strong>{DECISION[review.decision]}</strong>
      {review.reviewed_by ? ` by ${review.reviewed_by}` : ''}, {when(review.reviewed_at)}
      {review.note && <p class="review-note">{review.note}</p>}
    </div>
  );
}

function ReviewForm({
  submission,
  delivery,
  onReviewed,
}: {
  submission: Submission;
  delivery: Delivery;
  onReviewed: () => void;
}) {
  const { api } = useSession();
  const [note, setNote] = useState('');
  const [acceptDelivery, setAcceptDelivery] = useState(false);
  const [missing, setMissing] = useState(false);
  const action = useAction();
  const id = `review-${submission.id}`;
  const decide = (decision: Review['decision']) => {
    // changes are asked for in words: the vendor reads them
    if (decision === 'changes_requested' && !note.trim()) return setMissing(true);
    setMissing(false);
    void action.run(async () => {
      await reviewSubmission(api, submission.id, {
        decision,
        note: note.trim(),
        ...(decision === 'accepted' && acceptDelivery ? { accept_delivery: true } : {}),
      });
      onReviewed();
    });
  };
  return (
    <form
      class="review-form"
      aria-label={`Review “${submission.title}”`}
      onSubmit={(e) => e.preventDefault()}
    >
      <div class="field">
        <label for={`${id}-note`}>Note to the vendor</label>
        <textarea
          id={`${id}-note`}
          rows={3}
          maxLength={20000}
          aria-invalid={missing}
          aria-describedby={missing ? `${id}-missing` : undefined}
          value={note}
          onInput={(e) => setNote(e.currentTarget.value)}
        />
        {missing && (
          <small id={`${id}-missing`} class="hint error-text" role="alert">
            Say what to change: the vendor reads this note.
          </small>
        )}
      </div>
      {delivery.status === 'sent' && (
        <label class="inline">
          <input
            type="checkbox"
            checked={acceptDelivery}
            onChange={(e) => setAcceptDelivery(e.currentTarget.checked)}
          />{' '}
          On accepting, also mark the delivery accepted
        </label>
      )}
      <div class="buttons">
        <button type="button" class="primary" disabled={action.busy} onClick={() => decide('accepted')}>
          Accept
        </button>
        <button type="button" disabled={action.busy} onClick={() => decide('changes_requested')}>
          Request changes
        </button>
      </div>
      <ErrorNote error={action.error} />
    </form>
  );
}

/** One submission: who sent it and when, its files (thumbnails, previews, downloads), its review. */
export function SubmissionCard({
  submission: s,
  delivery,
  from,
  media,
  manage,
  onReviewed,
}: {
  submission: Submission;
  delivery: Delivery;
  from: string;
  media: MediaLoader;
  manage: boolean;
  onReviewed: () => void;
}) {
  // a later review replaces the earlier one: offered on request for a reviewed submission
  const [again, setAgain] = useState(false);
  return (
    <article class="submission" aria-labelledby={`sub-${s.id}`}>
      <h3 id={`sub-${s.id}`}>{s.title}</h3>
      <p class="muted">
        From {from} · submitted {when(s.created_at)} · <SubmissionStatus status={s.status} />
      </p>
      {s.note && <p class="submission-note">{s.note}</p>}
      <FileTable files={s.media} load={media} caption={`Files of “${s.title}”`} />
      {s.review && <ReviewShown review={s.review} />}
      {manage && (s.status === 'submitted' || again) && (
        <ReviewForm
          submission={s}
          delivery={delivery}
          onReviewed={() => {
            setAgain(false);
            onReviewed();
          }}
        />
      )}
      {manage && s.status !== 'submitted' && !again && (
        <button type="button" onClick={() => setAgain(true)}>
          Change the review
        </button>
      )}
    </article>
  );
}
