/**
 * Telling a small upload from a large one without buffering a large one:
 * small files are kept inline in the metadata database (written in the same
 * transaction as their row, as MinIO keeps small objects in their metadata
 * file), so an upload is read up to the inline limit first; a longer body
 * carries on to the blob store with the bytes already read put back in front.
 */
import type { Readable } from 'node:stream';
import { Readable as ReadableStream } from 'node:stream';
import { clientGone } from './joined-streams.js';

/** A stream's `head()` is the bytes read before it was handed back (at least the limit's worth). */
export type SmallOrStream = { small: Buffer } | { stream: Readable; head: () => Buffer };

/**
 * Reads `body` until it ends or passes `limit` bytes. A body that ended within
 * the limit comes back whole; a longer one as a stream that yields every byte,
 * the ones read here first. Holds at most `limit` bytes plus one chunk.
 */
export function takeSmallBody(body: Readable, limit: number): Promise<SmallOrStream> {
  if (limit <= 0) return Promise.resolve({ stream: body, head: () => Buffer.alloc(0) });
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
        finish({ stream: prepend(chunks, body), head: () => Buffer.concat(chunks, size) });
      }
    };
    const onEnd = () => finish({ small: Buffer.concat(chunks, size) });
    const onError = (error: Error) => finish(error);
    // Closed without 'end' (the client went away): the same error a stream reader would see.
    const onClose = () => finish(clientGone());
    if (body.destroyed) return finish(body.errored ?? clientGone());
    body.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
  });
}

function prepend(head: Buffer[], rest: Readable): Readable {
  async function* all() {
    yield* head;
    yield* rest as AsyncIterable<Buffer>;
  }
  return ReadableStream.from(all(), { objectMode: false });
}

/** The body's first `bytes` bytes (all of it when shorter), and the whole body, those bytes included, still to read. */
export async function peekBody(body: Readable, bytes: number): Promise<{ head: Buffer; stream: Readable }> {
  const taken = await takeSmallBody(body, bytes);
  return 'small' in taken
    ? { head: taken.small, stream: ReadableStream.from([taken.small], { objectMode: false }) }
    : { head: taken.head(), stream: taken.stream };
}
