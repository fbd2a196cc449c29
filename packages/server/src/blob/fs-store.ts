/**
 * Blobs as files under a root directory. A put writes a temporary file under
 * `<root>/.tmp`, flushes it to disk, renames it into place and flushes the
 * directory, so a crash at any point leaves either no blob or the whole blob.
 * Temporary files left by a crashed process are removed when a store opens.
 */
import { randomUUID } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { copyFile, mkdir, open, opendir, readdir, readFile, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore, type ByteRange, type PutOptions, type PutResult } from './blob-store.js';
import { GroupSync } from '../group-sync.js';
import { createContentHasher } from './content-hash.js';
import { FileReadStream } from './file-read-stream.js';
import { FileAppender, FileWrites } from './file-writes.js';
import { FsStaging } from './fs-staging.js';
import type { BlobStaging } from './staging.js';
import { releaseChunk } from './release-chunk.js';
import { resolveUnder } from './safe-key.js';

const TMP_DIR = '.tmp';

/** Stored bytes are the owners' alone: readable by the server's user only. */
const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

export class FsBlobStore implements BlobStore {
  readonly kind = 'fs';
  private readonly tmpDir: string;
  /** Parallel puts into one directory share directory fsyncs. */
  private readonly dirSyncs = new DirSyncCoalescer();
  /** Directories known to exist, so a put does not ask the disk every time. */
  private readonly knownDirs = new Set<string>();
  /** Resumable uploads' bytes until they end (fs-staging.ts); set by open(). */
  staging!: BlobStaging;

  private constructor(private readonly root: string) {
    this.tmpDir = path.join(root, TMP_DIR);
  }

  static async open(root: string): Promise<FsBlobStore> {
    const store = new FsBlobStore(path.resolve(root));
    await mkdir(store.tmpDir, { recursive: true, mode: PRIVATE_DIR });
    await store.removeDeadTempFiles();
    store.staging = await FsStaging.open(store.root, (file, key) => store.adopt(file, key));
    return store;
  }

  /** A staged file (fs-staging.ts) becomes the blob under `key`: flushed, renamed into place, the directory flushed. */
  private async adopt(file: string, key: string): Promise<void> {
    const handle = await open(file, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await this.publish(file, resolveUnder(this.root, key));
  }

  /**
   * Temporary files are named `<pid>-<uuid>`. Those of processes that no longer
   * run are what a crash left behind; those of a live process (a server while
   * `pail gc` runs beside it) are uploads in flight and stay. A file carrying
   * our own pid is from an earlier process that had it (containers reuse pid 1).
   */
  private async removeDeadTempFiles(): Promise<void> {
    for (const name of await readdir(this.tmpDir)) {
      const pid = Number(name.split('-')[0]);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processIsAlive(pid)) continue;
      await rm(path.join(this.tmpDir, name), { recursive: true, force: true });
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    const finalPath = resolveUnder(this.root, key);
    const tmpPath = path.join(this.tmpDir, `${process.pid}-${randomUUID()}`);
    const hash = options.contentHash === false ? null : await createContentHasher();
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    let size = 0;
    try {
      // A file handle and batched writes rather than a write stream: a
      // stream's per-chunk machinery and its close-time flush cost twice the
      // time of the same calls made directly (docs/performance.md).
      const file = await open(tmpPath, 'wx', PRIVATE_FILE);
      try {
        const writes = new FileWrites(file);
        for await (const item of body as AsyncIterable<Buffer | string>) {
          // A source with setEncoding() yields strings: count bytes, not characters.
          const chunk = typeof item === 'string' ? Buffer.from(item) : item;
          size += chunk.length;
          if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
          hash?.update(chunk);
          await writes.add(chunk);
          if (options.releaseChunks) releaseChunk(chunk);
        }
        await writes.finish();
        // On disk before the rename can expose it.
        await file.sync();
      } finally {
        await file.close();
      }
      await this.publish(tmpPath, finalPath);
    } catch (error) {
      await unlink(tmpPath).catch(() => {});
      throw error;
    }
    return { size, contentHash: hash?.digest() ?? '' };
  }

  /**
   * The first source is copied by the kernel (fs.copyFile: copy_file_range,
   * no bytes through the process); Node 20 offers no call that appends that
   * way, so the rest are read and written in large blocks (file-writes.ts).
   * Into a temporary file, flushed and renamed as put() does.
   */
  async concat(key: string, sources: string[]): Promise<{ size: number }> {
    const finalPath = resolveUnder(this.root, key);
    const tmpPath = path.join(this.tmpDir, `${process.pid}-${randomUUID()}`);
    const missing = (source: string) => (error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' || error.code === 'EISDIR' ? new BlobNotFoundError(source) : error;
    };
    let size: number;
    try {
      const [first, ...rest] = sources;
      if (first !== undefined) await copyFile(resolveUnder(this.root, first), tmpPath, fsConstants.COPYFILE_EXCL).catch(missing(first));
      const file = await open(tmpPath, first === undefined ? 'wx' : 'r+', PRIVATE_FILE);
      try {
        size = (await file.stat()).size;
        const appender = new FileAppender(file, size);
        try {
          for (const source of rest) {
            const from: FileHandle = await open(resolveUnder(this.root, source), 'r').catch(missing(source));
            try {
              size += await appender.append(from).catch(missing(source));
            } finally {
              await from.close();
            }
          }
        } finally {
          await appender.finish();
        }
        await file.sync();
      } finally {
        await file.close();
      }
      await this.publish(tmpPath, finalPath);
    } catch (error) {
      await unlink(tmpPath).catch(() => {});
      throw error;
    }
    return { size };
  }

  /** A flushed temporary file becomes the blob: renamed into place, the directory flushed. */
  private async publish(tmpPath: string, finalPath: string): Promise<void> {
    const dir = path.dirname(finalPath);
    await this.ensureDir(dir);
    await rename(tmpPath, finalPath);
    await this.dirSyncs.sync(dir);
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const file = resolveUnder(this.root, key);
    // Open first so a missing blob is a clean rejection, not a stream error later.
    const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new BlobNotFoundError(key) : error;
    });
    // A directory (a key that is only a prefix of other keys) opens fine on Linux
    // but is not a blob.
    const info = await handle.stat().catch(async (error: unknown) => {
      await handle.close();
      throw error;
    });
    if (!info.isFile()) {
      await handle.close();
      throw new BlobNotFoundError(key);
    }
    const length = range ? range.end - range.start + 1 : info.size;
    // Reads of up to 1 MiB: each read is a thread-pool round trip, and a large
    // download made of 64 KiB reads (Node's default) spends twice the CPU
    // (docs/performance.md). Small files get a buffer of their own size (at
    // least 16 KiB), not a megabyte.
    const chunkBytes = Math.max(MIN_READ_BYTES, Math.min(MAX_READ_BYTES, length));
    // Reads into two reused buffers when piped into a response (file-read-stream.ts).
    return new FileReadStream(handle, range?.start ?? 0, range?.end ?? info.size - 1, chunkBytes);
  }

  async read(key: string): Promise<Buffer> {
    return readFile(resolveUnder(this.root, key)).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' || error.code === 'EISDIR' ? new BlobNotFoundError(key) : error;
    });
  }

  async head(key: string): Promise<{ size: number; modifiedAt: Date } | null> {
    try {
      const info = await stat(resolveUnder(this.root, key));
      return info.isFile() ? { size: info.size, modifiedAt: info.mtime } : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(keys: string[]): Promise<void> {
    await Promise.all(
      keys.map((key) =>
        unlink(resolveUnder(this.root, key)).catch((error: NodeJS.ErrnoException) => {
          // EISDIR: the key is only a prefix of other keys, so there is no such blob.
          if (error.code !== 'ENOENT' && error.code !== 'EISDIR') throw error;
        }),
      ),
    );
  }

  async *list(prefix: string): AsyncIterable<{ key: string; modifiedAt: Date }> {
    yield* this.walk(this.root, '', prefix);
  }

  async check(): Promise<void> {
    await stat(this.tmpDir);
  }

  private async *walk(dir: string, relative: string, prefix: string): AsyncGenerator<{ key: string; modifiedAt: Date }> {
    let entries;
    try {
      entries = await opendir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for await (const entry of entries) {
      if (relative === '' && entry.name === TMP_DIR) continue;
      const key = relative ? `${relative}/${entry.name}` : entry.name;
      // Skip whole subtrees that cannot contain the prefix.
      if (!key.startsWith(prefix) && !prefix.startsWith(`${key}/`)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        yield* this.walk(full, key, prefix);
      } else if (entry.isFile() && key.startsWith(prefix)) {
        // (The check above lets through a file whose key leads the prefix, `a` for `a/`.)
        const info = await stat(full).catch(() => null);
        if (info) yield { key, modifiedAt: info.mtime };
      }
    }
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.knownDirs.has(dir)) return;
    // mkdir returns the topmost directory it had to create (undefined if none):
    // flush the new entry of each created level in its parent.
    const firstCreated = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
    if (firstCreated !== undefined) {
      for (let current = dir; ; current = path.dirname(current)) {
        await syncDir(path.dirname(current));
        if (current === firstCreated || path.dirname(current) === current) break;
      }
    }
    this.knownDirs.add(dir);
  }
}

const MIN_READ_BYTES = 16 * 1024;
const MAX_READ_BYTES = 1024 * 1024;

/** One group of directory fsyncs per directory (see group-sync.ts). */
class DirSyncCoalescer {
  private readonly groups = new Map<string, GroupSync>();

  sync(dir: string): Promise<void> {
    let group = this.groups.get(dir);
    if (!group) {
      group = new GroupSync(() => syncDir(dir));
      this.groups.set(dir, group);
    }
    return group.sync();
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** fsync a directory so a rename or new entry in it survives a power loss. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
