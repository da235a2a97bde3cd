import { randomBytes } from 'node:crypto';

export type FormEntry =
  { name: string; value: string } | { name: string; filename: string; content: Buffer; contentType?: string };

/** A multipart/form-data body for app.inject. */
export function multipart(entries: FormEntry[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----prodgraph${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const e of entries) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if ('filename' in e) {
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${e.name}"; filename="${e.filename}"\r\n` +
            `Content-Type: ${e.contentType ?? 'application/octet-stream'}\r\n\r\n`,
        ),
      );
      chunks.push(e.content);
    } else {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${e.name}"\r\n\r\n${e.value}`));
    }
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(chunks),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}
