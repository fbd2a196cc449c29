/**
 * Frees the memory of a request chunk the moment its bytes have been copied,
 * instead of at V8's next garbage collection.
 *
 * Node's HTTP parser hands every piece of a request body over in a fresh
 * buffer of its own (up to 64 KiB), allocated outside the JavaScript heap. V8
 * counts that memory against the heap's limits until a collection finds the
 * buffer dead. In a server that has been busy for a while the limits sit close
 * to the live heap, so a large upload made V8 start a full mark-compact every
 * ~25 MB of body (44 of them in one 1 GiB upload, with `--trace-gc`), and up
 * to ~32 MiB of dead buffers waited for each. That doubled the upload's CPU
 * time and was its whole memory peak.
 *
 * Node 20 has no ArrayBuffer.prototype.transfer; transferring the buffer
 * through a MessagePort whose other end is closed detaches it (the memory is
 * freed with the dropped message, 6–7 µs per 64 KiB) and leaves the chunk
 * zero-length.
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
