/**
 * The `<rest>` of `/media/<rest>` from the raw request URL, or null for anything that could
 * step outside the production's media: `..` or `.` segments (plain or percent-encoded), an
 * absolute path, a backslash, a NUL, an empty segment or undecodable escapes. Pure: it never
 * touches the filesystem.
 */
export function mediaRestOf(rawUrl: string): string | null {
  const path = rawUrl.split('?')[0] ?? '';
  const prefix = '/media/';
  if (!path.startsWith(prefix)) return null;
  const raw = path.slice(prefix.length);
  if (raw === '' || raw.includes('\0') || /%00/i.test(raw)) return null;
  let rest: string;
  try {
    rest = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (rest.includes('\0') || rest.includes('\\') || rest.startsWith('/') || /^[a-z]:/i.test(rest))
    return null;
  const segments = rest.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return rest;
}
