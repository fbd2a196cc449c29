/**
 * A short-lived in-process cache of lookups on the hottest paths (API key ->
 * owner, bucket + filename -> object row), kept honest by epochs that
 * caches.ts moves.
 *
 * The rule: a read that started before an invalidation must not store its
 * (possibly old) result, and nothing learnt before an invalidation may be
 * served after it. Every invalidation moves the epoch; a read notes the epoch
 * before it queries and stores only if nothing changed meanwhile; an entry is
 * served only under the epoch it was learnt in.
 */
import { LRUCache } from 'lru-cache';

export class MetadataCache<V extends object> {
  private readonly entries: LRUCache<string, { value: V; epoch: number }>;
  private epoch = 0;
  /** Epochs this process makes up (local changes, an unreadable shared counter): negative, never reused. */
  private unknown = 0;

  constructor(options: { max: number; ttlMs: number }) {
    this.entries = new LRUCache<string, { value: V; epoch: number }>({ max: options.max, ttl: options.ttlMs });
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    return entry && entry.epoch === this.epoch ? entry.value : undefined;
  }

  /** Call before the query whose result may be stored. */
  mark(): number {
    return this.epoch;
  }

  set(key: string, value: V, mark: number): void {
    if (mark === this.epoch) this.entries.set(key, { value, epoch: mark });
  }

  /**
   * The shared counter's value, just read. A counter that went down was reset
   * (Redis restarted or flushed): old entries could carry the same numbers
   * again, so they all go.
   */
  adopt(shared: number): void {
    if (shared === this.epoch) return;
    if (shared < this.epoch) this.entries.clear();
    this.epoch = shared;
  }

  /** Trust nothing learnt before now: a fresh epoch, never used before. O(1): old entries age out of the LRU. */
  distrust(): void {
    this.epoch = --this.unknown;
  }
}
