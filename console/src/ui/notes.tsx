import type { ComponentChildren } from 'preact';
import { ApiError } from '../api/client';

/** What went wrong, in the server's own words (`detail`), never a blank space. */
export function describe(error: unknown): { text: string; more: string | null } {
  if (error instanceof ApiError) {
    const more = error.status ? `HTTP ${error.status}${error.code ? ` · ${error.code}` : ''}` : null;
    return { text: error.detail, more };
  }
  if (error instanceof Error) return { text: error.message || 'Something went wrong.', more: null };
  return { text: 'Something went wrong.', more: null };
}

export function ErrorNote({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const { text, more } = describe(error);
  return (
    <div class="note error" role="alert">
      <strong>{title ?? 'The server refused this'}:</strong> {text}
      {more && <span class="code"> ({more})</span>}
    </div>
  );
}

export function Busy({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="busy" role="status">
      {label}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export function Done({ children }: { children: ComponentChildren }) {
  return (
    <div class="note done" role="status">
      {children}
    </div>
  );
}
