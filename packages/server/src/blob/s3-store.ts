/**
 * Blobs as objects in an S3-compatible bucket (AWS S3, MinIO, s3rver, …).
 *
 * put() streams: the body goes through a byte counter and the BLAKE3 content
 * hash (content-hash.ts; it becomes Pail's ETag, whatever S3's own ETag is)
 * into lib-storage's Upload, which sends bodies up to one part size as a
 * single PutObject and larger ones as a multipart upload, holding at most a
 * few parts in memory. Every request carries a complete in-memory part, so a
 * body that fails midway never reaches S3 as a short object:
 * - failure before the first part is full: no request was sent at all;
 * - failure later: the multipart upload is never completed (and is aborted),
 *   so nothing becomes visible under the key. A PutObject or a completed
 *   multipart upload replaces the object atomically.
 * If the abort itself fails (network, or a server without AbortMultipartUpload
 * such as s3rver), the unfinished parts stay invisible and a bucket lifecycle
 * rule (AbortIncompleteMultipartUpload) is what reclaims them.
 */
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  type BucketLocationConstraint,
  type GetObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { PartsStaging } from './staging.js';
import { BlobNotFoundError, BlobTooLargeError, type BlobStaging, type BlobStore, type ByteRange, type PutOptions, type PutResult } from './blob-store.js';
import { createContentHasher } from './content-hash.js';
import { createS3Client } from './s3-client.js';
import { errorName, httpStatus, isMissingKey } from './s3-errors.js';
import { assertSafeKey } from './safe-key.js';
import { askedRange } from './served-range.js';

export interface S3StoreConfig {
  /** e.g. `http://127.0.0.1:9000`; unset means AWS itself. */
  endpoint?: string;
  bucket: string;
  region: string;
  /** Both or neither; neither means the SDK's default credential chain. */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `http://host/bucket/key` instead of `http://bucket.host/key` (MinIO, s3rver). */
  forcePathStyle: boolean;
  /** Prepended to every key, e.g. `pail/` when the bucket is shared. A missing trailing `/` is added. */
  prefix?: string;
  /** Multipart part size in bytes (at least 5 MiB). Default 8 MiB. */
  partSize?: number;
  /** Parts uploaded at once per put. Default 2. */
  queueSize?: number;
}

export interface S3OpenOptions {
  /** Create the bucket when HeadBucket says it does not exist. Default true. */
  createBucket?: boolean;
}

const MiB = 1024 * 1024;
const DEFAULT_PART_SIZE = 8 * MiB;
const DEFAULT_QUEUE_SIZE = 2;
/** DeleteObjects accepts at most this many keys per request. */
const DELETE_BATCH = 1000;

export class S3BlobStore implements BlobStore {
  readonly kind = 's3';
  /** Resumable uploads' bytes until they end: a blob per request, concatenated at the end (staging.ts). */
  readonly staging: BlobStaging = new PartsStaging(this);
  /** Exposed for tests and diagnostics (e.g. to observe which commands are sent). */
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partSize: number;
  private readonly queueSize: number;

  constructor(config: S3StoreConfig) {
    if (!config.bucket) throw new Error('S3 bucket name is required');
    if (!config.region) throw new Error('S3 region is required');
    if (Boolean(config.accessKeyId) !== Boolean(config.secretAccessKey)) {
      throw new Error('Set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither');
    }
    this.bucket = config.bucket;
    this.prefix = normalizePrefix(config.prefix);
    this.partSize = config.partSize ?? DEFAULT_PART_SIZE;
    this.queueSize = config.queueSize ?? DEFAULT_QUEUE_SIZE;
    if (this.partSize < 5 * MiB) throw new Error('S3 part size must be at least 5 MiB');
    if (!Number.isInteger(this.queueSize) || this.queueSize < 1) throw new Error('S3 queue size must be at least 1');

    this.client = createS3Client(config);
  }

  /**
   * A store whose bucket is known to exist: HeadBucket, and on "not found"
   * CreateBucket (handy for MinIO and s3rver; on AWS the bucket is usually
   * made beforehand). Any other failure (bad credentials, no route) is thrown.
   */
  static async open(config: S3StoreConfig, options: S3OpenOptions = {}): Promise<S3BlobStore> {
    const store = new S3BlobStore(config);
    try {
      await store.ensureBucket(config.region, options.createBucket ?? true);
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    assertSafeKey(key);
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    const hash = options.contentHash === false ? null : await createContentHasher();
    let size = 0;
    // The first failure on our side (source stream error or size cap). It wins
    // over whatever the SDK reports afterwards, e.g. a failed abort.
    let sourceError: Error | undefined;

    async function* count(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of body as AsyncIterable<Buffer | string>) {
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          size += bytes.length;
          if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
          hash?.update(bytes);
          yield bytes;
        }
      } catch (error) {
        if (error instanceof Error) sourceError ??= error;
        throw error;
      }
    }
    const counted = Readable.from(count(), { objectMode: false });

    const upload = new Upload({
      client: this.client,
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
      params: {
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Body: counted,
        ContentType: options.contentType,
      },
    });
    try {
      await upload.done();
    } catch (error) {
      // Never leave the caller's stream half-read (an HTTP request would hang).
      counted.destroy();
      if (!body.destroyed) body.destroy();
      throw sourceError ?? error;
    }
    if (sourceError !== undefined) throw sourceError; // defensive: the SDK should have rejected
    return { size, contentHash: hash?.digest() ?? '' };
  }

  /**
   * Streams the sources through Pail into a new object, each fetched only when
   * the one before has ended. A server-side copy (the backend's own multipart
   * upload with UploadPartCopy) would move no bytes through Pail, but s3rver,
   * the backend the tests run on, answers it NotImplemented.
   */
  async concat(key: string, sources: string[]): Promise<{ size: number }> {
    const open = (source: string) => this.get(source);
    const body = Readable.from(
      (async function* () {
        for (const source of sources) yield* (await open(source)) as AsyncIterable<Buffer>;
      })(),
      { objectMode: false },
    );
    const { size } = await this.put(key, body, { contentHash: false });
    return { size };
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    assertSafeKey(key);
    if (range) assertRange(range);
    const output = await this.getObject(key, range ? `bytes=${range.start}-${range.end}` : undefined);
    const stream = output.Body;
    if (!(stream instanceof Readable)) {
      throw new Error('S3 GetObject returned a body that is not a Node stream');
    }
    if (!range) return stream;
    return askedRange(stream, { contentRange: output.ContentRange, contentLength: output.ContentLength }, range);
  }

  async read(key: string): Promise<Buffer> {
    assertSafeKey(key);
    const output = await this.getObject(key, undefined);
    if (!output.Body) return Buffer.alloc(0);
    const bytes = await output.Body.transformToByteArray();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  async head(key: string): Promise<{ size: number; modifiedAt: Date } | null> {
    assertSafeKey(key);
    try {
      const output = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { size: output.ContentLength ?? 0, modifiedAt: output.LastModified ?? new Date(0) };
    } catch (error) {
      // HEAD responses have no body, so a missing key and a missing bucket
      // both arrive as a bare 404 ("NotFound").
      if (isMissingKey(error)) return null;
      throw error;
    }
  }

  async delete(keys: string[]): Promise<void> {
    for (const key of keys) assertSafeKey(key);
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += DELETE_BATCH) {
      const batch = unique.slice(i, i + DELETE_BATCH);
      const output = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((key) => ({ Key: this.objectKey(key) })), Quiet: true },
        }),
      );
      // S3 reports a missing key as deleted; some compatible servers report NoSuchKey.
      const failures = (output.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failures.length > 0) {
        const first = failures[0];
        throw new Error(
          `S3 DeleteObjects failed for ${failures.length} key(s), e.g. ${first?.Key ?? '?'}: ${first?.Code ?? '?'} ${first?.Message ?? ''}`.trim(),
        );
      }
    }
  }

  async *list(prefix: string): AsyncIterable<{ key: string; modifiedAt: Date }> {
    let continuationToken: string | undefined;
    do {
      const output = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix + prefix,
          ContinuationToken: continuationToken,
        }),
      );
      for (const object of output.Contents ?? []) {
        if (object.Key === undefined || !object.Key.startsWith(this.prefix)) continue;
        yield { key: object.Key.slice(this.prefix.length), modifiedAt: object.LastModified ?? new Date(0) };
      }
      continuationToken = output.IsTruncated ? output.NextContinuationToken : undefined;
    } while (continuationToken);
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private objectKey(key: string): string {
    return this.prefix + key;
  }

  private async getObject(key: string, range: string | undefined): Promise<GetObjectCommandOutput> {
    try {
      return await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Range: range }));
    } catch (error) {
      if (isMissingKey(error)) throw new BlobNotFoundError(key);
      throw error;
    }
  }

  private async ensureBucket(region: string, create: boolean): Promise<void> {
    try {
      await this.check();
      return;
    } catch (error) {
      const name = errorName(error);
      if (!create || (name !== 'NotFound' && name !== 'NoSuchBucket' && httpStatus(error) !== 404)) throw error;
    }
    try {
      await this.client.send(
        new CreateBucketCommand({
          Bucket: this.bucket,
          // us-east-1 is the default and must not be named explicitly.
          CreateBucketConfiguration: region === 'us-east-1' ? undefined : { LocationConstraint: region as BucketLocationConstraint },
        }),
      );
    } catch (error) {
      // Another instance may have created it between our HeadBucket and
      // CreateBucket; stores word that differently (BucketAlreadyOwnedByYou,
      // BucketAlreadyExists), so ask again whether it is there now.
      if (errorName(error) === 'BucketAlreadyOwnedByYou') return;
      await this.check().catch(() => {
        throw error;
      });
    }
  }
}

function normalizePrefix(prefix: string | undefined): string {
  const trimmed = (prefix ?? '').replace(/^\/+/, '');
  if (trimmed === '') return '';
  return trimmed.endsWith('/') ? trimmed : `${trimmed}/`;
}

function assertRange(range: ByteRange): void {
  if (!Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end) || range.start < 0 || range.end < range.start) {
    throw new RangeError(`Invalid byte range ${range.start}-${range.end}`);
  }
}
