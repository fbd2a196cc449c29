/**
 * A file's bytes (or a blob's pieces', fs-pieces.ts) as a stream that, when it is piped into an HTTP response,
 * reads into the same two buffers over and over instead of a fresh one per
 * read.
 *
 * Why: every fresh buffer is memory outside V8's heap, and in a server whose
 * heap holds a large working set (caches, a seeded metadata database) V8
 * answers a steady stream of it with full mark-compact collections, which cost
 * a large download more CPU than the download itself. Two buffers reused for
 * the whole download allocate nothing. See docs/performance.md.
 *
 * A buffer may be refilled only once the response no longer holds it. The
 * response counts the bytes it has been given but not yet handed to the
 * kernel (`writableLength`), in order; the stream knows the size of the chunk
 * it pushed last. When at most that chunk is still pending, the one pushed
 * before it has left the process and its buffer is free. Piped into a
 * response that is always so (a chunk the kernel does not take at once makes
 * pipe() wait for 'drain' before the next), so the next read fills the other
 * buffer while the last chunk is on its way; should more ever be pending, the
 * read gets a fresh buffer, as any stream would. Any other destination (a
 * transform, an async iterator) might keep a chunk after taking it, so it
 * always gets fresh buffers, marked as given away (release-chunk.ts): a zip,
 * whose file bytes pass through yazl first, frees them once sent.
 */
import { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { PositionalFile } from './fs-pieces.js';
import { giveAway } from './release-chunk.js';

export class FileReadStream extends Readable {
  private position: number;
  /** The two reusable buffers; `pooled[last]` holds the chunk pushed last. */
  private readonly pooled: (Buffer | null)[] = [null, null];
  private last = 1;
  private lastLength = 0;
  private response: ServerResponse | null = null;

  /** Reads bytes `start` to `end` inclusive, `chunkBytes` at a time. */
  constructor(
    private readonly handle: PositionalFile,
    start: number,
    private readonly end: number,
    private readonly chunkBytes: number,
  ) {
    super({ highWaterMark: chunkBytes });
    this.position = start;
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    if (destination instanceof ServerResponse) this.response = destination;
    return super.pipe(destination, options);
  }

  override _read(): void {
    const length = Math.min(this.chunkBytes, this.end + 1 - this.position);
    if (length <= 0) {
      this.push(null);
      return;
    }
    const buffer = this.nextBuffer();
    this.handle.read(buffer, 0, length, this.position).then(
      ({ bytesRead }) => {
        // Blobs never change once written: a short file is damage, not an end.
        if (bytesRead === 0) return this.destroy(new Error('blob file is shorter than its recorded size'));
        this.position += bytesRead;
        this.lastLength = bytesRead;
        this.push(buffer.subarray(0, bytesRead));
      },
      (error: unknown) => this.destroy(error as Error),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.handle.close().then(
      () => callback(error),
      (closeError: unknown) => callback(error ?? (closeError as Error)),
    );
  }

  /** The buffer not pushed last, if the response is done with it; otherwise a fresh one. */
  private nextBuffer(): Buffer {
    const next = 1 - this.last;
    const candidate = this.pooled[next] ?? null;
    // writableLength: bytes the response has been given but the kernel has not taken yet (headers included).
    const reusable = this.response !== null && this.response.writableLength <= this.lastLength - this.readableLength;
    const buffer = reusable && candidate !== null ? candidate : Buffer.allocUnsafeSlow(this.chunkBytes);
    // Only a response destination ever gets a buffer back; others keep theirs, and the last holder may free it.
    if (this.response !== null) this.pooled[next] = buffer;
    else giveAway(buffer);
    this.last = next;
    return buffer;
  }
}
