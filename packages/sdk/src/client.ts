/**
 * The Pail client: one method per Developer API operation, on top of fetch,
 * so it runs in Node 20+ and in browsers. Every call sends the API key in
 * `x-api-key`, turns refusals into typed errors (errors.ts), and can wait and
 * retry on 429 as `Retry-After` says, when the request body can be resent.
 * Key management (`/api/keys`) needs a session instead, sent as a bearer
 * token; requests to signed urls carry no credential at all.
 */
import type { BucketId, CallOptions } from './call-options.js';
import type {
  ApiKey,
  BucketObject,
  CreatedApiKey,
  ListBucketsBody,
  ListFilesBody,
  ListUnfinishedUploadsBody,
  SignedUrl,
  StorageBucket,
  UnfinishedUpload,
  UnfinishedUploadKind,
  UploadResult,
} from './types.js';
import { BucketNotFoundError, errorFromResponse, FileNotFoundError, NotFoundError, PailError, RateLimitError } from './errors.js';
import { encodeFilename, encodeFilenameForDelete } from './file-paths.js';
import { createKeyBody, type CreateKeyOptions } from './keys.js';
import { signedUrlBody, type SignedUrlOptions } from './signed-urls.js';
import { bodyAsBlob, IS_NODE, prepareBody, type PreparedBody, type UploadBody } from './upload-body.js';
import { terminateUpload, uploadResumable, type ResumableBody, type ResumableUploadOptions, type ResumableUploadResult } from './resumable.js';

export type {
  ApiKey,
  BucketObject,
  CreatedApiKey,
  ErrorCode,
  Permission,
  SignedUrl,
  StorageBucket,
  UnfinishedUpload,
  UnfinishedUploadKind,
  UploadResult,
} from './types.js';
export type { BucketId, CallOptions } from './call-options.js';
export type { CreateKeyOptions } from './keys.js';
export type { SignedUrlOptions } from './signed-urls.js';
export type { ResumableBody, ResumableUploadOptions, ResumableUploadResult } from './resumable.js';

export type Visibility = 'public' | 'private';

export interface RetryOptions {
  /** How many times to retry one call after a 429. Default 3. */
  maxRetries?: number;
  /**
   * The longest wait, in seconds, the client accepts. When the server asks
   * for a longer one, the RateLimitError is thrown at once instead. Default 60.
   */
  maxDelaySeconds?: number;
  /** Called before each wait; handy for logging. */
  onRetry?: (info: { attempt: number; delayMs: number; error: RateLimitError }) => void;
}

export interface PailOptions {
  /** Where the server is, e.g. `https://pail.example.com` (no `/api/v1`). */
  baseUrl: string;
  /** A Developer API key from the dashboard's SDK page. Optional only for downloads from public buckets. */
  apiKey?: string | undefined;
  /**
   * A session token (from `Pail.login`, or `POST /api/auth/login`), for
   * managing API keys: `listKeys`, `createKey`, `revokeKey`. The Developer API
   * calls never send it.
   */
  sessionToken?: string | undefined;
  /** A fetch to use instead of the global one (tests, proxies, older runtimes). */
  fetch?: typeof fetch;
  /** Retry calls refused with 429 after waiting `Retry-After`. Off by default; `true` means `{ maxRetries: 3 }`. */
  retryOn429?: boolean | RetryOptions;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/** A bucket's own limits (decisions.md, "Per-bucket limits"); `null` clears one. */
export interface BucketLimits {
  /** The largest file the bucket accepts, in bytes. */
  max_file_bytes?: number | null | undefined;
  /** The MIME types (or `type/*` patterns) it accepts, checked against the file's bytes too. */
  allowed_types?: string[] | null | undefined;
}

export type CreateBucketOptions = CallOptions & BucketLimits & ({ public?: boolean } | { visibility?: Visibility });

export interface ListFilesOptions extends CallOptions {
  /** Only files whose name starts with this; with `delimiter`, a folder such as `photos/`. */
  prefix?: string | undefined;
  /**
   * `'/'` (the only one the server supports): list the files directly under
   * `prefix` in `files`, and the folders under it in `folders`.
   */
  delimiter?: '/' | undefined;
  /** Page size, 1 to 1000 (server default 1000). */
  limit?: number | undefined;
  /** `nextCursor` of the previous page. */
  cursor?: string | undefined;
  /**
   * Only files whose name after `prefix` contains this, ignoring case
   * (Unicode: `straße` finds `STRASSE.txt`); `%` and `_` are literal. With
   * `delimiter: '/'` it searches every folder under `prefix` and returns
   * files only (`folders` is empty).
   */
  search?: string | undefined;
  /** The column to sort by, ties by name. Default `'name'` (byte order of UTF-8). */
  sort?: FileSort | undefined;
  /** Default `'asc'`. */
  order?: SortOrder | undefined;
}

/** What `listFiles` can sort by: the name, the size, the content type or the time of the last upload (`updated_at`). */
export type FileSort = 'name' | 'size' | 'type' | 'updated';
export type SortOrder = 'asc' | 'desc';

export interface FilePage {
  files: BucketObject[];
  /** With `delimiter: '/'`, the folders directly under the prefix, each ending in `/` (`photos/2026/`); otherwise empty. */
  folders: string[];
  /** Pass as `cursor` to get the next page; null on the last page. */
  nextCursor: string | null;
}

export interface IterateFilesOptions extends CallOptions {
  prefix?: string | undefined;
  search?: string | undefined;
  sort?: FileSort | undefined;
  order?: SortOrder | undefined;
  /** Files fetched per request, 1 to 1000. Default 1000. */
  pageSize?: number | undefined;
}

export interface UploadOptions extends CallOptions {
  /** The file's MIME type. Default: a Blob's own type, else the server guesses from the extension. */
  contentType?: string | undefined;
}

/**
 * A byte range, inclusive at both ends like HTTP: `{ start: 0, end: 99 }` is
 * the first 100 bytes; `{ start: 100 }` is from byte 100 to the end;
 * `{ suffix: 100 }` is the last 100 bytes.
 */
export interface ListUnfinishedUploadsOptions extends CallOptions {
  /** Only this bucket's uploads (its id). */
  bucket?: number | undefined;
}

export interface UnfinishedUploads {
  uploads: UnfinishedUpload[];
  /** What the listed uploads hold together. */
  heldBytes: number;
}

export type ByteRange = { start: number; end?: number | undefined } | { suffix: number };

export interface DownloadOptions extends CallOptions {
  range?: ByteRange | undefined;
}

export interface FileMetadata {
  size: number;
  contentType: string;
  /** Quoted, as the server sends it: `"…"`. */
  etag: string;
  lastModified: Date;
}

/**
 * Which API a request goes to, and so which credential it carries: the
 * Developer API with the key, the key routes or the account routes with the
 * session, or a signed url (an absolute `path`) with nothing.
 */
type Api = 'buckets' | 'uploads' | 'keys' | 'auth' | 'signed-url';
const API_ROOT: Record<Exclude<Api, 'signed-url'>, string> = { buckets: '/api/v1/buckets', uploads: '/api/v1/uploads', keys: '/api/keys', auth: '/api/auth' };

interface RequestSpec extends CallOptions {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Under the API's root, or, for a signed url, the whole url. */
  path: string;
  /** Default: the Developer API. */
  api?: Api | undefined;
  query?: Record<string, string | number | undefined> | undefined;
  headers?: Record<string, string> | undefined;
  json?: unknown;
  /** The request body; see upload-body.ts. */
  body?: PreparedBody | undefined;
}

const DEFAULT_RETRY: Required<Omit<RetryOptions, 'onRetry'>> = { maxRetries: 3, maxDelaySeconds: 60 };

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

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    // Like fetch, reject with the signal's own reason (an AbortError DOMException unless the caller gave another).
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- see above
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- see above
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The response's body, locked at once and read only as the caller reads. Node's
 * fetch cancels the unread body of a Response that is garbage collected, which
 * would cut off a stream the caller has not started reading yet; a locked body
 * is left alone.
 */
function heldBody(response: Response): ReadableStream<Uint8Array> {
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

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Nothing to do: we only wanted the connection back.
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

export class Pail {
  private readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly sessionToken: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly retry: (Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'>) | null;
  private readonly extraHeaders: Record<string, string>;

  constructor(options: PailOptions) {
    if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '') {
      throw new TypeError('new Pail({ baseUrl, apiKey }): baseUrl is required');
    }
    // The server's address; the Developer API's own base is accepted too.
    this.baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1\/buckets?$/, '');
    this.apiKey = options.apiKey;
    this.sessionToken = options.sessionToken;
    // Looked up at call time, so a fetch polyfilled later is still found.
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const retry = options.retryOn429;
    this.retry = retry ? { ...DEFAULT_RETRY, ...(retry === true ? {} : retry) } : null;
    this.extraHeaders = { ...options.headers };
  }

  // ---------------------------------------------------------------- buckets

  /** All your live buckets, in ascending id order. */
  async listBuckets(options: CallOptions = {}): Promise<StorageBucket[]> {
    const body = await this.json<ListBucketsBody>({ method: 'GET', path: '', ...options });
    return body.data;
  }

  /** Creates a bucket, private unless `{ public: true }` or `{ visibility: 'public' }`. */
  async createBucket(name: string, options: CreateBucketOptions = {}): Promise<StorageBucket> {
    const { signal, ...fields } = options;
    const body = await this.json<{ data: StorageBucket }>({ method: 'POST', path: '', json: { name, ...fields }, signal });
    return body.data;
  }

  async getBucket(id: BucketId, options: CallOptions = {}): Promise<StorageBucket> {
    const body = await this.json<{ data: StorageBucket }>({ method: 'GET', path: `/${this.segment(id)}`, ...options });
    return body.data;
  }

  /** Sets or clears (`null`) the bucket's limits; fields left out stay as they are. */
  async updateBucket(id: BucketId, limits: BucketLimits, options: CallOptions = {}): Promise<StorageBucket> {
    const body = await this.json<{ data: StorageBucket }>({ method: 'PATCH', path: `/${this.segment(id)}`, json: limits, ...options });
    return body.data;
  }

  /** Deletes the bucket and every file in it. */
  async deleteBucket(id: BucketId, options: CallOptions = {}): Promise<void> {
    await this.json({ method: 'DELETE', path: `/${this.segment(id)}`, ...options });
  }

  async setVisibility(id: BucketId, visibility: Visibility, options: CallOptions = {}): Promise<void> {
    await this.json({ method: 'POST', path: `/${this.segment(id)}/visibility`, json: { visibility }, ...options });
  }

  // ------------------------------------------------------------------ files

  /**
   * One page of files, ascending by name unless `sort`/`order` say otherwise.
   * With `delimiter: '/'` the page holds files and folders together: `limit`
   * counts both, and `nextCursor` goes on after both (sorted by another
   * column, the folders come first). A cursor belongs to its sort and order.
   */
  async listFiles(id: BucketId, options: ListFilesOptions = {}): Promise<FilePage> {
    const { prefix, delimiter, limit, cursor, search, sort, order, signal } = options;
    const body = await this.json<ListFilesBody>({
      method: 'GET',
      path: `/${this.segment(id)}/files`,
      query: { prefix, delimiter, limit, cursor, search, sort, order },
      signal,
    });
    // A server from before folders sends no `folders`; it had none.
    return { files: body.data, folders: body.folders ?? [], nextCursor: body.next_cursor ?? null };
  }

  /** Every file of the bucket (or under a prefix), fetching page after page as you iterate. */
  async *iterateFiles(id: BucketId, options: IterateFilesOptions = {}): AsyncGenerator<BucketObject, void, undefined> {
    let cursor: string | undefined;
    do {
      const { prefix, search, sort, order, signal } = options;
      const page = await this.listFiles(id, { prefix, search, sort, order, limit: options.pageSize, cursor, signal });
      yield* page.files;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /**
   * Uploads (or replaces) a file with a raw PUT; the body is streamed, never
   * buffered. See UploadBody for what `body` can be.
   */
  async uploadFile(id: BucketId, filename: string, body: UploadBody, options: UploadOptions = {}): Promise<UploadResult> {
    const prepared = await prepareBody(body);
    const contentType = options.contentType ?? prepared.contentType;
    const result = await this.json<{ data: UploadResult }>({
      method: 'PUT',
      path: this.filePath(id, filename),
      headers: contentType ? { 'content-type': contentType } : undefined,
      signal: options.signal,
      body: prepared,
    });
    return result.data;
  }

  /**
   * Uploads a file in pieces over tus (resumable.ts): a dropped connection is
   * retried from the server's offset, and an upload paused with `signal` (or
   * cut off by a crash) goes on later with `uploadUrl`. The body's size must be
   * known: a Blob, File or bytes, or a stream with `options.size`.
   */
  uploadResumable(id: BucketId, filename: string, body: ResumableBody, options: ResumableUploadOptions = {}): Promise<ResumableUploadResult> {
    return uploadResumable(this.resumableTarget(id), filename, body, options);
  }

  /** Goes on with an upload from its url: the same body again, from the start; only the missing bytes are sent. */
  resumeUpload(id: BucketId, uploadUrl: string, filename: string, body: ResumableBody, options: ResumableUploadOptions = {}): Promise<ResumableUploadResult> {
    return uploadResumable(this.resumableTarget(id), filename, body, { ...options, uploadUrl });
  }

  /** Ends an unfinished resumable upload and gives back what it held of the storage cap. */
  terminateUpload(uploadUrl: string): Promise<void> {
    return terminateUpload(uploadUrl, this.resumableTarget(0).headers);
  }

  /**
   * Your unfinished uploads (resumable and S3 multipart, in the buckets the
   * key may use; only `bucket`'s when given), newest first, each with the
   * bytes it holds against the storage cap, and what they hold together.
   */
  async listUnfinishedUploads(options: ListUnfinishedUploadsOptions = {}): Promise<UnfinishedUploads> {
    const { bucket, signal } = options;
    const query = { bucket: bucket === undefined ? undefined : String(bucket) };
    const body = await this.json<ListUnfinishedUploadsBody>({ method: 'GET', api: 'uploads', path: '', query, signal });
    return { uploads: body.data, heldBytes: body.held_bytes };
  }

  /** Cancels an unfinished upload by its kind and id (as listed): its bytes are deleted and no longer held. Needs `write`. */
  async cancelUnfinishedUpload(kind: UnfinishedUploadKind, uploadId: string, options: CallOptions = {}): Promise<UnfinishedUpload> {
    const path = `/${encodeURIComponent(kind)}/${encodeURIComponent(uploadId)}`;
    const body = await this.json<{ data: UnfinishedUpload }>({ method: 'DELETE', api: 'uploads', path, ...options });
    return body.data;
  }

  /** Uploads a file from disk, streamed (Node only). Same as `uploadFile(id, filename, { path })`. */
  uploadFileFromPath(id: BucketId, filename: string, path: string, options: UploadOptions = {}): Promise<UploadResult> {
    return this.uploadFile(id, filename, { path }, options);
  }

  /**
   * Uploads with `multipart/form-data` (a part named `file`), like an HTML
   * form. Streams are not accepted here; `uploadFile` streams anything.
   */
  async uploadMultipart(id: BucketId, filename: string, body: UploadBody, options: UploadOptions = {}): Promise<UploadResult> {
    const blob = await bodyAsBlob(body, options.contentType);
    const result = await this.json<{ data: UploadResult }>({
      method: 'POST',
      path: `/${this.segment(id)}/files`,
      signal: options.signal,
      body: {
        open: () => {
          const form = new FormData();
          form.append('file', blob, filename);
          return form;
        },
        resendable: true,
        streaming: false,
      },
    });
    return result.data;
  }

  /** The file's bytes (or the bytes of `range`). */
  async downloadFile(id: BucketId, filename: string, options: DownloadOptions = {}): Promise<Uint8Array> {
    const response = await this.download(id, filename, options);
    return new Uint8Array(await response.arrayBuffer());
  }

  /**
   * The file as a stream of bytes, read from the network as you consume it.
   * In Node, `Readable.fromWeb(stream)` turns it into a Node stream.
   */
  async downloadStream(id: BucketId, filename: string, options: DownloadOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const response = await this.download(id, filename, options);
    return heldBody(response);
  }

  /**
   * Streams a file to a path on disk (Node only), replacing what is there.
   * Resolves with the bytes written; if the download fails midway, the partial
   * file is removed.
   */
  async downloadToPath(id: BucketId, filename: string, path: string, options: DownloadOptions = {}): Promise<number> {
    const stream = await this.downloadStream(id, filename, options);
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
   * 404 cannot say what is missing; the client then asks once more with a
   * one-byte GET to throw the right BucketNotFoundError or FileNotFoundError.
   */
  async headFile(id: BucketId, filename: string, options: CallOptions = {}): Promise<FileMetadata> {
    const path = this.filePath(id, filename);
    let response: Response;
    try {
      response = await this.send({ method: 'HEAD', path, ...options });
    } catch (error) {
      if (error instanceof PailError && error.status === 404) throw await this.whichNotFound(path, options);
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

  async deleteFile(id: BucketId, filename: string, options: CallOptions = {}): Promise<void> {
    await this.json({ method: 'DELETE', path: `/${this.segment(id)}/files/${encodeFilenameForDelete(filename)}`, ...options });
  }

  // ------------------------------------------------------------ signed urls

  /**
   * A url that downloads (`GET`, the default) or uploads (`PUT`) this one file
   * without a key or session, until it expires: hand it to a browser, `curl`
   * or another service. The key needs `manage`, and `read` for a GET url or
   * `write` for a PUT url; revoking it ends its urls. A GET url is only made
   * for a file that exists (FileNotFoundError otherwise).
   */
  async signedUrl(id: BucketId, filename: string, options: SignedUrlOptions = {}): Promise<SignedUrl> {
    const body = await this.json<{ data: SignedUrl }>({
      method: 'POST',
      path: `${this.filePath(id, filename)}/signed-url`,
      json: signedUrlBody(options),
      signal: options.signal,
    });
    return body.data;
  }

  /**
   * Uploads to a signed PUT url (from `signedUrl`, made by whoever holds the
   * key), sending no credential of this client's. Takes the same bodies as
   * `uploadFile`. A url past its time, altered or ended throws ForbiddenError;
   * a body over its `maxBytes` PayloadTooLargeError; another Content-Type than
   * the one it was made for UnsupportedMediaTypeError.
   */
  async uploadToSignedUrl(url: string, body: UploadBody, options: UploadOptions = {}): Promise<UploadResult> {
    const prepared = await prepareBody(body);
    const contentType = options.contentType ?? prepared.contentType;
    const result = await this.json<{ data: UploadResult }>({
      method: 'PUT',
      api: 'signed-url',
      path: url,
      headers: contentType ? { 'content-type': contentType } : undefined,
      signal: options.signal,
      body: prepared,
    });
    return result.data;
  }

  // ------------------------------------------------------------- API keys

  /**
   * Signs in with an email and password and returns a client that carries the
   * session (for `listKeys`, `createKey` and `revokeKey`), and the API key of
   * `options` if one was given.
   */
  static async login(options: PailOptions & { email: string; password: string }): Promise<Pail> {
    const { email, password, ...rest } = options;
    const anonymous = new Pail({ ...rest, apiKey: undefined, sessionToken: undefined });
    const body = await anonymous.json<{ data: { token: string } }>({ method: 'POST', api: 'auth', path: '/login', json: { email, password } });
    return new Pail({ ...rest, sessionToken: body.data.token });
  }

  /** Ends the session (and the signed urls made with it). The client's API key keeps working. */
  async logout(options: CallOptions = {}): Promise<void> {
    await this.json({ method: 'POST', api: 'auth', path: '/logout', ...options });
  }

  /** Your live API keys, with their limits; never their secrets. Needs `sessionToken`. */
  async listKeys(options: CallOptions = {}): Promise<ApiKey[]> {
    const body = await this.json<{ data: ApiKey[] }>({ method: 'GET', api: 'keys', path: '', ...options });
    return body.data;
  }

  /**
   * Creates an API key, optionally limited to some buckets, some permissions
   * and a lifetime. The answer holds the secret (`key`): the only time it is
   * shown. Needs `sessionToken`.
   */
  async createKey(options: CreateKeyOptions = {}): Promise<CreatedApiKey> {
    const body = await this.json<{ data: CreatedApiKey }>({ method: 'POST', api: 'keys', path: '', json: createKeyBody(options), signal: options.signal });
    return body.data;
  }

  /** Revokes a key: from then on it gets 401, and the signed urls it made stop working. Needs `sessionToken`. */
  async revokeKey(keyId: number, options: CallOptions = {}): Promise<void> {
    await this.json({ method: 'DELETE', api: 'keys', path: `/${encodeURIComponent(String(keyId))}`, ...options });
  }

  // -------------------------------------------------------------- internals

  /**
   * Names a URL cannot carry as a path segment (`''`, `.`, `..`: URL parsing
   * would drop or resolve them and the request would reach another route) are
   * refused here with the error the server gives for such names.
   */
  private segment(id: BucketId): string {
    const text = String(id);
    if (text === '' || text === '.' || text === '..') throw new BucketNotFoundError('Bucket not found', { status: 404, code: 'BucketNotFound' });
    return encodeURIComponent(text);
  }

  private filePath(id: BucketId, filename: string): string {
    return `/${this.segment(id)}/files/${encodeFilename(filename)}`;
  }

  private resumableTarget(id: BucketId): { endpoint: string; headers: Record<string, string> } {
    const headers: Record<string, string> = { ...this.extraHeaders };
    if (this.apiKey !== undefined && this.apiKey !== '') headers['x-api-key'] = this.apiKey;
    return { endpoint: `${this.baseUrl}${API_ROOT.buckets}/${this.segment(id)}/uploads`, headers };
  }

  private download(id: BucketId, filename: string, options: DownloadOptions): Promise<Response> {
    return this.send({
      method: 'GET',
      path: this.filePath(id, filename),
      headers: options.range ? { range: rangeHeader(options.range) } : undefined,
      signal: options.signal,
    });
  }

  private async whichNotFound(path: string, options: CallOptions): Promise<PailError> {
    try {
      const probe = await this.send({ method: 'GET', path, headers: { range: 'bytes=0-0' }, ...options });
      await discard(probe);
    } catch (error) {
      if (error instanceof PailError && error.status === 404) return error;
    }
    // The probe found the file (it appeared meanwhile) or failed otherwise: report what HEAD said.
    return new FileNotFoundError('File not found', { status: 404 });
  }

  private async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send({ ...spec, headers: { accept: 'application/json', ...spec.headers } });
    const text = await response.text();
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new PailError(`Expected JSON from the server, got: ${text.slice(0, 200)}`, { status: response.status, body: text });
    }
  }

  /**
   * fetch, following redirects itself: fetch would carry `x-api-key` along
   * to wherever a redirect points, so the key is dropped whenever the next
   * hop is another origin. In a browser a redirect cannot be read (it is
   * opaque), so it is refused rather than followed with the key.
   */
  private async fetchFollowing(url: URL, init: RequestInit): Promise<Response> {
    const origin = new URL(this.baseUrl).origin;
    // (A signed url may point elsewhere; its requests carry no credential to drop.)
    let target = url;
    let request = init;
    for (let hops = 0; ; hops++) {
      const response = await this.fetchImpl(target, { ...request, redirect: request.redirect === 'error' ? 'error' : 'manual' });
      if (response.type === 'opaqueredirect') {
        throw new PailError('The server answered with a redirect; the SDK does not follow redirects in a browser, where it cannot see where they lead', {
          status: response.status,
        });
      }
      const location = response.headers.get('location');
      if (!REDIRECT_STATUSES.has(response.status) || location === null || hops >= MAX_REDIRECTS) return response;
      await response.body?.cancel();
      const next = new URL(location, target);
      const headers: Record<string, string> = { ...(request.headers as Record<string, string>) };
      if (next.origin !== origin) {
        delete headers['x-api-key'];
        delete headers.authorization;
      }
      // As fetch does: 303, and 301/302 after a POST, become a GET without a body.
      const asGet = response.status === 303 || ((response.status === 301 || response.status === 302) && request.method === 'POST');
      if (asGet) {
        delete headers['content-type'];
        delete headers['content-length'];
        request = { method: 'GET', headers, signal: request.signal ?? null };
      } else {
        request = { ...request, headers };
      }
      target = next;
    }
  }

  /** One call: the request, retried on 429 when allowed; resolves only with a 2xx response. */
  private async send(spec: RequestSpec): Promise<Response> {
    const api = spec.api ?? 'buckets';
    const url = api === 'signed-url' ? new URL(spec.path) : new URL(`${this.baseUrl}${API_ROOT[api]}${spec.path}`);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { ...this.extraHeaders, ...spec.headers };
    if ((api === 'buckets' || api === 'uploads') && this.apiKey !== undefined && this.apiKey !== '') headers['x-api-key'] = this.apiKey;
    if ((api === 'keys' || api === 'auth') && this.sessionToken !== undefined && this.sessionToken !== '') {
      headers.authorization = `Bearer ${this.sessionToken}`;
    }

    for (let attempt = 0; ; attempt++) {
      const init: RequestInit & { duplex?: 'half' } = { method: spec.method, headers: { ...headers }, signal: spec.signal };
      let resendable = true;
      if (spec.json !== undefined) {
        init.body = JSON.stringify(spec.json);
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
      } else if (spec.body) {
        init.body = spec.body.open();
        resendable = spec.body.resendable;
        if (spec.body.streaming) init.duplex = 'half';
        if (spec.body.length !== undefined) (init.headers as Record<string, string>)['content-length'] = String(spec.body.length);
        // Node's fetch keeps every byte of a body it might have to resend after
        // a redirect, so a large upload would sit in memory: refuse redirects there.
        if (IS_NODE) init.redirect = 'error';
      }

      const response = await this.fetchFollowing(url, init);
      if (response.ok) return response;

      // For a 404 without a code: on the Developer API, the file when the path names one, else the bucket.
      const fallback404 = api !== 'buckets' ? NotFoundError : spec.path.includes('/files/') ? FileNotFoundError : BucketNotFoundError;
      const error = await errorFromResponse(response, spec.method === 'HEAD' ? FileNotFoundError : fallback404);
      if (!(error instanceof RateLimitError) || !this.retry || !resendable || attempt >= this.retry.maxRetries) throw error;
      const delaySeconds = error.retryAfterSeconds ?? Math.min(2 ** attempt, this.retry.maxDelaySeconds);
      if (delaySeconds > this.retry.maxDelaySeconds) throw error;
      const delayMs = Math.round(delaySeconds * 1000);
      this.retry.onRetry?.({ attempt: attempt + 1, delayMs, error });
      await sleep(delayMs, spec.signal);
    }
  }
}
