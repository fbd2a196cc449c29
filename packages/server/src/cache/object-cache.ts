/**
 * A bounded in-memory cache of small, hot objects' bytes, keyed by blob key.
 * Blob keys are never reused (every upload writes a new random key), so an
 * entry can never hold bytes of a replaced or deleted file: a replaced file's
 * new version simply has another key. Access control happens before the cache.
 */
import { LRUCache } from 'lru-cache';

export class ObjectCache {
  private readonly cache: LRUCache<string, Buffer> | null;

  constructor(
    readonly maxObjectBytes: number,
    maxTotalBytes: number,
  ) {
    this.cache =
      maxTotalBytes > 0 && maxObjectBytes > 0
        ? new LRUCache<string, Buffer>({ maxSize: maxTotalBytes, sizeCalculation: (value) => Math.max(1, value.length) })
        : null;
  }

  fits(size: number): boolean {
    return this.cache !== null && size <= this.maxObjectBytes;
  }

  get(key: string): Buffer | undefined {
    return this.cache?.get(key);
  }

  set(key: string, bytes: Buffer): void {
    if (this.fits(bytes.length)) this.cache?.set(key, bytes);
  }

  forget(key: string): void {
    this.cache?.delete(key);
  }
}
