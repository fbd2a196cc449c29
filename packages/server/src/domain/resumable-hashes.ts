/**
 * The content hash (the Pail API's ETag) of resumable uploads, taken as their
 * bytes arrive, so a finished upload need not be read back to hash it. Best
 * effort and in memory: an upload whose requests came to another instance,
 * or from before a restart, or whose hash fell out of step with what was
 * kept, has none here, and is read back instead (uploads.ts).
 */
import { Transform } from 'node:stream';
import { LRUCache } from 'lru-cache';
import { createContentHasher, type ContentHasher } from '../blob/content-hash.js';

interface Running {
  hasher: ContentHasher;
  /** How many of the upload's bytes it has hashed. */
  offset: number;
}

export class ResumableHashes {
  private readonly running = new LRUCache<string, Running>({ max: 1000 });

  /**
   * A transform that hashes the first `maxBytes` bytes passing through it
   * into the upload's running hash, when that hash has every byte before
   * `offset` (or `offset` is 0); else none, and the upload's hash is
   * forgotten. The caller joins it to the body (stream.pipeline).
   * `hashed()`: how many bytes it hashed, for kept().
   */
  async tap(id: string, offset: number, maxBytes: number): Promise<{ tap: Transform | null; hashed: () => number }> {
    let running = this.running.get(id);
    if (offset === 0) this.running.set(id, (running = { hasher: await createContentHasher(), offset: 0 }));
    if (!running || running.offset !== offset) {
      this.running.delete(id);
      return { tap: null, hashed: () => -1 };
    }
    const hasher = running.hasher;
    let taken = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        const room = maxBytes - taken;
        if (room > 0) {
          const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
          hasher.update(part);
          taken += part.length;
        }
        done(null, chunk);
      },
    });
    // What passed is hashed now; the running offset moves only once the bytes are known kept (kept()).
    return { tap, hashed: () => taken };
  }

  /** The request's bytes from `from` to `to` were kept: the running hash stays if it hashed exactly those (`hashed` of them). */
  kept(id: string, from: number, to: number, hashed: number): void {
    const running = this.running.get(id);
    if (running && running.offset === from && hashed === to - from) running.offset = to;
    else this.running.delete(id);
  }

  /** The upload's hash if it covers all `length` bytes (the upload is then forgotten here). */
  finish(id: string, length: number): string | undefined {
    const running = this.running.get(id);
    this.running.delete(id);
    return running && running.offset === length ? running.hasher.digest() : undefined;
  }

  forget(id: string): void {
    this.running.delete(id);
  }
}
