import { useState } from 'preact/hooks';
import type { Turnover } from '../api/types';
import { has, useSession } from '../session';
import { when } from '../ui/controls';
import { FileTable } from '../ui/files';
import { Empty } from '../ui/notes';
import type { MediaLoader } from '../ui/thumb';
import { UploadForm, type Send } from '../ui/upload';
import { ReviewShown, SubmissionStatus } from './submissions';

function SubmitForm({ turnover, onSubmitted }: { turnover: Turnover; onSubmitted: () => void }) {
  const { upload } = useSession();
  const [title, setTitle] = useState('');
  const [note, setNote] = useState('');
  const id = `submit-${turnover.id}`;
  const send: Send = (chosen, onProgress, signal) => {
    const form = new FormData();
    if (title.trim()) form.append('title', title.trim());
    if (note.trim()) form.append('note', note.trim());
    for (const c of chosen) form.append('files', c.file, c.file.name);
    return upload(`/api/v1/turnovers/${turnover.id}/submissions`, form, { onProgress, signal });
  };
  return (
    <UploadForm
      id={id}
      title="Submit work on it"
      sendLabel="Submit"
      send={send}
      onSent={() => {
        setTitle('');
        setNote('');
        onSubmitted();
      }}
    >
      <div class="field">
        <label for={`${id}-name`}>Title</label>
        <input
          id={`${id}-name`}
          maxLength={500}
          placeholder={turnover.title}
          aria-describedby={`${id}-name-hint`}
          value={title}
          onInput={(e) => setTitle(e.currentTarget.value)}
        />
        <small id={`${id}-name-hint`} class="hint">
          Empty: the turnover’s title
        </small>
      </div>
      <div class="field">
        <label for={`${id}-note`}>Note (optional)</label>
        <textarea
          id={`${id}-note`}
          rows={2}
          maxLength={20000}
          value={note}
          onInput={(e) => setNote(e.currentTarget.value)}
        />
      </div>
    </UploadForm>
  );
}

/**
 * One turnover as its vendor sees it: the spec, the package to download once the production
 * has sent it, what the vendor submitted with the production's review, and (for the vendor's
 * own key, with a submit grant) the form that submits more.
 */
export function TurnoverDetail({
  turnover: t,
  media,
  own,
  onSubmitted,
}: {
  turnover: Turnover;
  media: MediaLoader;
  own: boolean;
  onSubmitted: () => void;
}) {
  const { me } = useSession();
  const mayUpload = has(me, 'submit:turnover');
  const files = t.package;
  const sent = t.status === 'sent' || t.status === 'accepted';
  const submissions = [...t.submissions].reverse();
  return (
    <details class="reach-item turnover" open={sent}>
      <summary>
        {t.title} · {t.status}
        {t.due ? ` · due ${t.due}` : ''}
      </summary>
      {t.spec.length > 0 && (
        <ul class="spec" aria-label={`Spec of ${t.title}`}>
          {t.spec.map((entry, i) => (
            <li key={i}>
              {Object.entries(entry)
                .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
                .join(' · ')}
            </li>
          ))}
        </ul>
      )}
      <h3>Package ({files.length})</h3>
      {!sent ? (
        <Empty>Not sent yet: its files show here once the production sends it.</Empty>
      ) : files.length === 0 ? (
        <Empty>The production has put no file in it.</Empty>
      ) : (
        <FileTable files={files} load={media} caption={`Package of “${t.title}”`} />
      )}
      <h3>Submitted ({submissions.length})</h3>
      {submissions.length === 0 && <Empty>Nothing submitted on it yet.</Empty>}
      {submissions.map((s) => (
        <article key={s.id} class="submission" aria-labelledby={`own-sub-${s.id}`}>
          <h4 id={`own-sub-${s.id}`}>{s.title}</h4>
          <p class="muted">
            Submitted {when(s.created_at)} · <SubmissionStatus status={s.status} />
          </p>
          <FileTable files={s.media} load={media} caption={`Files of “${s.title}”`} />
          {s.review && <ReviewShown review={s.review} />}
        </article>
      ))}
      {own && t.can_submit && mayUpload && <SubmitForm turnover={t} onSubmitted={onSubmitted} />}
      {own && t.can_submit && !mayUpload && (
        <p class="muted">
          This engagement may submit on it, but this key lacks the submit:turnover scope: ask the production
          for a key that holds it.
        </p>
      )}
      {own && !t.can_submit && <p class="muted">This engagement may read this turnover, not submit on it.</p>}
    </details>
  );
}
