/**
 * Frees the memory of a request chunk the moment its bytes have been copied,
 * instead of at V8's next garbage collection.
 *
 * Node's HTTP parser hands each piece of a request body over in a fresh buffer
 * (up to 64 KiB) outside the JavaScript heap, which V8 counts against the
 * heap's limits until a collection finds it dead; in a long-running server a
 * large upload then triggers repeated full mark-compacts, and the dead buffers
 * are its memory peak. Node 20 has no ArrayBuffer.prototype.transfer, so the
 * buffer is transferred through a MessagePort whose other end is closed: that
 * detaches it (the memory is freed with the dropped message) and leaves the
 * chunk zero-length. See docs/performance.md.
 */
import { MessageChannel } from 'node:worker_threads';

const { port1: drain, port2 } = new MessageChannel();
port2.close();
drain.unref();

/**
 * Releases `chunk`'s memory. Only for a chunk nobody else holds, and only when
 * it is the whole of its ArrayBuffer: a slice shares its memory with others
 * (Buffer's pool, a multipart parser's input), so it is left alone.
 */
export function releaseChunk(chunk: Buffer): void {
  if (chunk.byteOffset !== 0 || chunk.byteLength !== chunk.buffer.byteLength || chunk.byteLength < MIN_RELEASE_BYTES) return;
  if (!(chunk.buffer instanceof ArrayBuffer)) return;
  try {
    drain.postMessage(null, [chunk.buffer]);
  } catch {
    // Not transferable (marked so by its owner): the collector frees it as before.
  }
}

/** Smaller buffers cost V8 little, and the transfer is not free. */
const MIN_RELEASE_BYTES = 16 * 1024;

/**
 * Buffers a stream made for its consumer alone (a file read's fresh buffer,
 * file-read-stream.ts): whoever ends up holding such a chunk last may release
 * it (http/sent-chunks.ts). Anything not marked (a cached body, a slice of a
 * shared buffer) is never released.
 */
const givenAway = new WeakSet<ArrayBufferLike>();

export function giveAway(buffer: Buffer): void {
  givenAway.add(buffer.buffer);
}

export function isGivenAway(chunk: Buffer): boolean {
  return givenAway.has(chunk.buffer);
}
