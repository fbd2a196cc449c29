/**
 * Which backends a test server uses, from PAIL_TEST_BACKEND:
 * - unset or `embedded`: SQLite and files in DATA_DIR (nothing to set up).
 * - `scaled`: PostgreSQL + Redis + S3, as several instances would share them.
 *   Every call gets its own PostgreSQL schema (`search_path` in the connection
 *   string), its own Redis key prefix and its own bucket on an s3rver that this
 *   test process starts (as a child process) on first use and keeps for every
 *   test file it runs, so test files running in parallel never see each
 *   other's rows, counters or blobs. cleanup() drops all three.
 *   PostgreSQL and Redis must answer (PAIL_TEST_DATABASE_URL,
 *   PAIL_TEST_REDIS_URL; see scale-out/reachable.ts): a scaled run was asked
 *   for, so their absence is an error, never a silent fallback.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { probeScaledBackends, testDatabaseUrl, testRedisUrl } from '../scale-out/reachable.js';
import type { Client as PgClient } from 'pg';

export interface BackendEnv {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export type BackendKind = 'embedded' | 'scaled';

export function backendKind(env: Record<string, string | undefined> = process.env): BackendKind {
  const raw = env.PAIL_TEST_BACKEND ?? '';
  if (raw === '' || raw === 'embedded') return 'embedded';
  if (raw === 'scaled') return 'scaled';
  throw new Error(`PAIL_TEST_BACKEND must be "embedded" or "scaled", got ${JSON.stringify(raw)}`);
}

export async function backendEnv(): Promise<BackendEnv> {
  return backendKind() === 'scaled' ? scaledBackendEnv() : { env: {}, async cleanup() {} };
}

// ---------------------------------------------------------------------------
// Scaled: one PostgreSQL schema, one Redis prefix and one S3 bucket per call.

const SCHEMA_PREFIX = 'pail_t_';
/** Schemas left by a crashed test run are dropped once they are this old. */
const STALE_SCHEMA_SECONDS = 3 * 3600;

let checked: Promise<void> | undefined;

/** Once per process: both servers answer (else a clear error), and old leftovers go. */
function checkReachable(): Promise<void> {
  checked ??= (async () => {
    const problems = await probeScaledBackends();
    if (problems.length > 0) {
      throw new Error(`PAIL_TEST_BACKEND=scaled, but: ${problems.join('; ')}. Start them or unset PAIL_TEST_BACKEND.`);
    }
    await dropStaleSchemas().catch(() => {});
  })();
  return checked;
}

export async function scaledBackendEnv(): Promise<BackendEnv> {
  await checkReachable();
  const id = `${Math.floor(Date.now() / 1000)}_${randomBytes(5).toString('hex')}`;
  const schema = await createSchema(`${SCHEMA_PREFIX}${id}`);
  const redisPrefix = `pail-test:${id}:`;
  let s3: RunningS3rver;
  let bucket: string;
  try {
    s3 = await acquireS3rver();
    bucket = `pail-t-${id.replace(/_/g, '-')}`;
    // Made here, as an operator would beforehand, so instances that start
    // together do not race to create it (see docs/deploy.md).
    await createBucket(s3.endpoint, bucket);
  } catch (error) {
    await dropSchema(schema).catch(() => {});
    throw error;
  }
  let cleaned = false;
  return {
    env: {
      DATABASE_URL: schemaUrl(schema),
      REDIS_URL: testRedisUrl(),
      REDIS_KEY_PREFIX: redisPrefix,
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    async cleanup() {
      if (cleaned) return;
      cleaned = true;
      const results = await Promise.allSettled([dropSchema(schema), deleteRedisKeys(redisPrefix), emptyAndDeleteBucket(s3.endpoint, bucket)]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

// --- PostgreSQL -------------------------------------------------------------

/** The test database URL with `search_path` set to one schema, for every connection of the pool. */
export function schemaUrl(schema: string): string {
  const url = new URL(testDatabaseUrl());
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function withAdmin<T>(work: (client: PgClient) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: testDatabaseUrl(), connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Creates an empty schema (names are generated here, never from input). */
export async function createSchema(name: string): Promise<string> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe schema name ${name}`);
  await withAdmin((client) => client.query(`create schema "${name}"`));
  return name;
}

export async function dropSchema(name: string): Promise<void> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe schema name ${name}`);
  await withAdmin((client) => client.query(`drop schema if exists "${name}" cascade`));
}

async function dropStaleSchemas(): Promise<void> {
  const cutoff = Math.floor(Date.now() / 1000) - STALE_SCHEMA_SECONDS;
  const stale = await withAdmin(async (client) => {
    const { rows } = await client.query<{ nspname: string }>(`select nspname from pg_namespace where nspname like 'pail\\_t\\_%'`);
    return rows
      .map((row) => row.nspname)
      .filter((name) => {
        const created = Number(/^pail_t_(\d+)_/.exec(name)?.[1]);
        return Number.isFinite(created) && created < cutoff;
      });
  });
  for (const name of stale) await dropSchema(name).catch(() => {});
}

// --- Redis -------------------------------------------------------------------

async function deleteRedisKeys(prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 3000, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

// --- S3 (s3rver, in a child process: see scale-out/s3rver-child.mjs) ---------

interface RunningS3rver {
  child: ChildProcess;
  endpoint: string;
}

const S3RVER_CHILD = fileURLToPath(new URL('../scale-out/s3rver-child.mjs', import.meta.url));

let s3rver: Promise<RunningS3rver> | undefined;

function startS3rver(): Promise<RunningS3rver> {
  return (async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'pail-s3rver-'));
    // stdin stays open as a lifeline: when this process ends, the child sees EOF, removes its directory and exits.
    const child = spawn(process.execPath, [S3RVER_CHILD, directory], { stdio: ['pipe', 'pipe', 'pipe'] });
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
      if (errors.length > 20_000) errors = errors.slice(-10_000);
    });
    child.unref();
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`s3rver did not start within 20 s: ${errors}`)), 20_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited with ${code} before listening: ${errors}`));
      });
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n')[0];
        if (out.includes('\n') && line) {
          clearTimeout(timer);
          try {
            resolve((JSON.parse(line) as { port: number }).port);
          } catch {
            reject(new Error(`s3rver said ${line}`));
          }
        }
      });
    });
    // Let this process exit without waiting for the child (it follows on stdin EOF).
    for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
    child.once('exit', () => {
      s3rver = undefined;
    });
    return { child, endpoint: `http://127.0.0.1:${port}` };
  })();
}

/**
 * One s3rver per test process, started on first use and kept until the
 * process ends (a worker runs many test files: starting one for each would
 * cost a second apiece); each user has a bucket of its own on it.
 */
async function acquireS3rver(): Promise<RunningS3rver> {
  s3rver ??= startS3rver();
  try {
    return await s3rver;
  } catch (error) {
    s3rver = undefined;
    throw error;
  }
}

async function s3rverStore(endpoint: string, bucket: string) {
  const { S3BlobStore } = await import('../../src/blob/s3-store.js');
  return new S3BlobStore({ endpoint, bucket, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true });
}

async function createBucket(endpoint: string, bucket: string): Promise<void> {
  const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
  const store = await s3rverStore(endpoint, bucket);
  try {
    await store.client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    await store.close();
  }
}

async function emptyAndDeleteBucket(endpoint: string, bucket: string): Promise<void> {
  const { DeleteBucketCommand } = await import('@aws-sdk/client-s3');
  const store = await s3rverStore(endpoint, bucket);
  try {
    const keys: string[] = [];
    for await (const { key } of store.list('')) keys.push(key);
    if (keys.length > 0) await store.delete(keys);
    await store.client.send(new DeleteBucketCommand({ Bucket: bucket }));
  } catch (error) {
    // A server that never started never made its bucket: nothing to remove.
    if ((error as { name?: string }).name !== 'NoSuchBucket') throw error;
  } finally {
    await store.close();
  }
}
