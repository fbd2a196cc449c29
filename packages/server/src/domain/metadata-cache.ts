/**
 * A short-lived in-process cache of lookups on the hottest paths (API key ->
 * user, bucket+filename -> object row). Used only on the embedded SQLite
 * backend, where this one process makes every change to objects and buckets,
 * so it can invalidate on each change. On PostgreSQL several instances write,
 * so nothing is cached there.
 *
 * Correctness rule: a read that started before an invalidation must not store
 * its (possibly old) result. Every invalidation bumps `epoch`; a read notes the
 * epoch before it queries and stores only if nothing changed meanwhile. The TTL
 * bounds staleness from writers outside this process (the `pail` CLI changing
 * a plan or revoking a key).
 */
import { LRUCache } from 'lru-cache';

export class MetadataCache<V extends object> {
  private readonly entries: LRUCache<string, { value: V; epoch: number }>;
  private epoch = 0;

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
   * Something changed: forget everything learnt before now. O(1): older
   * entries stop matching the epoch and age out of the LRU.
   */
  invalidate(): void {
    this.epoch++;
  }
}
