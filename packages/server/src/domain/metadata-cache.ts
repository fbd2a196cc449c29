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
  private readonly entries: LRUCache<string, V>;
  private epoch = 0;

  constructor(options: { max: number; ttlMs: number }) {
    this.entries = new LRUCache<string, V>({ max: options.max, ttl: options.ttlMs, ttlAutopurge: false });
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** Call before the query whose result may be stored. */
  mark(): number {
    return this.epoch;
  }

  set(key: string, value: V, mark: number): void {
    if (mark === this.epoch) this.entries.set(key, value);
  }

  /** Something changed: forget everything learnt before now. */
  invalidate(): void {
    this.epoch++;
    this.entries.clear();
  }
}
