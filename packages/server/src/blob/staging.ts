/**
 * Where a resumable upload's bytes wait until its last byte arrives: a staging
 * area beside the blob store, keyed by the upload's id, out of garbage
 * collection's sight (it skips this prefix). One request writes an upload at
 * a time (domain/resumable-writers.ts), from the offset it was let in at. Its
 * bytes are kept as they arrive, so a connection cut mid-request keeps what
 * came before the cut, and are on disk (or in the store) before the new
 * offset is acknowledged. At the end the staged bytes become a blob under its
 * final key.
 *
 * - On the filesystem, one file per upload, written by position and, at the
 *   end, renamed into place: no copy (fs-staging.ts).
 * - On any other store, each append is a blob of its own and the end
 *   concatenates them (this file).
 *
 * What a staging area does is BlobStaging (blob-store.ts), part of the store's contract.
 */
import { finished, PassThrough, type Readable } from 'node:stream';
import { BlobNotFoundError, type BlobStaging, type BlobStore } from './blob-store.js';

/** The bytes of `body` until it ends or fails, at most `maxBytes` of them: a cut connection ends the stream instead of failing it. */
export function untilCut(body: Readable, maxBytes: number): Readable {
  const out = new PassThrough();
  let taken = 0;
  body.on('data', (chunk: Buffer) => {
    const room = maxBytes - taken;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    taken += part.length;
    if (!out.write(part)) body.pause();
  });
  out.on('drain', () => body.resume());
  // finished() also answers for a body that ended or was destroyed before this was called (a client gone, or a newer request, while the upload was held).
  finished(body, { writable: false }, () => out.end());
  return out;
}

/** The key prefix of everything staged; garbage collection leaves it alone. */
export const STAGING_PREFIX = 'staging/';
const partKey = (id: string, offset: number) => `${STAGING_PREFIX}${id}/${String(offset).padStart(16, '0')}`;

/** Staging on any blob store: each append a blob under `.staging/<id>/<offset>`. */
export class PartsStaging implements BlobStaging {
  constructor(private readonly blobs: BlobStore) {}

  async create(): Promise<void> {
    // Nothing to make: an upload with no parts yet is empty.
  }

  /**
   * The parts that make the first `size` bytes: from offset 0, each starting
   * where the one before ended (a part left by a request whose offset was
   * never recorded is not among them).
   */
  private async chain(id: string, size: number): Promise<string[]> {
    const byOffset = new Map<number, { key: string; size: number }>();
    for await (const { key } of this.blobs.list(`${STAGING_PREFIX}${id}/`)) {
      const head = await this.blobs.head(key);
      if (head) byOffset.set(Number(key.slice(key.lastIndexOf('/') + 1)), { key, size: head.size });
    }
    const keys: string[] = [];
    for (let at = 0; at < size;) {
      const part = byOffset.get(at);
      if (!part || part.size === 0) throw new BlobNotFoundError(`${id}: no staged bytes at ${at}`);
      keys.push(part.key);
      at += part.size;
    }
    return keys;
  }

  async append(id: string, offset: number, body: Readable, maxBytes: number, options: { releaseChunks?: boolean } = {}): Promise<number> {
    const { size } = await this.blobs.put(partKey(id, offset), untilCut(body, maxBytes), { contentHash: false, releaseChunks: options.releaseChunks === true });
    return offset + size;
  }

  async commit(id: string, key: string, size: number): Promise<void> {
    const keys = await this.chain(id, size);
    if (keys.length === 0) await this.blobs.put(key, emptyStream(), { contentHash: false });
    else await this.blobs.concat(key, keys);
    await this.remove(id);
  }

  async remove(id: string): Promise<void> {
    const keys: string[] = [];
    for await (const { key } of this.blobs.list(`${STAGING_PREFIX}${id}/`)) keys.push(key);
    if (keys.length > 0) await this.blobs.delete(keys);
  }
}

function emptyStream(): Readable {
  const stream = new PassThrough();
  stream.end();
  return stream;
}
