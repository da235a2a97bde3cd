import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { isAbort } from '../api/client';
import type { Progress } from '../api/upload';
import { bytes } from './files';
import { ErrorNote } from './notes';

/** One file chosen for an upload, with the label it will carry. */
export interface Chosen {
  file: File;
  label: string;
}

export type Send = (
  chosen: Chosen[],
  onProgress: (p: Progress) => void,
  signal: AbortSignal,
) => Promise<unknown>;

function Bar({ progress }: { progress: Progress }) {
  const percent = progress.total ? Math.floor((progress.sent / progress.total) * 100) : 0;
  const done = progress.total > 0 && progress.sent >= progress.total;
  return (
    <p class="progress">
      <progress
        id="upload-progress"
        max={progress.total || 1}
        value={progress.sent}
        aria-label="Upload progress"
      />{' '}
      <span role="status">
        {done
          ? `Sent ${bytes(progress.total)}: the server is storing it…`
          : `${percent}%: ${bytes(progress.sent)} of ${bytes(progress.total)}`}
      </span>
    </p>
  );
}

/**
 * Files to upload with their progress: pick one or more, give each a label (its name by
 * default) when `labels` is on, send, see how far it has gone, cancel while it goes.
 */
export function UploadForm({
  id,
  title,
  send,
  sendLabel,
  labels = false,
  children,
  onSent,
}: {
  id: string;
  title: string;
  send: Send;
  sendLabel: string;
  labels?: boolean;
  children?: ComponentChildren;
  onSent: () => void;
}) {
  const [chosen, setChosen] = useState<Chosen[]>([]);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const running = useRef<AbortController | null>(null);
  const busy = progress !== null;
  const submit = async (e: Event) => {
    e.preventDefault();
    const abort = new AbortController();
    running.current = abort;
    setError(null);
    setNotice(null);
    setProgress({ sent: 0, total: chosen.reduce((n, c) => n + c.file.size, 0) });
    try {
      await send(chosen, setProgress, abort.signal);
      setChosen([]);
      if (input.current) input.current.value = '';
      onSent();
    } catch (err) {
      if (isAbort(err)) setNotice('Upload cancelled: nothing was stored.');
      else setError(err);
    } finally {
      running.current = null;
      setProgress(null);
    }
  };
  return (
    <form class="card" onSubmit={(e) => void submit(e)} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{title}</h3>
      {children}
      <div class="field">
        <label for={`${id}-files`}>Files</label>
        <input
          id={`${id}-files`}
          ref={input}
          type="file"
          multiple
          required
          disabled={busy}
          onChange={(e) =>
            setChosen(Array.from(e.currentTarget.files ?? [], (file) => ({ file, label: file.name })))
          }
        />
      </div>
      {chosen.length > 0 && (
        <ul class="chosen">
          {chosen.map((c, i) => (
            <li key={`${i}-${c.file.name}`}>
              {labels ? (
                <label>
                  Label of {c.file.name} ({bytes(c.file.size)}){' '}
                  <input
                    value={c.label}
                    maxLength={500}
                    disabled={busy}
                    onInput={(e) => {
                      const label = e.currentTarget.value;
                      setChosen(chosen.map((x, j) => (j === i ? { ...x, label } : x)));
                    }}
                  />
                </label>
              ) : (
                `${c.file.name} (${bytes(c.file.size)})`
              )}
            </li>
          ))}
        </ul>
      )}
      {progress && <Bar progress={progress} />}
      {notice && (
        <p class="muted" role="status">
          {notice}
        </p>
      )}
      <ErrorNote error={error} />
      <button type="submit" class="primary" disabled={busy || chosen.length === 0}>
        {busy ? 'Uploading…' : sendLabel}
      </button>{' '}
      {busy && (
        <button type="button" onClick={() => running.current?.abort()}>
          Cancel upload
        </button>
      )}
    </form>
  );
}
