/**
 * Downloads: the request for a file's bytes (or a range of them), its body
 * handed to the caller, written to disk, or only its metadata from a HEAD.
 */
import type { BucketId, CallOptions } from './call-options.js';
import { FileNotFoundError, PailError } from './errors.js';
import { filePath } from './request-paths.js';
import type { Transport } from './transport.js';

/**
 * A byte range, inclusive at both ends like HTTP: `{ start: 0, end: 99 }` is
 * the first 100 bytes; `{ start: 100 }` is from byte 100 to the end;
 * `{ suffix: 100 }` is the last 100 bytes.
 */
export type ByteRange = { start: number; end?: number | undefined } | { suffix: number };

export interface DownloadOptions extends CallOptions {
  range?: ByteRange | undefined;
  /** One version of the file (from listVersions); absent: the current one. */
  versionId?: string | undefined;
}

export interface FileMetadata {
  size: number;
  contentType: string;
  /** Quoted, as the server sends it: `"…"`. */
  etag: string;
  lastModified: Date;
}

function rangeHeader(range: ByteRange): string {
  const whole = (n: number, what: string) => {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`range.${what} must be a non-negative integer`);
    return n;
  };
  if ('suffix' in range) return `bytes=-${whole(range.suffix, 'suffix')}`;
  const start = whole(range.start, 'start');
  if (range.end === undefined) return `bytes=${start}-`;
  const end = whole(range.end, 'end');
  if (end < start) throw new RangeError('range.end must not be before range.start');
  return `bytes=${start}-${end}`;
}

/** The GET of a file (or of `options.range`), its body not read yet. */
export function download(transport: Transport, id: BucketId, filename: string, options: DownloadOptions): Promise<Response> {
  return transport.send({
    method: 'GET',
    path: filePath(id, filename),
    query: { version_id: options.versionId },
    headers: options.range ? { range: rangeHeader(options.range) } : undefined,
    signal: options.signal,
  });
}

/**
 * The response's body, locked at once and read only as the caller reads. Node's
 * fetch cancels the unread body of a Response that is garbage collected, which
 * would cut off a stream the caller has not started reading yet; a locked body
 * is left alone.
 */
export function heldBody(response: Response): ReadableStream<Uint8Array> {
  const body = response.body;
  if (!body) return new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** Writes the stream to `path` (Node only), replacing what is there; on a failure midway the partial file is removed. */
export async function writeToPath(stream: ReadableStream<Uint8Array>, path: string): Promise<number> {
  const fs = await import('node:fs/promises');
  let file: Awaited<ReturnType<typeof fs.open>>;
  try {
    file = await fs.open(path, 'w');
  } catch (error) {
    await stream.cancel().catch(() => {});
    throw error;
  }
  let written = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await file.write(value);
      written += value.byteLength;
    }
    await file.close();
  } catch (error) {
    await file.close().catch(() => {});
    await fs.rm(path, { force: true }).catch(() => {});
    await reader.cancel(error).catch(() => {});
    throw error;
  }
  return written;
}

/**
 * The file's metadata from a HEAD request. A HEAD answer has no body, so a
 * 404 cannot say what is missing; then a one-byte GET finds out which.
 */
export async function fileMetadata(transport: Transport, id: BucketId, filename: string, options: CallOptions): Promise<FileMetadata> {
  const path = filePath(id, filename);
  let response: Response;
  try {
    response = await transport.send({ method: 'HEAD', path, ...options });
  } catch (error) {
    if (error instanceof PailError && error.status === 404) throw await whichNotFound(transport, path, options);
    throw error;
  }
  const headers = response.headers;
  return {
    size: Number(headers.get('content-length') ?? 0),
    contentType: headers.get('content-type') ?? 'application/octet-stream',
    etag: headers.get('etag') ?? '',
    lastModified: new Date(headers.get('last-modified') ?? 0),
  };
}

async function whichNotFound(transport: Transport, path: string, options: CallOptions): Promise<PailError> {
  try {
    const probe = await transport.send({ method: 'GET', path, headers: { range: 'bytes=0-0' }, ...options });
    await discard(probe);
  } catch (error) {
    if (error instanceof PailError && error.status === 404) return error;
  }
  // The probe found the file (it appeared meanwhile) or failed otherwise: report what HEAD said.
  return new FileNotFoundError('File not found', { status: 404 });
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Nothing to do: we only wanted the connection back.
  }
}
