/**
 * Where the scaled test backends live, and a quick check that they answer.
 * Used by vitest.config.ts (to skip or fail the scaled project up front) and by
 * helpers/backends.ts (to fail a requested scaled run with a clear message).
 */

/** PAIL_TEST_DATABASE_URL: a PostgreSQL database the tests may create and drop schemas in. */
export function testDatabaseUrl(env: Record<string, string | undefined> = process.env): string {
  return env.PAIL_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
}

/** PAIL_TEST_REDIS_URL: a Redis the tests may write keys to (each server gets its own prefix). */
export function testRedisUrl(env: Record<string, string | undefined> = process.env): string {
  return env.PAIL_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
}

/** The URL without a password, for messages. */
export function redact(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return raw;
  }
}

const PROBE_TIMEOUT_MS = 3000;

async function probePostgres(url: string): Promise<string | null> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (error) {
    return `PostgreSQL not reachable at ${redact(url)} (${(error as Error).message || String(error)})`;
  } finally {
    await client.end().catch(() => {});
  }
}

async function probeRedis(url: string): Promise<string | null> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // The socket's error says more ("connect ECONNREFUSED …") than the rejection ("Connection is closed.").
  let socketError: Error | undefined;
  redis.on('error', (error: Error) => (socketError ??= error));
  try {
    await redis.connect();
    const pong = await redis.ping();
    return pong === 'PONG' ? null : `Redis at ${redact(url)} answered PING with ${String(pong)}`;
  } catch (error) {
    return `Redis not reachable at ${redact(url)} (${(socketError ?? (error as Error)).message || String(error)})`;
  } finally {
    redis.disconnect();
  }
}

/** Every problem found, as a sentence each; an empty list means both answer. */
export async function probeScaledBackends(env: Record<string, string | undefined> = process.env): Promise<string[]> {
  const results = await Promise.all([probePostgres(testDatabaseUrl(env)), probeRedis(testRedisUrl(env))]);
  return results.filter((problem): problem is string => problem !== null);
}
