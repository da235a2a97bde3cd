import type { ComponentChildren } from 'preact';

/**
 * A table that scrolls sideways inside its own box when it is wider than the screen (a phone),
 * instead of pushing the whole page wider. The box is a named region the keyboard can reach, so
 * its hidden columns can be scrolled to without a mouse.
 */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
