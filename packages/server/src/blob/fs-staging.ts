/**
 * Resumable uploads staged on the filesystem (staging.ts): one file per upload
 * under `<blob root>/staging`, each request's bytes written at the offset it
 * was let in at (by position, never in append mode: a request holds the
 * upload alone, domain/resumable-writers.ts) and flushed before its new
 * offset is acknowledged; at the end the blob store adopts the
 * file under its final key by a rename, so a large upload is never copied.
 */
import { mkdir, open, stat, truncate, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BlobNotFoundError, type BlobStaging } from './blob-store.js';
import { FileWrites } from './file-writes.js';
import { releaseChunk } from './release-chunk.js';
import { STAGING_PREFIX } from './staging.js';

/** The same name as the other stores' staging prefix (a bucket's storage name always ends in a random suffix, so none is this). */
export const STAGING_DIR = STAGING_PREFIX.slice(0, -1);

const FLUSH_AHEAD_BYTES = 4 * 1024 * 1024;

/** Upload ids are the server's own (tus: 32 hex digits); anything else cannot name a staged file. */
const ID = /^[A-Za-z0-9_-]{1,128}$/;

export class FsStaging implements BlobStaging {
  private constructor(
    private readonly dir: string,
    /** The blob store's: makes a flushed file the blob under `key` (renamed into place, the directory flushed). */
    private readonly adopt: (file: string, key: string) => Promise<void>,
  ) {}

  static async open(root: string, adopt: (file: string, key: string) => Promise<void>): Promise<FsStaging> {
    const dir = path.join(root, STAGING_DIR);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return new FsStaging(dir, adopt);
  }

  private file(id: string): string {
    if (!ID.test(id)) throw new BlobNotFoundError(id);
    return path.join(this.dir, id);
  }

  async create(id: string): Promise<void> {
    const handle = await open(this.file(id), 'wx', 0o600);
    await handle.sync();
    await handle.close();
  }

  async append(id: string, offset: number, body: Readable, maxBytes: number, options: { releaseChunks?: boolean } = {}): Promise<number> {
    // Written by position from `offset`; never created here (an upload that ended has no file, and gets none back).
    const handle = await open(this.file(id), 'r+').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new BlobNotFoundError(id) : error;
    });
    try {
      const staged = (await handle.stat()).size;
      if (staged < offset) throw new BlobNotFoundError(`${id}: ${offset - staged} staged bytes are missing`);
      // Bytes past `offset` were never acknowledged (a crash between flushing them and recording them): they go.
      if (staged > offset) await handle.truncate(offset);
      // Each request's bytes are flushed before it is answered, while the client waits: flushing as they come keeps that last flush short.
      const writes = new FileWrites(handle, FLUSH_AHEAD_BYTES, offset);
      let size = offset;
      try {
        const chunks = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
        while (size - offset < maxBytes) {
          let next: IteratorResult<Buffer>;
          try {
            next = await chunks.next();
          } catch {
            // The connection was cut: what arrived before stays (tus), and the client asks where to resume.
            break;
          }
          if (next.done) break;
          const room = maxBytes - (size - offset);
          const chunk = next.value.length > room ? next.value.subarray(0, room) : next.value;
          await writes.add(chunk);
          size += chunk.length;
          if (options.releaseChunks) releaseChunk(chunk);
        }
      } finally {
        await writes.finish();
        // What arrived is on disk before its offset is acknowledged (also what came before a cut).
        await handle.sync();
      }
      return size;
    } finally {
      await handle.close();
    }
  }

  async commit(id: string, key: string, size: number): Promise<void> {
    const file = this.file(id);
    // Bytes past `size` were never acknowledged (see append).
    if ((await stat(file)).size !== size) await truncate(file, size);
    await this.adopt(file, key);
  }

  async remove(id: string): Promise<void> {
    await unlink(this.file(id)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}
