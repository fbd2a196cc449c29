/**
 * Resumable uploads staged on the filesystem (staging.ts): one file per upload
 * under `<blob root>/staging`, appended to as its requests arrive and flushed
 * before each new offset is acknowledged; at the end the blob store adopts the
 * file under its final key by a rename, so a large upload is never copied.
 */
import { mkdir, open, stat, truncate, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BlobNotFoundError } from './blob-store.js';
import { FileWrites } from './file-writes.js';
import { STAGING_PREFIX, untilCut, type BlobStaging } from './staging.js';

/** The same name as the other stores' staging prefix (a bucket's storage name always ends in a random suffix, so none is this). */
export const STAGING_DIR = STAGING_PREFIX.slice(0, -1);

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

  async append(id: string, offset: number, body: Readable, maxBytes: number): Promise<number> {
    const missing = (error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new BlobNotFoundError(id) : error;
    };
    // Bytes past `offset` were never acknowledged (a crash between flushing them and recording them): they go.
    const existing = await open(this.file(id), 'r+').catch(missing);
    try {
      const { size } = await existing.stat();
      if (size < offset) throw new BlobNotFoundError(`${id}: ${offset - size} staged bytes are missing`);
      if (size > offset) await existing.truncate(offset);
    } finally {
      await existing.close();
    }
    // Append mode: every write lands at the end, which is now `offset`.
    const handle = await open(this.file(id), 'a').catch(missing);
    let size = offset;
    try {
      const writes = new FileWrites(handle);
      try {
        for await (const chunk of untilCut(body, maxBytes) as AsyncIterable<Buffer>) {
          await writes.add(chunk);
          size += chunk.length;
        }
      } finally {
        await writes.finish();
        // What arrived is on disk before its offset is acknowledged (also what came before a cut).
        await handle.sync();
      }
    } finally {
      await handle.close();
    }
    return size;
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
