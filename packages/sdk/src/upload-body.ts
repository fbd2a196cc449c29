/**
 * What an upload can be made from, and how each kind becomes a fetch body.
 * Nothing here buffers a stream or a file: a file path becomes a lazily read
 * Blob (Node's fs.openAsBlob), a Node Readable becomes a web ReadableStream
 * that pulls from it chunk by chunk. Node modules are imported only when a
 * path is given, so this file loads in browsers too.
 */

/** Something with a file path on the local disk (Node only). */
export interface PathSource {
  path: string;
}

/**
 * An upload body:
 * - `string` (sent as UTF-8), `Uint8Array`/`Buffer`, any `ArrayBufferView`, or an `ArrayBuffer`;
 * - a `Blob` or `File` (its `type` is used as the Content-Type unless you give one);
 * - a web `ReadableStream<Uint8Array>`, or any async iterable of bytes such as a Node `Readable`;
 * - `{ path: '/some/file' }`: a file on disk, streamed (Node only).
 */
export type UploadBody = string | ArrayBuffer | ArrayBufferView | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string> | PathSource;

/**
 * In Node, fetch (undici) reads a Blob body wholly into memory before sending
 * it, so there a Blob (a file path too) is sent as its stream, with its size as
 * Content-Length. Browsers stream a Blob themselves and may not accept stream
 * bodies over HTTP/1.1, so they get the Blob.
 */
export const IS_NODE = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

export interface PreparedBody {
  /** The body for one attempt; called again for a retry, which happens only when `resendable`. */
  open(): BodyInit;
  /** True when the body can be sent again (bytes, Blob, file path); false for one-shot streams. */
  resendable: boolean;
  /** True when `open()` gives a stream, which Node's fetch must send with `duplex: 'half'`. */
  streaming: boolean;
  /** The size in bytes when known and not evident to fetch: sent as Content-Length. */
  length?: number | undefined;
  /** The Content-Type the body itself suggests (a Blob's type), if any. */
  contentType?: string | undefined;
}

function isReadableStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof value === 'object' && value !== null && typeof (value as ReadableStream).getReader === 'function';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array | string> {
  return typeof value === 'object' && value !== null && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}

function isBlob(value: unknown): value is Blob {
  return typeof Blob !== 'undefined' && value instanceof Blob;
}

function isPathSource(value: unknown): value is PathSource {
  return typeof value === 'object' && value !== null && typeof (value as PathSource).path === 'string';
}

function toBytes(chunk: unknown, encoder: TextEncoder): Uint8Array {
  if (typeof chunk === 'string') return encoder.encode(chunk);
  if (chunk instanceof Uint8Array) return chunk;
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError('Upload stream chunks must be bytes (Uint8Array/Buffer) or strings');
}

/** A web ReadableStream that pulls from an async iterable one chunk at a time (backpressure kept). */
export function iterableToStream(iterable: AsyncIterable<unknown>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let iterator: AsyncIterator<unknown> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      iterator ??= iterable[Symbol.asyncIterator]();
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(toBytes(next.value, encoder));
    },
    async cancel(reason) {
      await iterator?.return?.(reason);
    },
  });
}

/** A file on disk as a Blob that is read only when sent (Node 20+), or a stream as a fallback. */
async function openFile(path: string): Promise<Blob | ReadableStream<Uint8Array>> {
  const fs = await import('node:fs');
  // Fail early, with the usual ENOENT/EACCES, on a file that cannot be read.
  const stats = await fs.promises.stat(path);
  if (!stats.isFile()) throw new TypeError(`Not a file: ${path}`);
  await fs.promises.access(path, fs.constants.R_OK);
  if (typeof fs.openAsBlob === 'function') return await fs.openAsBlob(path);
  return iterableToStream(fs.createReadStream(path)); // Node before 19.8
}

function fromBlob(blob: Blob): PreparedBody {
  const contentType = blob.type || undefined;
  if (!IS_NODE) return { open: () => blob, resendable: true, streaming: false, contentType };
  return { open: () => blob.stream() as ReadableStream<Uint8Array>, resendable: true, streaming: true, length: blob.size, contentType };
}

export async function prepareBody(input: UploadBody): Promise<PreparedBody> {
  if (typeof input === 'string') {
    // Bytes, not a string body: fetch would label a string text/plain, and the
    // server should instead guess the type from the file's extension.
    const bytes = new TextEncoder().encode(input);
    return { open: () => bytes as BodyInit, resendable: true, streaming: false };
  }
  if (input instanceof ArrayBuffer) {
    const bytes = new Uint8Array(input);
    return { open: () => bytes as BodyInit, resendable: true, streaming: false };
  }
  if (ArrayBuffer.isView(input)) {
    const bytes = input instanceof Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    return { open: () => bytes as BodyInit, resendable: true, streaming: false };
  }
  if (isBlob(input)) return fromBlob(input);
  if (isReadableStream(input)) return { open: () => input, resendable: false, streaming: true };
  // Checked before `path`: a Node fs.ReadStream is iterable and also has a `path`.
  if (isAsyncIterable(input)) {
    const stream = iterableToStream(input);
    return { open: () => stream, resendable: false, streaming: true };
  }
  if (isPathSource(input)) {
    const file = await openFile(input.path);
    if (isBlob(file)) return { ...fromBlob(file), contentType: undefined };
    return { open: () => file, resendable: false, streaming: true };
  }
  throw new TypeError('Unsupported upload body: use a string, bytes, a Blob, a stream, or { path }');
}

/** A Blob for a multipart part. Streams cannot be parts; use uploadFile for them. */
export async function bodyAsBlob(input: UploadBody, type: string | undefined): Promise<Blob> {
  if (isBlob(input)) return type && type !== input.type ? new Blob([input], { type }) : input;
  if (isPathSource(input) && !isAsyncIterable(input) && !isReadableStream(input)) {
    const file = await openFile(input.path);
    if (isBlob(file)) return type ? new Blob([file], { type }) : file;
    throw new TypeError('Multipart upload from a path needs Node 20 or later (fs.openAsBlob); use uploadFile instead');
  }
  if (typeof input === 'string' || input instanceof ArrayBuffer || ArrayBuffer.isView(input)) {
    const part = typeof input === 'string' ? input : input instanceof ArrayBuffer ? input : toBytes(input, new TextEncoder());
    return new Blob([part as BlobPart], type ? { type } : {});
  }
  throw new TypeError('uploadMultipart cannot send a stream; use uploadFile, which streams');
}
