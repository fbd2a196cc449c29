/**
 * The Pail client: one method per Developer API operation, on top of fetch,
 * so it runs in Node 20+ and in browsers. Every call sends the API key in
 * `x-api-key`, turns refusals into typed errors (errors.ts), and can wait and
 * retry on 429 as `Retry-After` says, when the request body can be resent
 * (transport.ts). Key management (`/api/keys`) needs a session instead, sent
 * as a bearer token; requests to signed urls carry no credential at all.
 * Each call's options are declared beside the code that turns them into a
 * request: bucket-options.ts, file-listing.ts, uploads.ts, downloads.ts,
 * signed-urls.ts, keys.ts, resumable.ts, file-details.ts, moves.ts; the calls
 * on a file's tags, versions and locks and a bucket's trash are in file-history.ts,
 * webhooks and the audit log in event-calls.ts.
 */
import type { BucketId, CallOptions } from './call-options.js';
import type { PailOptions } from './client-options.js';
import type { BucketLimits, CreateBucketOptions, Visibility } from './bucket-options.js';
import { download, fileMetadata, heldBody, writeToPath, type DownloadOptions, type FileMetadata } from './downloads.js';
import { detailsPath, editRequest, zipRequest, type FileEdit, type ZipOptions } from './file-details.js';
import type { FilePage, IterateFilesOptions, ListFilesOptions } from './file-listing.js';
import { encodeFilename, encodeFilenameForDelete } from './file-paths.js';
import { createKeyBody, type CreateKeyOptions } from './keys.js';
import { deleteLifecycle, getLifecycle, setLifecycle, type LifecycleRule } from './lifecycle.js';
import { folderName, moveBody, type MoveOptions } from './moves.js';
import { bucketSegment, filePath } from './request-paths.js';
import {
  terminateUpload,
  uploadResumable,
  type ResumableBody,
  type ResumableTarget,
  type ResumableUploadOptions,
  type ResumableUploadResult,
} from './resumable.js';
import { signedUrlBody, type SignedUrlOptions } from './signed-urls.js';
import { EventCalls } from './event-calls.js';
import type {
  ApiKey,
  BucketObject,
  CreatedApiKey,
  DeleteFolderResult,
  FileDetails,
  ListBucketsBody,
  ListFilesBody,
  ListUnfinishedUploadsBody,
  MoveResult,
  SignedUrl,
  StorageBucket,
  UnfinishedUpload,
  UnfinishedUploadKind,
  UploadResult,
} from './types.js';
import type { UploadBody } from './upload-body.js';
import { formUpload, rawUpload, type ListUnfinishedUploadsOptions, type UnfinishedUploads, type UploadOptions } from './uploads.js';

export class Pail extends EventCalls {
  // ---------------------------------------------------------------- buckets

  /** All your live buckets, in ascending id order. */
  async listBuckets(options: CallOptions = {}): Promise<StorageBucket[]> {
    const body = await this.transport.json<ListBucketsBody>({ method: 'GET', path: '', ...options });
    return body.data;
  }

  /** Creates a bucket, private unless `{ public: true }` or `{ visibility: 'public' }`. */
  async createBucket(name: string, options: CreateBucketOptions = {}): Promise<StorageBucket> {
    const { signal, ...fields } = options;
    const body = await this.transport.json<{ data: StorageBucket }>({ method: 'POST', path: '', json: { name, ...fields }, signal });
    return body.data;
  }

  async getBucket(id: BucketId, options: CallOptions = {}): Promise<StorageBucket> {
    const body = await this.transport.json<{ data: StorageBucket }>({ method: 'GET', path: `/${bucketSegment(id)}`, ...options });
    return body.data;
  }

  /** Sets or clears (`null`) the bucket's limits; fields left out stay as they are. */
  async updateBucket(id: BucketId, limits: BucketLimits, options: CallOptions = {}): Promise<StorageBucket> {
    const body = await this.transport.json<{ data: StorageBucket }>({ method: 'PATCH', path: `/${bucketSegment(id)}`, json: limits, ...options });
    return body.data;
  }

  /** Deletes the bucket and every file in it. */
  async deleteBucket(id: BucketId, options: CallOptions = {}): Promise<void> {
    await this.transport.json({ method: 'DELETE', path: `/${bucketSegment(id)}`, ...options });
  }

  async setVisibility(id: BucketId, visibility: Visibility, options: CallOptions = {}): Promise<void> {
    await this.transport.json({ method: 'POST', path: `/${bucketSegment(id)}/visibility`, json: { visibility }, ...options });
  }

  /** The bucket's lifecycle rules (lifecycle.ts), or null when it has none. */
  getLifecycle(id: BucketId, options: CallOptions = {}): Promise<LifecycleRule[] | null> {
    return getLifecycle(this.transport, id, options);
  }

  /** Replaces the bucket's lifecycle rules whole (S3's rules as JSON); returns them as kept. Needs `manage`. */
  setLifecycle(id: BucketId, rules: LifecycleRule[], options: CallOptions = {}): Promise<LifecycleRule[]> {
    return setLifecycle(this.transport, id, rules, options);
  }

  /** Removes the bucket's lifecycle rules. Needs `manage`. */
  deleteLifecycle(id: BucketId, options: CallOptions = {}): Promise<void> {
    return deleteLifecycle(this.transport, id, options);
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
    const body = await this.transport.json<ListFilesBody>({
      method: 'GET',
      path: `/${bucketSegment(id)}/files`,
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
    const upload = await rawUpload(body, options);
    const result = await this.transport.json<{ data: UploadResult }>({ method: 'PUT', path: filePath(id, filename), ...upload });
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
    return terminateUpload(uploadUrl, this.transport.keyHeaders());
  }

  /**
   * Your unfinished uploads (resumable and S3 multipart, in the buckets the
   * key may use; only `bucket`'s when given), newest first, each with the
   * bytes it holds against the storage cap, and what they hold together.
   */
  async listUnfinishedUploads(options: ListUnfinishedUploadsOptions = {}): Promise<UnfinishedUploads> {
    const { bucket, signal } = options;
    const query = { bucket: bucket === undefined ? undefined : String(bucket) };
    const body = await this.transport.json<ListUnfinishedUploadsBody>({ method: 'GET', api: 'uploads', path: '', query, signal });
    return { uploads: body.data, heldBytes: body.held_bytes };
  }

  /** Cancels an unfinished upload by its kind and id (as listed): its bytes are deleted and no longer held. Needs `write`. */
  async cancelUnfinishedUpload(kind: UnfinishedUploadKind, uploadId: string, options: CallOptions = {}): Promise<UnfinishedUpload> {
    const path = `/${encodeURIComponent(kind)}/${encodeURIComponent(uploadId)}`;
    const body = await this.transport.json<{ data: UnfinishedUpload }>({ method: 'DELETE', api: 'uploads', path, ...options });
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
    const upload = await formUpload(body, filename, options);
    const result = await this.transport.json<{ data: UploadResult }>({ method: 'POST', path: `/${bucketSegment(id)}/files`, ...upload });
    return result.data;
  }

  /** The file's bytes (or the bytes of `range`). */
  async downloadFile(id: BucketId, filename: string, options: DownloadOptions = {}): Promise<Uint8Array> {
    const response = await download(this.transport, id, filename, options);
    return new Uint8Array(await response.arrayBuffer());
  }

  /**
   * The file as a stream of bytes, read from the network as you consume it.
   * In Node, `Readable.fromWeb(stream)` turns it into a Node stream.
   */
  async downloadStream(id: BucketId, filename: string, options: DownloadOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const response = await download(this.transport, id, filename, options);
    return heldBody(response);
  }

  /**
   * Streams a file to a path on disk (Node only), replacing what is there.
   * Resolves with the bytes written; if the download fails midway, the partial
   * file is removed.
   */
  async downloadToPath(id: BucketId, filename: string, path: string, options: DownloadOptions = {}): Promise<number> {
    const stream = await this.downloadStream(id, filename, options);
    return writeToPath(stream, path);
  }

  /**
   * The file's metadata from a HEAD request. A HEAD answer has no body, so a
   * 404 cannot say what is missing; the client then asks once more with a
   * one-byte GET to throw the right BucketNotFoundError or FileNotFoundError.
   */
  headFile(id: BucketId, filename: string, options: CallOptions = {}): Promise<FileMetadata> {
    return fileMetadata(this.transport, id, filename, options);
  }

  /** Size, type, ETag, times, url, the stored headers and the user metadata (S3's x-amz-meta-*). */
  async fileDetails(id: BucketId, filename: string, options: CallOptions = {}): Promise<FileDetails> {
    const body = await this.transport.json<{ data: FileDetails }>({ method: 'GET', path: detailsPath(id, filename), ...options });
    return body.data;
  }

  /**
   * Edits a file's user metadata (replaced whole; at most 2 KiB with the
   * headers, as S3), type and stored headers; the bytes and ETag stay. Needs
   * `write`. Resolves with the details as they are now.
   */
  async editFile(id: BucketId, filename: string, edit: FileEdit, options: CallOptions = {}): Promise<FileDetails> {
    const body = await this.transport.json<{ data: FileDetails }>(editRequest(id, filename, edit, options));
    return body.data;
  }

  /**
   * A folder (`prefix`), the whole bucket, or a selection (`filenames`,
   * `folders`) as one zip, streamed as the server writes it: files STORED,
   * named relative to `prefix`. NotFoundError (FileNotFound) when it holds no file.
   */
  async zipStream(id: BucketId, options: ZipOptions = {}): Promise<ReadableStream<Uint8Array>> {
    return heldBody(await this.transport.send(zipRequest(id, options)));
  }

  /** The zip of `zipStream`, written to a path (Node only); a partial file is removed if it fails midway. Resolves with the bytes written. */
  async zipToPath(id: BucketId, path: string, options: ZipOptions = {}): Promise<number> {
    return writeToPath(await this.zipStream(id, options), path);
  }

  async deleteFile(id: BucketId, filename: string, options: CallOptions = {}): Promise<void> {
    await this.transport.json({ method: 'DELETE', path: `/${bucketSegment(id)}/files/${encodeFilenameForDelete(filename)}`, ...options });
  }

  /**
   * Moves or renames a file, within the bucket or into another of yours
   * (`toBucket`). Its bytes, type, metadata and ETag go with it; the old name
   * is gone at once, and nothing is copied. A name ending in `/` is a folder:
   * see moveFolder. A name taken throws FileExistsError unless `overwrite`.
   */
  async moveFile(id: BucketId, from: string, to: string, options: MoveOptions = {}): Promise<MoveResult> {
    const body = await this.transport.json<{ data: MoveResult }>({
      method: 'POST',
      path: `/${bucketSegment(id)}/move`,
      json: moveBody(from, to, options),
      signal: options.signal,
    });
    return body.data;
  }

  /**
   * Moves or renames a folder with every file in it (`photos/` to
   * `albums/2026/`; a missing trailing `/` is added). Every file is checked
   * first (its new name, the target bucket's limits, names taken), so a
   * refusal moves nothing; then each file moves on its own, so if the call
   * is cut off, calling it again moves the rest (`moved` counts the files
   * this call moved: 0 when none was left).
   */
  moveFolder(id: BucketId, from: string, to: string, options: MoveOptions = {}): Promise<MoveResult> {
    return this.moveFile(id, folderName(from), folderName(to), options);
  }

  /**
   * Deletes a folder (`photos/2026/`, the trailing `/` optional) and every
   * file in it, its subfolders' too. Resolves with how many files this call
   * deleted (0 when nothing was left). Needs `delete`.
   */
  async deleteFolder(id: BucketId, folder: string, options: CallOptions = {}): Promise<DeleteFolderResult> {
    const body = await this.transport.json<{ data: DeleteFolderResult }>({
      method: 'DELETE',
      path: `/${bucketSegment(id)}/folders/${encodeFilename(folderName(folder))}`,
      ...options,
    });
    return body.data;
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
    const body = await this.transport.json<{ data: SignedUrl }>({
      method: 'POST',
      path: `${filePath(id, filename)}/signed-url`,
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
    const upload = await rawUpload(body, options);
    const result = await this.transport.json<{ data: UploadResult }>({ method: 'PUT', api: 'signed-url', path: url, ...upload });
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
    const body = await anonymous.transport.json<{ data: { token: string } }>({ method: 'POST', api: 'auth', path: '/login', json: { email, password } });
    return new Pail({ ...rest, sessionToken: body.data.token });
  }

  /** Ends the session (and the signed urls made with it). The client's API key keeps working. */
  async logout(options: CallOptions = {}): Promise<void> {
    await this.transport.json({ method: 'POST', api: 'auth', path: '/logout', ...options });
  }

  /** Your live API keys, with their limits; never their secrets. Needs `sessionToken`. */
  async listKeys(options: CallOptions = {}): Promise<ApiKey[]> {
    const body = await this.transport.json<{ data: ApiKey[] }>({ method: 'GET', api: 'keys', path: '', ...options });
    return body.data;
  }

  /**
   * Creates an API key, optionally limited to some buckets, some permissions
   * and a lifetime. The answer holds the secret (`key`): the only time it is
   * shown. Needs `sessionToken`.
   */
  async createKey(options: CreateKeyOptions = {}): Promise<CreatedApiKey> {
    const body = await this.transport.json<{ data: CreatedApiKey }>({
      method: 'POST',
      api: 'keys',
      path: '',
      json: createKeyBody(options),
      signal: options.signal,
    });
    return body.data;
  }

  /** Revokes a key: from then on it gets 401, and the signed urls it made stop working. Needs `sessionToken`. */
  async revokeKey(keyId: number, options: CallOptions = {}): Promise<void> {
    await this.transport.json({ method: 'DELETE', api: 'keys', path: `/${encodeURIComponent(String(keyId))}`, ...options });
  }

  // -------------------------------------------------------------- internals

  private resumableTarget(id: BucketId): ResumableTarget {
    return { endpoint: this.transport.apiUrl('buckets', `/${bucketSegment(id)}/uploads`), headers: this.transport.keyHeaders() };
  }
}
