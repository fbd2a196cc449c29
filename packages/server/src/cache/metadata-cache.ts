/**
 * A short-lived in-process cache of lookups on the hottest paths (API key ->
 * user, bucket+filename -> object row).
 *
 * Correctness rule: a read that started before an invalidation must not store
 * its (possibly old) result, and nothing learnt before an invalidation may be
 * served after it. Every invalidation moves `epoch`; a read notes the epoch
 * before it queries and stores only if nothing changed meanwhile; an entry is
 * served only under the epoch it was learnt in.
 *
 * Where the epoch comes from:
 * - Embedded SQLite: this process makes its own changes, so it moves a local
 *   epoch on each; another process's changes (the `pail` CLI revoking a key
 *   or changing a plan) move the cache_epochs row; the server checks it at
 *   the start of a request (app.ts; read only after the CLI touched a watched
 *   sentinel, db/cache-epoch-watch.ts) and then empties the caches. The TTL
 *   bounds what the CLI changes on PostgreSQL + Redis.
 * - PostgreSQL + Redis: several instances write, so the epoch is a counter in
 *   Redis (shared-epochs.ts), read at the start of every request (adopt) and
 *   moved by every change (invalidate).
 * - PostgreSQL without Redis: no cache at all (app.ts).
 */
import { LRUCache } from 'lru-cache';
import type { EpochKind, SharedEpochs } from './shared-epochs.js';

export class MetadataCache<V extends object> {
  private readonly entries: LRUCache<string, { value: V; epoch: number }>;
  private epoch = 0;
  /** Epochs this process makes up (local changes, unreadable shared counter): negative, never reused. */
  private unknown = 0;

  constructor(
    options: { max: number; ttlMs: number },
    private readonly shared: { epochs: SharedEpochs; kind: EpochKind; onError: (error: unknown) => void } | null = null,
  ) {
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
   * Shared mode: the counter value this request read. A counter that went
   * down was reset (Redis restarted or flushed): old entries could carry the
   * same numbers again, so they all go.
   */
  adopt(shared: number): void {
    if (shared === this.epoch) return;
    if (shared < this.epoch) this.entries.clear();
    this.epoch = shared;
  }

  /**
   * Trust nothing learnt before now: a fresh epoch, never used before. In
   * shared mode, when the counter cannot be read; locally, on every change.
   */
  distrust(): void {
    this.epoch = --this.unknown;
  }

  /**
   * Something changed: forget everything learnt before now, here and (shared
   * mode) on every instance, before the change is answered. O(1): older
   * entries stop matching the epoch and age out of the LRU.
   */
  async invalidate(): Promise<void> {
    if (!this.shared) {
      this.distrust();
      return;
    }
    // Nothing learnt before the change may be served here meanwhile.
    this.distrust();
    try {
      this.adopt(await this.shared.epochs.bump(this.shared.kind));
    } catch (error) {
      this.shared.onError(error);
    }
  }
}
