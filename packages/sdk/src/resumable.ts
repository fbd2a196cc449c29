/**
 * Resumable uploads over tus 1.0 (decisions.md, "Resumable uploads") with
 * tus-js-client, which speaks the protocol in Node and in browsers. The file is
 * sent in pieces; every acknowledged piece is kept by the server, so a dropped
 * connection, an abort or a restart costs at most the piece in flight, and the
 * upload goes on from its url (`uploadUrl`) later, even from another process.
 */
import type * as tus from 'tus-js-client';
import { errorFromResponse, PailError } from './errors.js';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import { IS_NODE } from './upload-body.js';

const MiB = 1024 * 1024;

/**
 * tus-js-client is loaded on the first resumable upload, not with the client:
 * the other calls need none of it, and a bundler can leave it in its own chunk.
 */
const loadTus = () => import('tus-js-client');

/** What a resumable upload can send: its size must be known up front (the server reserves it against the cap). */
export type ResumableBody = Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array> | NodeJS.ReadableStream;

export interface ResumableUploadOptions {
  /** Bytes per PATCH request. Default 16 MiB; a stream holds one piece in memory. */
  chunkSize?: number | undefined;
  /** The file's MIME type. Default: a Blob's own type, else the server guesses (from the bytes and the name). */
  contentType?: string | undefined;
  /** The body's size in bytes: required for a stream, read from anything else. */
  size?: number | undefined;
  /** Called as bytes go out: `sent` of `total`. */
  onProgress?: ((sent: number, total: number) => void) | undefined;
  /**
   * Called once the server has created the upload, with its url: keep it to
   * resume after an abort, a crash or a restart (`uploadUrl`).
   */
  onUploadUrl?: ((url: string) => void) | undefined;
  /**
   * Pauses the upload: the promise rejects with the signal's reason, and what
   * the server acknowledged stays there (24 hours without progress) for a
   * later call with `uploadUrl`. To throw it away, use `terminateUpload`.
   */
  signal?: AbortSignal | undefined;
  /** Resume this upload (from `onUploadUrl`, or `ResumableUploadResult.uploadUrl`) instead of creating one. */
  uploadUrl?: string | undefined;
  /**
   * Waits, in ms, before each new attempt after a network failure or a 5xx;
   * each attempt goes on from the server's offset. Default `[0, 1000, 3000, 5000]`.
   * Refusals (4xx: the cap, the bucket's limits) are never retried.
   */
  retryDelays?: number[] | undefined;
}

export interface ResumableUploadResult {
  filename: string;
  size: number;
  /** The upload's url; finished, the server forgets it (the file is in the bucket). */
  uploadUrl: string;
}

/** Where uploads go and with which headers (the client's API key among them). */
export interface ResumableTarget {
  endpoint: string;
  headers: Record<string, string>;
}

/** What tus-js-client reads in Node: Buffers, and Node Readables with a piece size. */
type TusInput = ConstructorParameters<typeof tus.Upload>[0];

function isWebStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof value === 'object' && value !== null && typeof (value as ReadableStream).getReader === 'function';
}

function isBlob(value: unknown): value is Blob {
  return typeof Blob !== 'undefined' && value instanceof Blob;
}

function sizeOf(body: ResumableBody, given: number | undefined): number {
  if (given !== undefined) return given;
  if (isBlob(body)) return body.size;
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return body.byteLength;
  throw new TypeError('uploadResumable: a stream needs its `size` (the server reserves the whole length when the upload starts)');
}

/** The body as tus-js-client takes it where we run. */
async function tusInput(body: ResumableBody): Promise<TusInput> {
  if (!IS_NODE) {
    // Browsers: a Blob is sliced lazily; bytes become one; a stream is read through its reader.
    if (isBlob(body)) return body;
    if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return new Blob([body as BlobPart]);
    if (isWebStream(body)) return body.getReader();
    throw new TypeError('uploadResumable: in a browser, send a Blob, a File, bytes or a ReadableStream');
  }
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // Node's tus reads Buffers and Readables only: a Blob and a web stream are read as a Readable, piece by piece.
  const { Readable } = await import('node:stream');
  if (isBlob(body)) return Readable.fromWeb(body.stream() as NodeWebStream);
  if (isWebStream(body)) return Readable.fromWeb(body as NodeWebStream);
  return body as unknown as TusInput;
}

/** The SDK's typed error for a refusal; a failure without an answer (the network) stays as it is. */
async function typedError(error: Error): Promise<Error> {
  const response = (error as tus.DetailedError).originalResponse;
  const status = response?.getStatus() ?? 0;
  if (!response || status < 400) return error;
  const headers = new Headers();
  const requestId = response.getHeader('x-request-id');
  if (requestId) headers.set('x-request-id', requestId);
  const body = response.getBody() || null;
  return errorFromResponse(new Response(body, { status, headers }));
}

/** A refusal stays one: retrying a 4xx cannot succeed, except tus's own offset conflicts and locks. */
function worthRetrying(error: tus.DetailedError): boolean {
  const status = error.originalResponse?.getStatus() ?? 0;
  if (status === 0 || status >= 500 || status === 423) return true;
  if (status !== 409) return false;
  // A 409 with Pail's code is the cap; without one, the offset moved under us, and a retry re-reads it.
  return !/"code"\s*:/.test(error.originalResponse?.getBody() ?? '');
}

export function uploadResumable(
  target: ResumableTarget,
  filename: string,
  body: ResumableBody,
  options: ResumableUploadOptions = {},
): Promise<ResumableUploadResult> {
  const { signal } = options;
  return new Promise<ResumableUploadResult>((resolve, reject) => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- like fetch, the signal's own reason
    if (signal?.aborted) return reject(signal.reason);
    let size: number;
    try {
      size = sizeOf(body, options.size);
    } catch (error) {
      return reject(error instanceof Error ? error : new TypeError(String(error)));
    }
    const contentType = options.contentType ?? (isBlob(body) && body.type !== '' ? body.type : undefined);
    let settled = false;
    let upload: tus.Upload | undefined;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      // Paused, not terminated: the acknowledged bytes stay for `uploadUrl`.
      void upload?.abort(false);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- see above
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };

    Promise.all([loadTus(), tusInput(body)]).then(
      ([{ Upload }, input]) => {
        if (settled) return;
        upload = new Upload(input, {
          endpoint: target.endpoint,
          uploadUrl: options.uploadUrl ?? null,
          headers: target.headers,
          metadata: { filename, ...(contentType ? { contentType } : {}) },
          uploadSize: size,
          chunkSize: options.chunkSize ?? 16 * MiB,
          retryDelays: options.retryDelays ?? [0, 1000, 3000, 5000],
          // The SDK keeps no url store of its own: the caller holds the url (onUploadUrl).
          storeFingerprintForResuming: false,
          onShouldRetry: worthRetrying,
          onProgress: (sent, total) => options.onProgress?.(sent, total),
          onUploadUrlAvailable: () => {
            if (upload?.url) options.onUploadUrl?.(upload.url);
          },
          onSuccess: () => finish(() => resolve({ filename, size, uploadUrl: upload?.url ?? options.uploadUrl ?? '' })),
          onError: (error) => {
            void typedError(error).then((typed) => finish(() => reject(typed)));
          },
        });
        upload.start();
      },
      (error: Error) => finish(() => reject(error)),
    );
  });
}

/** Ends an unfinished upload and frees what it reserved of the storage cap. */
export async function terminateUpload(url: string, headers: Record<string, string>): Promise<void> {
  try {
    const { Upload } = await loadTus();
    await Upload.terminate(url, { headers, retryDelays: [] });
  } catch (error) {
    throw error instanceof Error ? await typedError(error) : new PailError(String(error), { status: 0 });
  }
}
