/**
 * Small files kept inline in the metadata database (as MinIO keeps small
 * objects inside their metadata file). A small upload's bytes are written in
 * the same transaction as its row, so it costs one database commit instead of
 * a blob-store round trip (temporary file, fsync, rename, directory fsync, or
 * an S3 request) followed by the commit. The same transaction removes a
 * replaced or deleted version's bytes, so an inline blob can never be orphaned
 * and garbage collection never has to look for one.
 *
 * Which files: those whose body ends within INLINE_MAX_BYTES (default 64 KiB).
 * An upload is read up to that point; a longer body carries on to the blob
 * store with the bytes already read put back in front.
 */
import type { Readable } from 'node:stream';
import { Readable as ReadableStream } from 'node:stream';
import type { Transaction } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { BlobNotFoundError } from './blob-store.js';

export type SmallOrStream = { small: Buffer } | { stream: Readable };

/**
 * Reads `body` until it ends or passes `limit` bytes. A body that ended within
 * the limit comes back whole; a longer one as a stream that yields every byte,
 * the ones read here first. Holds at most `limit` bytes plus one chunk.
 */
export function takeSmallBody(body: Readable, limit: number): Promise<SmallOrStream> {
  if (limit <= 0) return Promise.resolve({ stream: body });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: SmallOrStream | Error) => {
      body.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const onData = (item: Buffer | string) => {
      // A source with setEncoding() yields strings: count bytes, not characters.
      const chunk = typeof item === 'string' ? Buffer.from(item) : item;
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) {
        body.pause();
        finish({ stream: prepend(chunks, body) });
      }
    };
    const onEnd = () => finish({ small: Buffer.concat(chunks, size) });
    const onError = (error: Error) => finish(error);
    // Closed without 'end' (the client went away): the same error a stream reader would see.
    const onClose = () => finish(aborted());
    if (body.destroyed) return finish(body.errored ?? aborted());
    body.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
  });
}

const aborted = () => Object.assign(new Error('aborted'), { code: 'ECONNRESET' });

function prepend(head: Buffer[], rest: Readable): Readable {
  async function* all() {
    yield* head;
    yield* rest as AsyncIterable<Buffer>;
  }
  return ReadableStream.from(all(), { objectMode: false });
}

type Writer = Db | Transaction<Database>;

export async function deleteInlineBlobs(trx: Writer, storageKeys: string[]): Promise<void> {
  if (storageKeys.length === 0) return;
  await trx.deleteFrom('inline_blobs').where('storage_key', 'in', storageKeys).execute();
}

export async function readInlineBlob(db: Db, storageKey: string): Promise<Buffer> {
  const row = await db.selectFrom('inline_blobs').select('bytes').where('storage_key', '=', storageKey).executeTakeFirst();
  if (!row) throw new BlobNotFoundError(storageKey);
  // PostgreSQL's bytea and SQLite's blob both arrive as Buffers.
  return row.bytes;
}
