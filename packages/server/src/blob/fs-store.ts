/**
 * Blobs as files under a root directory. A put writes a temporary file under
 * `<root>/.tmp`, flushes it to disk, renames it into place and flushes the
 * directory, so a crash at any point leaves either no blob or the whole blob.
 * Temporary files left by a crashed process are removed when a store opens.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, opendir, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BlobNotFoundError, BlobTooLargeError, type BlobStaging, type BlobStore, type ByteRange, type PutOptions, type PutResult } from './blob-store.js';
import { GroupSync } from '../group-sync.js';
import { createContentHasher } from './content-hash.js';
import { FileReadStream } from './file-read-stream.js';
import { FileWrites } from './file-writes.js';
import { linkPiece, notFoundAs, nullIfMissing, pieceName, PIECES_SUFFIX, PiecedFile, readPieces, type Piece, type PositionalFile } from './fs-pieces.js';
import { FsStaging } from './fs-staging.js';
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
   * The sources' files become the pieces of the new blob (fs-pieces.ts): hard
   * links in a temporary directory, flushed, then renamed into place as put()
   * renames a file. No byte is read or written; a source that is itself made
   * of pieces lends its pieces.
   */
  async concat(key: string, sources: string[]): Promise<{ size: number }> {
    const finalPath = resolveUnder(this.root, key) + PIECES_SUFFIX;
    const tmpPath = path.join(this.tmpDir, `${process.pid}-${randomUUID()}${PIECES_SUFFIX}`);
    let size = 0;
    try {
      await mkdir(tmpPath, { mode: PRIVATE_DIR });
      let index = 0;
      for (const source of sources) {
        for (const piece of await this.piecesOf(source)) {
          if (piece.size === 0) continue;
          await linkPiece(piece.path, path.join(tmpPath, pieceName(index++, piece.size)), source);
          size += piece.size;
        }
      }
      await syncDir(tmpPath);
      await this.publish(tmpPath, finalPath);
    } catch (error) {
      await rm(tmpPath, { recursive: true, force: true }).catch(() => {});
      throw error;
    }
    return { size };
  }

  /** A blob's files: its own, or its pieces. */
  private async piecesOf(key: string): Promise<Piece[]> {
    const file = resolveUnder(this.root, key);
    const info = await nullIfMissing(stat(file));
    if (info?.isFile()) return [{ path: file, size: info.size }];
    const pieces = info ? null : await readPieces(file);
    if (!pieces) throw new BlobNotFoundError(key);
    return pieces;
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
    const handle = await nullIfMissing(open(file, 'r'));
    if (handle === null) {
      const pieces = await readPieces(file);
      if (!pieces) throw new BlobNotFoundError(key);
      const pieced = new PiecedFile(pieces, key);
      await pieced.openAt(range?.start ?? 0);
      return readStream(pieced, pieced.size, range);
    }
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
    return readStream(handle, info.size, range);
  }

  async read(key: string): Promise<Buffer> {
    const file = resolveUnder(this.root, key);
    return readFile(file).catch(async (error: NodeJS.ErrnoException) => {
      const pieces = error.code === 'ENOENT' ? await readPieces(file) : null;
      if (pieces) return Buffer.concat(await Promise.all(pieces.map((piece) => readFile(piece.path).catch(notFoundAs(key)))));
      throw error.code === 'ENOENT' || error.code === 'EISDIR' ? new BlobNotFoundError(key) : error;
    });
  }

  async head(key: string): Promise<{ size: number; modifiedAt: Date } | null> {
    const file = resolveUnder(this.root, key);
    try {
      const info = await stat(file);
      return info.isFile() ? { size: info.size, modifiedAt: info.mtime } : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const dir = await nullIfMissing(stat(file + PIECES_SUFFIX));
    const pieces = dir?.isDirectory() ? await readPieces(file) : null;
    if (!dir || !pieces) return null;
    return { size: pieces.reduce((total, piece) => total + piece.size, 0), modifiedAt: dir.mtime };
  }

  async delete(keys: string[]): Promise<void> {
    await Promise.all(
      keys.map(async (key) => {
        const file = resolveUnder(this.root, key);
        try {
          await unlink(file);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // Not a file: perhaps a blob stored as pieces. (EISDIR: the key is only a prefix of other keys.)
          if (code === 'ENOENT') await this.deletePieces(file);
          else if (code !== 'EISDIR') throw error;
        }
      }),
    );
  }

  /**
   * A blob stored as pieces goes at once, as an unlinked file does: its
   * directory is first renamed into `.tmp` (a reader then finds all of it or
   * none), then removed (a crash leaves it to the next start's clean-up).
   */
  private async deletePieces(file: string): Promise<void> {
    const doomed = path.join(this.tmpDir, `${process.pid}-${randomUUID()}${PIECES_SUFFIX}`);
    try {
      await rename(file + PIECES_SUFFIX, doomed);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    await rm(doomed, { recursive: true, force: true });
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
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name.endsWith(PIECES_SUFFIX)) {
        // A blob stored as pieces: one key, whatever its pieces.
        const key = `${relative ? `${relative}/` : ''}${entry.name.slice(0, -PIECES_SUFFIX.length)}`;
        const info = key.startsWith(prefix) ? await stat(full).catch(() => null) : null;
        if (info) yield { key, modifiedAt: info.mtime };
        continue;
      }
      const key = relative ? `${relative}/${entry.name}` : entry.name;
      // Skip whole subtrees that cannot contain the prefix.
      if (!key.startsWith(prefix) && !prefix.startsWith(`${key}/`)) continue;
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

/** A stream of a file's bytes, or of one range of them. */
function readStream(file: PositionalFile, size: number, range: ByteRange | undefined): Readable {
  const length = range ? range.end - range.start + 1 : size;
  // Reads of up to 1 MiB: each read is a thread-pool round trip, and a large
  // download made of 64 KiB reads (Node's default) spends twice the CPU
  // (docs/performance.md). Small files get a buffer of their own size (at
  // least 16 KiB), not a megabyte.
  const chunkBytes = Math.max(MIN_READ_BYTES, Math.min(MAX_READ_BYTES, length));
  // Reads into two reused buffers when piped into a response (file-read-stream.ts).
  return new FileReadStream(file, range?.start ?? 0, range?.end ?? size - 1, chunkBytes);
}

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
