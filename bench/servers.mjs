/**
 * Servers for a run, on the server core: Pail (or another build of it), the
 * bare Node baseline, the S3 sink, and a fresh PostgreSQL schema and Redis key
 * prefix for a Pail server to use.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { BENCH_DIR, freePort, PAIL_MAIN, pinnedNode, REPO_DIR, SERVER_CORE, sleep, tempDir } from './setup.mjs';

/** Pail's own variables are removed from the inherited environment, so a developer's shell cannot change a run. */
function cleanEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      /^(PORT|HOST|DATA_DIR|PUBLIC_URL|DATABASE_URL|REDIS_URL|REDIS_KEY_PREFIX|SESSION_SECRET|LOG_LEVEL|SIGNUP|TRUST_PROXY|MAX_FILE_BYTES|GC_GRACE_SECONDS|DASHBOARD_DIR|RATE_LIMIT_WINDOW_SECONDS|PUBLIC_RATE_LIMIT|CLIENT_RATE_LIMIT|SIGNED_URL_RATE_LIMIT|SIGNUP_RATE_LIMIT|LOGIN_RATE_LIMIT|CACHE_.*|PLAN_.*|S3_.*)$/.test(
        key,
      )
    ) {
      delete env[key];
    }
  }
  return env;
}

/** Rate limits out of the way and room for every file the run writes. */
export const RAISED_LIMITS = {
  PLAN_FREE_RATE_LIMIT: '1000000000',
  PLAN_PLUS_RATE_LIMIT: '1000000000',
  PLAN_PRO_RATE_LIMIT: '1000000000',
  PLAN_MAX_RATE_LIMIT: '1000000000',
  PUBLIC_RATE_LIMIT: '1000000000',
  CLIENT_RATE_LIMIT: '1000000000',
  SIGNED_URL_RATE_LIMIT: '1000000000',
  SIGNUP_RATE_LIMIT: '1000000000',
  PLAN_FREE_STORAGE_BYTES: String(2 ** 40),
};

async function waitHealthy(base, child, label, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${label} exited with code ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${label} did not answer /healthz within ${timeoutMs / 1000}s`);
}

/** Waits until something accepts TCP connections on 127.0.0.1:`port`. */
async function waitListening(port, child, label, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${label} exited with code ${child.exitCode} before it was ready`);
    const open = await new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`${label}: nothing listened on port ${port} within ${timeoutMs / 1000}s`);
}

/**
 * A server process on the server core. `kind` is 'pail' or 'baseline'.
 * Returns { base, pid, dataDir, stop() }. With `s3: true` (Pail only), the
 * S3-compatible API also listens, on a free port (S3_API_PORT; otherwise it
 * is off), and the result has its url as `s3Base` (null otherwise).
 */
export async function startServer(kind, { label = kind, env = {}, nodeArgs = [], main = PAIL_MAIN, s3 = false } = {}) {
  const port = await freePort();
  const s3Port = kind === 'pail' && s3 ? await freePort() : null;
  const dataDir = tempDir(label);
  // `main`: another build of Pail (a copy of packages/server/dist), for A/B probes.
  const script = kind === 'pail' ? main : path.join(BENCH_DIR, 'baseline-server.mjs');
  if (kind === 'pail' && !fs.existsSync(script)) throw new Error(`${script} is missing: run npx tsc -b packages/server`);
  const fullEnv =
    kind === 'pail'
      ? {
          ...cleanEnv(),
          PORT: String(port),
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          LOG_LEVEL: 'warn',
          S3_API_PORT: s3Port === null ? 'off' : String(s3Port),
          ...env,
        }
      : { ...cleanEnv(), PORT: String(port), BASELINE_ROOT: dataDir, ...env };
  // BENCH_PAIL_NODE_ARGS (e.g. "--trace-gc"): extra Node flags for Pail servers; their output goes to
  // server.log, kept as bench/results/<label>-server.log when the server stops.
  const extra = kind === 'pail' && process.env.BENCH_PAIL_NODE_ARGS ? process.env.BENCH_PAIL_NODE_ARGS.split(' ').filter(Boolean) : [];
  const [command, args] = pinnedNode(SERVER_CORE, script, [], [...extra, ...nodeArgs]);
  const child = spawn(command, args, { cwd: dataDir, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const logFile = path.join(dataDir, 'server.log');
  const log = fs.createWriteStream(logFile);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(base, child, label);
    if (s3Port !== null) await waitListening(s3Port, child, `${label} (S3 API)`);
  } catch (error) {
    child.kill('SIGKILL');
    await sleep(100);
    const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-2000) : '';
    throw new Error(`${error.message}\n${tail}`, { cause: error });
  }
  return {
    kind,
    label,
    base,
    s3Base: s3Port === null ? null : `http://127.0.0.1:${s3Port}`,
    pid: child.pid,
    dataDir,
    logFile,
    async stop({ keepData = false } = {}) {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await once(child, 'exit').catch(() => {});
        clearTimeout(timer);
      }
      if (extra.length > 0) {
        fs.mkdirSync(path.join(BENCH_DIR, 'results'), { recursive: true });
        fs.copyFileSync(logFile, path.join(BENCH_DIR, 'results', `${label}-server.log`));
      }
      if (!keepData) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** bench/s3-sink.mjs on the server's core: answers uploads and keeps nothing (the client's own ceiling). */
export async function startSink() {
  const [command, args] = pinnedNode(SERVER_CORE, path.join(BENCH_DIR, 's3-sink.mjs'));
  const child = spawn(command, args, { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk) => resolve(JSON.parse(String(chunk)).port));
    child.once('exit', (code) => reject(new Error(`s3-sink.mjs exited (${code})`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    pid: child.pid,
    s3Base: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------
// PostgreSQL + Redis: a fresh schema and key prefix, dropped at the end

/**
 * A fresh PostgreSQL schema and Redis key prefix for one Pail server:
 * { env, cleanup() } (cleanup drops both), or { problem } saying why not.
 */
export async function postgresAndRedis() {
  const dbUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const redisUrl = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
  let pg;
  let Redis;
  try {
    pg = (await import('pg')).default;
    Redis = (await import('ioredis')).Redis;
  } catch (error) {
    return { problem: `the pg / ioredis packages are not installed (${error.message})` };
  }
  const id = `${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  const schema = `pail_bench_${id}`;
  const client = new pg.Client({ connectionString: dbUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
  } catch (error) {
    await client.end().catch(() => {});
    return { problem: `PostgreSQL not reachable at ${dbUrl} (${error.message})` };
  }
  await client.end();
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  const prefix = `pail-bench:${id}:`;
  const dropSchema = async () => {
    const c = new pg.Client({ connectionString: dbUrl, connectionTimeoutMillis: 3000 });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  };
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    await dropSchema().catch(() => {});
    return { problem: `Redis not reachable at ${redisUrl} (${error.message})` };
  }
  const databaseUrl = `${dbUrl}${dbUrl.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`;
  return {
    env: { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix },
    async cleanup() {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      redis.disconnect();
      await dropSchema();
    },
  };
}
