import { useEffect, useState } from 'preact/hooks';
import { isAbort } from '../api/client';
import type { PackageFile } from '../api/production-side';
import { useAction } from './action';
import { ErrorNote } from './notes';
import { Thumb, type MediaLoader } from './thumb';

/** A size as a person reads it: 1.4 MB, 512 kB, 900 bytes. */
export function bytes(n: number): string {
  if (n < 1000) return `${n} byte${n === 1 ? '' : 's'}`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = n / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toLocaleString(undefined, { maximumFractionDigits: value < 10 ? 1 : 0 })} ${units[unit]}`;
}

/** Text files are previewed up to this many bytes (the rest is for the download). */
const TEXT_PREVIEW = 64 * 1024;

/** Text a turnover carries whose bytes alone do not say so (an EDL, a CDL, a LUT, a list). */
const TEXT_NAMES = /\.(edl|ale|cdl|ccc|cc|cube|csv|tsv|txt|md|json|xml|ya?ml|srt|vtt|mhl|log)$/i;

const isText = (f: PackageFile) =>
  f.content_type.startsWith('text/') ||
  /\/(json|xml|x-yaml|yaml|csv)\b/.test(f.content_type) ||
  (f.kind !== 'image' && f.kind !== 'video' && f.kind !== 'audio' && TEXT_NAMES.test(f.label));

/** The start of a file as text, or null when it is not text (a NUL, or bytes that are not UTF-8). */
async function textOf(blob: Blob): Promise<string | null> {
  const head = new Uint8Array(await blob.slice(0, TEXT_PREVIEW).arrayBuffer());
  if (head.includes(0)) return null;
  try {
    // a character cut at the end of the slice is not a fault: only the bytes before it must decode
    return new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
  } catch {
    return null;
  }
}

/** What the page can show of a file inline: an image, or the start of a text. */
export const previewable = (f: PackageFile) => f.kind === 'image' || isText(f);

/** Saves a file the key may fetch: its bytes are fetched with the key and handed to the browser. */
async function save(load: MediaLoader, file: PackageFile, signal: AbortSignal) {
  const blob = await load(file.id, signal);
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = file.label;
  document.body.append(a);
  a.click();
  a.remove();
  // the download has taken the bytes once the click is handled
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function DownloadButton({ file, load }: { file: PackageFile; load: MediaLoader }) {
  const action = useAction();
  return (
    <>
      <button
        type="button"
        disabled={action.busy}
        aria-label={`Download ${file.label}`}
        onClick={() => void action.run(() => save(load, file, new AbortController().signal))}
      >
        {action.busy ? 'Fetching…' : 'Download'}
      </button>
      <ErrorNote error={action.error} title={`${file.label} could not be fetched`} />
    </>
  );
}

/** An image at full width, or the start of a text file, fetched when it is opened. */
export function Preview({
  file,
  load,
  onClose,
}: {
  file: PackageFile;
  load: MediaLoader;
  onClose: () => void;
}) {
  const [shown, setShown] = useState<{ url?: string; text?: string; error?: unknown }>({});
  useEffect(() => {
    const abort = new AbortController();
    let made: string | null = null;
    load(file.id, abort.signal).then(
      async (blob) => {
        if (abort.signal.aborted) return;
        if (file.kind === 'image') {
          made = URL.createObjectURL(blob);
          setShown({ url: made });
        } else {
          const text = await textOf(blob);
          if (abort.signal.aborted) return;
          setShown(
            text === null ? { error: new Error('This file is not text: download it to open it.') } : { text },
          );
        }
      },
      (error) => !isAbort(error) && !abort.signal.aborted && setShown({ error }),
    );
    return () => {
      abort.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [file.id, load]);
  return (
    <figure class="preview" aria-label={`Preview of ${file.label}`}>
      <figcaption>
        <strong>{file.label}</strong> <span class="muted">({bytes(file.size)})</span>{' '}
        <button type="button" onClick={onClose}>
          Close preview
        </button>
      </figcaption>
      <ErrorNote error={shown.error} title="The preview could not be fetched" />
      {shown.url && <img src={shown.url} alt={file.label} />}
      {shown.text !== undefined && (
        <pre tabIndex={0}>
          {shown.text}
          {file.size > TEXT_PREVIEW ? '\n…' : ''}
        </pre>
      )}
      {!shown.url && shown.text === undefined && !shown.error && <p class="busy">Fetching the preview…</p>}
    </figure>
  );
}

/**
 * Files a person may fetch: a thumbnail for each image, a preview (an image at full width, the
 * start of a text) opened in place, and a download for every file.
 */
export function FileTable({
  files,
  load,
  caption,
  actions,
}: {
  files: PackageFile[];
  load: MediaLoader;
  caption: string;
  actions?: (f: PackageFile) => preact.JSX.Element | null;
}) {
  const [open, setOpen] = useState<number | null>(null);
  const opened = files.find((f) => f.id === open);
  return (
    <>
      <div class="table-scroll" role="region" aria-label={caption} tabIndex={0}>
        <table>
          <caption class="sr-only">{caption}</caption>
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Kind</th>
              <th scope="col">Size</th>
              <th scope="col">SHA-256</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {files.map((f) => (
              <tr key={f.id}>
                <th scope="row">
                  {f.kind === 'image' && <Thumb id={f.id} load={load} alt={f.label} />}
                  <span class="file-name">{f.label}</span>
                </th>
                <td>{f.kind}</td>
                <td class="num">{bytes(f.size)}</td>
                <td>
                  <code title={f.sha256}>{f.sha256.slice(0, 12)}…</code>
                </td>
                <td class="row-actions">
                  {previewable(f) && (
                    <button
                      type="button"
                      aria-expanded={open === f.id}
                      aria-label={`Preview ${f.label}`}
                      onClick={() => setOpen(open === f.id ? null : f.id)}
                    >
                      Preview
                    </button>
                  )}{' '}
                  <DownloadButton file={f} load={load} /> {actions?.(f)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {opened && <Preview key={opened.id} file={opened} load={load} onClose={() => setOpen(null)} />}
    </>
  );
}
