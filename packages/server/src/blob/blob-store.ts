/**
 * The blob store holds bytes only. Names, sizes, types and checksums live in
 * the database; a key is opaque to the store. Every implementation must pass
 * test/blob-store-contract.ts.
 *
 * put() is all-or-nothing: when it resolves, the bytes are durable under `key`;
 * when it rejects (bad stream, size cap, crash), nothing is visible under `key`.
 */
import type { Readable } from 'node:stream';

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

export interface PutOptions {
  /** Reject with BlobTooLargeError once more than this many bytes arrive. */
  maxBytes?: number;
  contentType?: string;
  /**
   * The body's chunks belong to this upload alone (a raw request body, read
   * fresh from the socket): a store that copies them may free each one as
   * soon as it has (release-chunk.ts).
   */
  releaseChunks?: boolean;
  /**
   * false: skip the content hash (PutResult.contentHash is then ''), for
   * blobs whose hash nobody uses (multipart parts: their ETag is their MD5).
   */
  contentHash?: boolean;
}

export interface PutResult {
  size: number;
  /** The content hash, computed while streaming: the ETag (content-hash.ts); '' when PutOptions.contentHash was false. */
  contentHash: string;
}

export interface BlobStore {
  readonly kind: string;
  /** Where resumable uploads' bytes wait until their last byte arrives (staging.ts). */
  readonly staging: BlobStaging;
  put(key: string, body: Readable, options?: PutOptions): Promise<PutResult>;
  /**
   * A new blob under `key` holding the bytes of `sources` one after another
   * (a completed multipart upload's parts), all-or-nothing as put() is, with
   * no content hash. The sources are left as they are, and deleting them
   * later leaves the new blob whole (it may share their storage, as the
   * filesystem store's hard links do: fs-pieces.ts). Rejects with
   * BlobNotFoundError when a source is missing, and then nothing is visible
   * under `key`.
   */
  concat(key: string, sources: string[]): Promise<{ size: number }>;
  /** A stream of the bytes (or of one range). Rejects with BlobNotFoundError. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /**
   * The whole content as one buffer, for small blobs: one round trip instead of
   * a stream's open/read/close. Rejects with BlobNotFoundError.
   */
  read(key: string): Promise<Buffer>;
  /** null when absent. */
  head(key: string): Promise<{ size: number; modifiedAt: Date } | null>;
  /** Deleting a missing key is not an error. */
  delete(keys: string[]): Promise<void>;
  /** Every key under `prefix`, with its last-modified time (for garbage collection). */
  list(prefix: string): AsyncIterable<{ key: string; modifiedAt: Date }>;
  /** Throws if the store cannot be reached (readiness probe). */
  check(): Promise<void>;
  close?(): Promise<void>;
}

/** Where a resumable upload's bytes wait until its last byte arrives (staging.ts). */
export interface BlobStaging {
  /** Starts an empty staged upload. */
  create(id: string): Promise<void>;
  /**
   * Appends `body` after the first `offset` bytes staged (the upload's
   * recorded offset; any staged beyond it were never acknowledged, and go)
   * and returns the new size, once the bytes are durable. A body cut short
   * keeps what arrived before the cut; `maxBytes` more are never taken.
   * `releaseChunks`: the body's chunks are its own (a raw request body), to
   * be freed once copied (PutOptions.releaseChunks).
   */
  append(id: string, offset: number, body: Readable, maxBytes: number, options?: { releaseChunks?: boolean }): Promise<number>;
  /** Makes the first `size` staged bytes the blob under `key`; the staged upload is gone. */
  commit(id: string, key: string, size: number): Promise<void>;
  /** Forgets a staged upload (missing: not an error). */
  remove(id: string): Promise<void>;
}

export class BlobNotFoundError extends Error {
  constructor(key: string) {
    super(`Blob not found: ${key}`);
    this.name = 'BlobNotFoundError';
  }
}

export class BlobTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Blob exceeds ${limit} bytes`);
    this.name = 'BlobTooLargeError';
  }
}
