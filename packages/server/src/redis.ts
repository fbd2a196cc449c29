/** The Redis connection, when REDIS_URL is set: shared rate budgets and cache epochs. */
import type { Redis } from 'ioredis';

/** The client is loaded only when REDIS_URL asks for it: a process without Redis never loads it. */
export async function openRedis(url: string | undefined): Promise<Redis | undefined> {
  if (!url) return undefined;
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    // A Redis that stalls after connecting would otherwise leave a rate-limit check, and so the request, waiting forever.
    commandTimeout: 2000,
    keepAlive: 10_000,
    // Commands issued in the same turn of the event loop share one round trip.
    enableAutoPipelining: true,
  });
  redis.on('error', () => {}); // ioredis reconnects by itself; requests meanwhile get 503.
  return redis;
}

/**
 * Resolves once Redis is ready, or after `ms` whatever its state: requests
 * made before then would be refused (503), since commands are never queued
 * while it is not connected. A Redis that stays away does not hold start-up.
 */
export async function redisReady(redis: Redis | undefined, ms: number): Promise<void> {
  if (!redis || redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}
