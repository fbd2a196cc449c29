/**
 * A response body that frees each given-away chunk (release-chunk.ts) as
 * soon as the response has handed its bytes to the kernel, instead of at
 * V8's next collection.
 *
 * Why: a zip's file bytes come from fresh 1 MiB reads that pass through
 * yazl before they reach the response, so they cannot be read into reused
 * buffers as a plain download is (file-read-stream.ts). Left to the
 * collector, V8 lets such memory outside its heap grow by about 64 MiB before
 * it collects, whatever the zip's size; freed once sent, a zip holds a few
 * chunks at a time.
 *
 * When a chunk has left: the response counts the bytes given to it that the
 * kernel has not taken yet (`writableLength`, headers and chunk framing
 * included, so the count errs on the side of "still held"); the bytes given
 * to it are those pushed here minus those still buffered here. A chunk whose
 * last byte lies before given − pending has been written. Piped anywhere but
 * into a response, nothing is freed.
 */
import { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { isGivenAway, releaseChunk } from '../blob/release-chunk.js';

export class SentChunkRelease extends Readable {
  private response: ServerResponse | null = null;
  private pushedBytes = 0;
  /** Given-away chunks pushed and not yet freed, with the offset just past each one's last byte. */
  private readonly held: { chunk: Buffer; end: number }[] = [];

  constructor(private readonly source: Readable) {
    super();
    source.on('data', (chunk: Buffer) => {
      this.pushedBytes += chunk.length;
      if (this.response !== null && isGivenAway(chunk)) this.held.push({ chunk, end: this.pushedBytes });
      if (!this.push(chunk)) source.pause();
      this.releaseSent();
    });
    source.once('end', () => this.push(null));
    source.once('error', (error) => this.destroy(error));
    source.once('close', () => {
      // Closed without an end (cancelled): this body ends with it, as cut.
      if (!source.readableEnded) this.destroy();
    });
    source.pause();
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    if (destination instanceof ServerResponse) this.response = destination;
    return super.pipe(destination, options);
  }

  override _read(): void {
    this.releaseSent();
    this.source.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.held.length = 0;
    this.source.destroy();
    callback(error);
  }

  private releaseSent(): void {
    if (this.response === null || this.held.length === 0) return;
    const written = this.pushedBytes - this.readableLength - this.response.writableLength;
    let freed = 0;
    while (freed < this.held.length && this.held[freed]!.end <= written) releaseChunk(this.held[freed++]!.chunk);
    if (freed > 0) this.held.splice(0, freed);
  }
}
