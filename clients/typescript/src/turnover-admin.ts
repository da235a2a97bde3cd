import type { ProdgraphClient } from './client.js';
import { ApiError } from './errors.js';
import type { components } from './openapi.js';
import { sendOnce, STREAMS_UPLOADS } from './retry.js';

/*
 * The production side of a turnover, typed: engage a new organisation, send a delivery's
 * package (streamed, with progress), move the delivery through its statuses, and answer a
 * vendor's submission. Each helper answers the server's record or throws ApiError; each write
 * carries an Idempotency-Key (the client sets one; pass your own to retry a call safely).
 */

type Schemas = components['schemas'];
export type Organisation = Schemas['AdminOrganisation'];
export type PackageUpload = Schemas['PackageUpload'];
export type DeliveryPackage = Schemas['DeliveryPackage'];
export type Delivery = Schemas['Delivery'];
export type DeliveryStatus = Schemas['DeliveryStatusChange']['status'];
export type SubmissionReview = Schemas['SubmissionReview'];
export type SubmissionRow = Schemas['SubmissionRow'];
export type TurnoverRow = Schemas['TurnoverRow'];
export type DeliveryFile = Schemas['DeliveryFile'];
export type Review = Schemas['Review'];

/** What every helper takes besides its own arguments. */
export interface WriteOptions {
  /** Sent as `Idempotency-Key`: the same key and request within 24 hours is answered once. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

const headersOf = (o: WriteOptions) => (o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : {});

/** The data of a 2xx, or the refusal as an ApiError. */
function settled<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) throw new ApiError(answer.response, answer.error);
  return answer.data;
}

/** `POST /admin/organisations`: a new organisation to engage (409 when its name or ref is taken). */
export async function addOrganisation(
  client: ProdgraphClient,
  organisation: Schemas['NewOrganisation'],
  options: WriteOptions = {},
): Promise<Organisation> {
  return settled(
    await client.POST('/api/v1/admin/organisations', {
      body: organisation,
      headers: headersOf(options),
      signal: options.signal,
    }),
  );
}

/** `POST /admin/deliveries/{id}/status`: the next step (409 `invalid_transition` names the allowed ones). */
export async function setDeliveryStatus(
  client: ProdgraphClient,
  deliveryId: number,
  status: DeliveryStatus,
  options: WriteOptions & { note?: string } = {},
): Promise<Delivery> {
  return settled(
    await client.POST('/api/v1/admin/deliveries/{id}/status', {
      params: { path: { id: deliveryId } },
      body: { status, ...(options.note === undefined ? {} : { note: options.note }) },
      headers: headersOf(options),
      signal: options.signal,
    }),
  );
}

/** `POST /admin/submissions/{id}/review`: accept a vendor's submission or ask for changes. */
export async function reviewSubmission(
  client: ProdgraphClient,
  submissionId: number,
  review: SubmissionReview,
  options: WriteOptions = {},
): Promise<SubmissionRow> {
  return settled(
    await client.POST('/api/v1/admin/submissions/{id}/review', {
      params: { path: { id: submissionId } },
      body: review,
      headers: headersOf(options),
      signal: options.signal,
    }),
  );
}

/** `POST /admin/deliveries/{id}/files/{media_id}/remove`: take a file out of the package (kept for history). */
export async function removeDeliveryFile(
  client: ProdgraphClient,
  deliveryId: number,
  mediaId: number,
  options: WriteOptions = {},
): Promise<DeliveryPackage> {
  return settled(
    await client.POST('/api/v1/admin/deliveries/{id}/files/{media_id}/remove', {
      params: { path: { id: deliveryId, media_id: mediaId } },
      headers: headersOf(options),
      signal: options.signal,
    }),
  );
}

/**
 * One file of a package: a Blob or File (in Node, `openAsBlob(path)` reads it from disk as it is
 * sent), or a stream of bytes with its name; `label` names it in the package (default: its
 * file name).
 */
export type PackageFile =
  | Blob
  | {
      name: string;
      data: Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;
      /** Bytes, when `data` is a stream and you know it: progress then has a total. */
      size?: number;
      label?: string;
    };

/** How far an upload has gone: file bytes taken by the connection, of `total` when every size is known. */
export interface UploadProgress {
  sent: number;
  total: number | undefined;
}

export interface UploadOptions extends WriteOptions {
  onProgress?: (progress: UploadProgress) => void;
}

interface Part {
  name: string;
  label: string | undefined;
  size: number | undefined;
  bytes: () => AsyncIterable<Uint8Array>;
}

const encoder = new TextEncoder();

/** A name as a quoted multipart parameter: quotes and line breaks escaped as browsers do. */
const quoted = (s: string) => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

async function* chunksOf(data: Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>) {
  if (!(data instanceof Blob) && !(data instanceof ReadableStream)) {
    yield* data;
    return;
  }
  // read by hand: not every runtime's ReadableStream is async-iterable
  const reader = (data instanceof Blob ? data.stream() : data).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

function partOf(file: PackageFile): Part {
  if (file instanceof Blob) {
    const name =
      typeof (file as File).name === 'string' && (file as File).name !== '' ? (file as File).name : 'file';
    return { name, label: undefined, size: file.size, bytes: () => chunksOf(file) };
  }
  const size = file.data instanceof Blob ? file.data.size : file.size;
  return { name: file.name, label: file.label, size, bytes: () => chunksOf(file.data) };
}

/** The multipart body (label, file, label, file…) as bytes made as the connection takes them. */
async function* multipartBody(parts: Part[], boundary: string, count: (n: number) => void) {
  for (const part of parts) {
    if (part.label !== undefined) {
      yield encoder.encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="label"\r\n\r\n${part.label}\r\n`,
      );
    }
    yield encoder.encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${quoted(part.name)}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    for await (const chunk of part.bytes()) {
      yield chunk;
      count(chunk.byteLength);
    }
    yield encoder.encode('\r\n');
  }
  yield encoder.encode(`--${boundary}--\r\n`);
}

function streamOf(chunks: AsyncIterator<Uint8Array, void>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await chunks.return?.();
    },
  });
}

/** The same form for a runtime that sends an upload itself (a browser): whole files, no progress until the end. */
async function formOf(parts: Part[]): Promise<FormData> {
  const form = new FormData();
  for (const part of parts) {
    if (part.label !== undefined) form.append('label', part.label);
    const chunks: Uint8Array[] = [];
    for await (const chunk of part.bytes()) chunks.push(chunk);
    form.append('files', new Blob(chunks as unknown as ConstructorParameters<typeof Blob>[0]), part.name);
  }
  return form;
}

/**
 * `POST /admin/deliveries/{id}/files`: files into a delivery's package, each its own media
 * object. Where the runtime streams an upload (Node, Deno, Bun) the body is made as the
 * connection takes it (the client never assembles it whole), and `onProgress` follows
 * each chunk; it is then sent once (a one-way stream cannot be sent again: call again with the
 * same `idempotencyKey` to retry). In a browser the files go as a FormData and progress is told
 * at the end.
 */
export async function addDeliveryFiles(
  client: ProdgraphClient,
  deliveryId: number,
  files: PackageFile[],
  options: UploadOptions = {},
): Promise<PackageUpload> {
  const parts = files.map(partOf);
  const sizes = parts.map((p) => p.size);
  const total = sizes.every((s) => s !== undefined) ? sizes.reduce<number>((a, s) => a + s, 0) : undefined;
  let sent = 0;
  const count = (n: number) => {
    sent += n;
    options.onProgress?.({ sent, total });
  };
  const path = { params: { path: { id: deliveryId } }, signal: options.signal };
  if (!STREAMS_UPLOADS) {
    const form = await formOf(parts);
    const answer = settled(
      await client.POST('/api/v1/admin/deliveries/{id}/files', {
        ...path,
        // the form as built: the client's serializer passes a FormData through
        body: form as unknown as { files: Blob[] },
        headers: headersOf(options),
      }),
    );
    options.onProgress?.({ sent: total ?? 0, total });
    return answer;
  }
  const boundary = `prodgraph-${crypto.randomUUID()}`;
  const body = sendOnce(streamOf(multipartBody(parts, boundary, count)[Symbol.asyncIterator]()));
  const init = {
    ...path,
    // the stream, as it is: not the client's JSON-or-FormData serializer
    body: { files: [] },
    bodySerializer: () => body,
    headers: { ...headersOf(options), 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
  // what fetch needs to send a stream (Node, Deno, Bun), which RequestInit's types do not name
  Object.assign(init, { duplex: 'half' });
  return settled(await client.POST('/api/v1/admin/deliveries/{id}/files', init));
}
