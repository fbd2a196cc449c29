/**
 * Cache invalidation across instances, through Redis (PostgreSQL + Redis
 * deployments). Each kind of cached lookup (API keys, objects) has a counter
 * in Redis (buckets: their rules). A change increments its counter after its transaction commits and
 * before it is answered; every request reads the counters before it looks in
 * a cache (one MGET), and a cache only trusts entries learnt under the counter
 * value it has just read (metadata-cache.ts). So a request that starts after
 * a change was answered, on any instance, never gets the old answer from a
 * cache. If Redis cannot be read, the caches trust nothing for that request;
 * if an increment fails, other instances may serve the old lookup until its
 * entry's time-to-live runs out (seconds), and the failure is logged.
 */
import type { Redis } from 'ioredis';
import { GroupSync } from '../group-sync.js';

export type EpochKind = 'keys' | 'objects' | 'buckets';
const KINDS: EpochKind[] = ['keys', 'objects', 'buckets'];
const READ_TIMEOUT_MS = 250;

export class SharedEpochs {
  /**
   * Increments are grouped as flushes are (group-sync.ts): a change needs an
   * increment that starts after it committed, and one increment serves every
   * change that asked while the one before it ran. A batch of uploads answered
   * together costs two INCRs instead of one each.
   */
  private readonly bumps = new Map<EpochKind, { group: GroupSync; value: number }>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(kind: EpochKind): string {
    return `${this.prefix}epoch:${kind}`;
  }

  /**
   * The current counters; a counter never incremented reads as 0. Gives up
   * after READ_TIMEOUT_MS (a stalled Redis): the caller then trusts no cache,
   * which is always safe, instead of waiting out Redis's command timeout.
   */
  async read(): Promise<Record<EpochKind, number>> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Redis did not answer the epoch read in time')), READ_TIMEOUT_MS);
    });
    try {
      const values = await Promise.race([this.redis.mget(...KINDS.map((kind) => this.key(kind))), late]);
      return { keys: Number(values[0] ?? 0), objects: Number(values[1] ?? 0), buckets: Number(values[2] ?? 0) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Increments one counter (an increment that starts after this call); resolves with its new value. */
  async bump(kind: EpochKind): Promise<number> {
    let bumps = this.bumps.get(kind);
    if (!bumps) {
      const entry = {
        value: 0,
        group: new GroupSync(async () => {
          entry.value = await this.redis.incr(this.key(kind));
        }),
      };
      this.bumps.set(kind, (bumps = entry));
    }
    await bumps.group.sync();
    return bumps.value;
  }
}
