import { useEffect, useState } from 'preact/hooks';

/*
 * Routes live in the URL's fragment (#/vendors/3): the server serves one page, the browser's
 * back and forward buttons work, and nothing of the route ever reaches a server log.
 */

const current = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);

export function useRoute(): string[] {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const changed = () => setRoute(current());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export const href = (...parts: Array<string | number>) =>
  `#/${parts.map((p) => encodeURIComponent(p)).join('/')}`;

export function go(...parts: Array<string | number>): void {
  location.hash = href(...parts);
}
