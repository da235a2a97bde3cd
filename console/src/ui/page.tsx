import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

let rendered = false;

/** The first time any page shows its data: what the browser tests time as "first render". */
function markFirstRender() {
  if (rendered) return;
  rendered = true;
  performance.mark('console:first-render');
}

/**
 * A page: its heading takes the focus when the page opens (a screen reader announces it, the
 * keyboard starts from it) and names the tab.
 */
export function Page({
  title,
  ready = true,
  actions,
  children,
}: {
  title: string;
  ready?: boolean;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · prodgraph console`;
    heading.current?.focus({ preventScroll: true });
  }, [title]);
  useEffect(() => {
    if (ready) markFirstRender();
  }, [ready]);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {actions && <div class="actions">{actions}</div>}
      </div>
      {children}
    </>
  );
}
