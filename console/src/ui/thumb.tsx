import { useEffect, useRef, useState } from 'preact/hooks';
import { isAbort } from '../api/client';
import { describe } from './notes';

/**
 * An image fetched with the key (an <img src> cannot send one) and shown from a blob: URL,
 * loaded when it scrolls into view and released when it leaves the page.
 */
/** Fetches one media object's bytes: the caller decides with which route and key (keep it stable). */
export type MediaLoader = (mediaId: number, signal: AbortSignal) => Promise<Blob>;

export function Thumb({ id, load, alt }: { id: number; load: MediaLoader; alt: string }) {
  const box = useRef<HTMLSpanElement>(null);
  const [url, setUrl] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    let made: string | null = null;
    const fetchNow = () =>
      load(id, abort.signal).then(
        (blob) => {
          if (abort.signal.aborted) return;
          made = URL.createObjectURL(blob);
          setUrl(made);
        },
        (err) => !isAbort(err) && !abort.signal.aborted && setFailed(describe(err).text),
      );
    // fetched a little before it scrolls into view, so it is there when it arrives
    const seen = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          seen.disconnect();
          void fetchNow();
        }
      },
      { rootMargin: '200px 0px' },
    );
    if (box.current) seen.observe(box.current);
    return () => {
      seen.disconnect();
      abort.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [id, load]);
  return (
    <span class="thumb" ref={box}>
      {url ? (
        <img src={url} alt={alt} />
      ) : failed ? (
        <span class="thumb-failed" role="img" aria-label={`${alt}: ${failed}`}>
          {failed}
        </span>
      ) : (
        <span class="thumb-wait" role="img" aria-label={`${alt} (loading)`} />
      )}
    </span>
  );
}
