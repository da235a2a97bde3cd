import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** A button that asks once more before doing something that cannot be undone. */
export function ConfirmButton({
  label,
  confirm,
  onConfirm,
  disabled,
}: {
  label: string;
  confirm: string;
  onConfirm: () => Promise<unknown> | void;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={confirm}>
      <span>{confirm}</span>{' '}
      <button
        type="button"
        class="danger"
        disabled={busy}
        autoFocus
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        Yes, {label.toLowerCase()}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** Copies a secret to the clipboard and says so. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setState('copied'),
            () => setState('failed'),
          )
        }
      >
        Copy {what}
      </button>
      <span role="status" class="copy-state">
        {state === 'copied'
          ? 'Copied.'
          : state === 'failed'
            ? 'Could not copy: select the text and copy it.'
            : ''}
      </span>
    </>
  );
}

/** A secret the server shows once: with a copy button, and gone for good when dismissed. */
export function ShownOnce({
  title,
  secret,
  what,
  onDone,
  children,
}: {
  title: string;
  secret: string;
  what: string;
  onDone: () => void;
  children?: ComponentChildren;
}) {
  return (
    <section class="once" aria-labelledby="once-title">
      <h3 id="once-title">{title}</h3>
      <p>
        This is the only time the {what} is shown: the server does not keep it. Store it now (a password
        manager, the vendor's secret store).
      </p>
      <p>
        <code class="secret" data-secret="">
          {secret}
        </code>
      </p>
      {children}
      <p>
        <CopyButton text={secret} what={what} />{' '}
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </p>
    </section>
  );
}

export function Field({
  label,
  id,
  hint,
  children,
}: {
  label: string;
  id: string;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

export const when = (at: string | null | undefined): string =>
  at ? new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';
