/**
 * A blob made of other blobs' files, for FsBlobStore.concat (a completed
 * multipart upload's parts): a directory `<key>+pieces` holding hard links to
 * the sources' files, named in order. Linking moves no bytes, and a link keeps
 * its file's bytes when the source is deleted, so the new blob is independent
 * of its sources as a copy would be. `+` never occurs in a key (safe-key.ts),
 * so such a directory cannot be mistaken for a key's path or a prefix's.
 */
import { copyFile, link, open, readdir, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { BlobNotFoundError } from './blob-store.js';

export const PIECES_SUFFIX = '+pieces';

export interface Piece {
  path: string;
  size: number;
}

/** Positional reads, as FileReadStream makes them: a file handle, or a blob's pieces read as one file. */
export interface PositionalFile {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  close(): Promise<void>;
}

/**
 * The pieces of the blob stored as `<blobPath>+pieces`, in order; null when
 * there is no such directory. A piece's name holds its size, so reading a
 * blob of many pieces costs one readdir, not a stat per piece.
 */
export async function readPieces(blobPath: string): Promise<Piece[] | null> {
  const dir = blobPath + PIECES_SUFFIX;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw error;
  }
  return names.sort().map((name) => ({ path: path.join(dir, name), size: Number(name.slice(name.indexOf('-') + 1)) }));
}

/** A piece's name: its place, fixed width so names sort in order, then its size. */
export function pieceName(index: number, size: number): string {
  return `${String(index).padStart(6, '0')}-${size}`;
}

/**
 * Gives `target` the bytes of `source` by a hard link; where the filesystem
 * has none (another device, a filesystem without links), by a copy.
 */
export async function linkPiece(source: string, target: string, key: string): Promise<void> {
  try {
    await link(source, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') notFoundAs(key)(error as NodeJS.ErrnoException);
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EMLINK') throw error;
    await copyFile(source, target).catch(notFoundAs(key));
    // A copy's bytes are new: on disk before the directory that names them is published.
    const copy = await open(target, 'r+');
    try {
      await copy.sync();
    } finally {
      await copy.close();
    }
  }
}

/** The pieces read as one file of their total size, each opened when the reads reach it. */
export class PiecedFile implements PositionalFile {
  private readonly starts: number[] = [];
  private open: { index: number; handle: FileHandle } | null = null;
  private closed = false;
  readonly size: number;

  /** `key` names the blob in a BlobNotFoundError when a piece is gone (the blob was deleted or replaced meanwhile). */
  constructor(
    private readonly pieces: Piece[],
    private readonly key: string,
  ) {
    let start = 0;
    for (const piece of pieces) {
      this.starts.push(start);
      start += piece.size;
    }
    this.size = start;
  }

  /**
   * Opens the piece holding byte `position` now, so that a blob deleted
   * since its pieces were listed is a clean BlobNotFoundError before a reply
   * is begun, and the first piece's bytes are held from then on.
   */
  async openAt(position: number): Promise<void> {
    const index = this.pieceAt(position);
    if (index !== -1) await this.handleOf(index);
  }

  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    const index = this.pieceAt(position);
    if (index === -1) return { bytesRead: 0 };
    const handle = await this.handleOf(index);
    const within = position - this.starts[index]!;
    // A read stops at the piece's end; the next one starts in the piece after it.
    return handle.read(buffer, offset, Math.min(length, this.pieces[index]!.size - within), within);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.closeOpen();
  }

  private async closeOpen(): Promise<void> {
    const current = this.open;
    this.open = null;
    await current?.handle.close();
  }

  /** The piece holding byte `position`, -1 past the end. Reads go forward, so the open piece is tried first. */
  private pieceAt(position: number): number {
    if (position >= this.size) return -1;
    const from = this.open !== null && this.starts[this.open.index]! <= position ? this.open.index : 0;
    for (let index = from; index < this.pieces.length; index++) {
      if (position < this.starts[index]! + this.pieces[index]!.size) return index;
    }
    return -1;
  }

  private async handleOf(index: number): Promise<FileHandle> {
    if (this.open?.index === index) return this.open.handle;
    await this.closeOpen();
    const handle = await open(this.pieces[index]!.path, 'r').catch(notFoundAs(this.key));
    // Closed while the piece was being opened (the reader went away): nobody else will close it.
    if (this.closed) {
      await handle.close();
      throw new Error('read after close');
    }
    this.open = { index, handle };
    return handle;
  }
}

/** A piece or source gone (ENOENT) is the blob's BlobNotFoundError; other errors pass. */
export function notFoundAs(key: string) {
  return (error: NodeJS.ErrnoException): never => {
    throw error.code === 'ENOENT' ? new BlobNotFoundError(key) : error;
  };
}

/** What `operation` resolves to, or null when its path does not exist (ENOENT); other errors pass. */
export function nullIfMissing<T>(operation: Promise<T>): Promise<T | null> {
  return operation.catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
}
