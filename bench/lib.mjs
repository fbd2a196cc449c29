/**
 * Shared pieces of the benchmark: starting servers pinned to the server core,
 * talking to Pail's API to set up users, keys, buckets and files, running the
 * load generator and the stream client on the load core, sampling RSS.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_DIR = path.dirname(BENCH_DIR);
export const PAIL_MAIN = path.join(REPO_DIR, 'packages/server/dist/main.js');

/** Cores: the server gets SERVER_CORE, the load generator (and this script's children) LOAD_CORE. */
export const SERVER_CORE = process.env.BENCH_SERVER_CORE ?? '0';
export const LOAD_CORE = process.env.BENCH_LOAD_CORE ?? '1';

let tasksetChecked;
export function hasTaskset() {
  if (tasksetChecked === undefined) {
    try {
      execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
      tasksetChecked = true;
    } catch {
      tasksetChecked = false;
    }
  }
  return tasksetChecked;
}

/** [command, args] running `node script args` on `core` (without taskset when it is missing). */
export function pinnedNode(core, script, args = [], nodeArgs = []) {
  const node = process.execPath;
  return hasTaskset() ? ['taskset', ['-c', String(core), node, ...nodeArgs, script, ...args]] : [node, [...nodeArgs, script, ...args]];
}

/**
 * Runs `main` with this script on the load core: when taskset exists and the
 * script is not pinned yet, starts itself again under `taskset -c LOAD_CORE`
 * (so every load child it starts is there too) and exits with its code.
 */
export async function runOnLoadCore(main) {
  if (hasTaskset() && process.env.PAIL_BENCH_PINNED !== '1') {
    const child = spawn('taskset', ['-c', LOAD_CORE, process.execPath, ...process.execArgv, process.argv[1], ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, PAIL_BENCH_PINNED: '1' },
    });
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
    child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  } else {
    await main();
  }
}

/** The machine a run is on (for the results' header); warns when it cannot give clean figures. */
export function machineInfo() {
  if (os.cpus().length < 2) console.warn('warning: fewer than 2 cores: server and load generator share a core');
  if (!hasTaskset()) console.warn('warning: taskset not found (util-linux): server and load are NOT pinned to separate cores');
  const loadavgStart = os.loadavg();
  if (loadavgStart[0] > 1.5) console.warn(`warning: load average is ${loadavgStart[0].toFixed(2)}: other work on this machine will skew the figures`);
  return {
    node: process.version,
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model ?? '?',
    serverCore: SERVER_CORE,
    loadCore: LOAD_CORE,
    taskset: hasTaskset(),
    loadavgStart,
    loadavgEnd: null,
  };
}

/** { commit, dirty } of a checkout (dirty: uncommitted changes to the server or shared package), null if not a git checkout. */
export function gitInfo(dir = REPO_DIR) {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--', 'packages/server', 'packages/shared'], {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() !== '';
    return { commit, dirty };
  } catch {
    return null;
  }
}

/** A script's flags and options: `flag('--quick')`, `option('--reps')`. */
export function commandLine(argv = process.argv.slice(2)) {
  const flag = (name) => argv.includes(name);
  const option = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  return { argv, flag, option };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export function tempDir(label) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `pail-bench-${label}-`));
}

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

// ---------------------------------------------------------------------------
// Pail's API

export async function api(base, method, url, { key, token, json, expect } = {}) {
  const headers = {};
  if (key) headers['x-api-key'] = key;
  if (token) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + url, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  const ok = expect ? expect.includes(res.status) : res.ok;
  if (!ok) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/**
 * Signs a user up and makes an API key. Returns { email, token, key,
 * accessKeyId, secretAccessKey } (the last two: the key's S3 credential).
 */
export async function makeUser(base, email) {
  const signup = await api(base, 'POST', '/api/auth/signup', { json: { email, password: 'bench password 1234' }, expect: [201] });
  const token = signup.data.token;
  const created = await api(base, 'POST', '/api/keys', { token, json: { name: 'bench' }, expect: [201] });
  return { email, token, key: created.data.key, accessKeyId: created.data.access_key_id, secretAccessKey: created.data.secret_access_key };
}

export async function makeBucket(base, key, name, visibility) {
  const created = await api(base, 'POST', '/api/v1/buckets', { key, json: { name, visibility }, expect: [201] });
  return created.data.id;
}

export async function putFile(base, key, bucketId, filename, bytes) {
  const res = await fetch(`${base}/api/v1/buckets/${bucketId}/files/${encodeURIComponent(filename)}`, {
    method: 'PUT',
    headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  const text = await res.text();
  if (res.status !== 201 && res.status !== 200) throw new Error(`PUT ${filename}: ${res.status} ${text.slice(0, 300)}`);
}

/** Walks a bucket's listing with limit=1000; returns { count, cursors } (cursors[i] starts page i+1). */
export async function walkListing(base, key, bucketId) {
  const cursors = [];
  let count = 0;
  let cursor = '';
  for (;;) {
    const page = await api(base, 'GET', `/api/v1/buckets/${bucketId}/files?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key });
    count += page.data.length;
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
    cursors.push(cursor);
  }
  return { count, cursors };
}

// ---------------------------------------------------------------------------
// Load generator and stream client, on the load core

function runChildJson(script, spec, timeoutMs, nodeArgs = []) {
  return new Promise((resolve, reject) => {
    const [command, args] = pinnedNode(LOAD_CORE, path.join(BENCH_DIR, script), [JSON.stringify(spec)], nodeArgs);
    const child = spawn(command, args, { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) return reject(new Error(`${script} failed (exit ${code}): ${err.slice(-1000)}`));
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`${script} printed no JSON: ${out.slice(-500)} ${err.slice(-500)}`));
      }
    });
  });
}

/** One autocannon run (see load.mjs for the spec). */
export function runLoad(spec) {
  return runChildJson('load.mjs', spec, ((spec.duration ?? 600) + 60) * 1000);
}

/** One W5/W6 transfer (see stream-client.mjs for the spec). */
export function runStream(spec) {
  return runChildJson('stream-client.mjs', spec, 15 * 60 * 1000);
}

/** One S3 upload through the AWS SDK, or its check (see s3-client.mjs for the spec). */
export function runS3Client(spec, nodeArgs = []) {
  return runChildJson('s3-client.mjs', spec, 15 * 60 * 1000, nodeArgs);
}

// ---------------------------------------------------------------------------
// Memory

export function readRssKiB(pid, field = 'VmRSS') {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** Resets the process's VmHWM to its current RSS (Linux; returns false if not allowed). */
export function resetPeakRss(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Samples VmRSS every `everyMs`; stop() returns { peakKiB, samples }. */
export function sampleRss(pid, everyMs = 50) {
  let peak = readRssKiB(pid) ?? 0;
  let samples = 1;
  const timer = setInterval(() => {
    const rss = readRssKiB(pid);
    if (rss !== null) {
      samples += 1;
      if (rss > peak) peak = rss;
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const rss = readRssKiB(pid);
      if (rss !== null && rss > peak) peak = rss;
      return { peakKiB: peak, samples };
    },
  };
}

/** CPU seconds (user + system, all threads) a process has used so far; null if unreadable. */
export function cpuSeconds(pid) {
  const split = cpuSplit(pid);
  return split && split.user + split.system;
}

/** The same, as { user, system } seconds, with the minor page faults so far; null if unreadable. */
export function cpuSplit(pid) {
  try {
    const { fields } = readStat(`/proc/${pid}/stat`);
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100, minorFaults: Number(fields[7]) };
  } catch {
    return null;
  }
}

/**
 * A /proc stat line: the command name, and the fields after it (the name may
 * hold spaces and parentheses): fields[7] is minflt, [11] utime, [12] stime.
 */
function readStat(file) {
  const stat = fs.readFileSync(file, 'utf8');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
}

/** CPU seconds so far of each thread of a process, by thread id: { name, seconds }. */
export function threadCpu(pid) {
  const threads = new Map();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const { name, fields } = readStat(`/proc/${pid}/task/${tid}/stat`);
        threads.set(tid, { name: tid === String(pid) ? 'main' : name, seconds: (Number(fields[11]) + Number(fields[12])) / 100 });
      } catch {
        // the thread ended
      }
    }
  } catch {
    // the process ended
  }
  return threads;
}

/** Which threads used the CPU between two threadCpu() readings, busiest first: "name s, …". */
export function threadCpuDelta(before, after, top = 4) {
  const used = [];
  for (const [tid, { name, seconds }] of after) {
    const delta = seconds - (before.get(tid)?.seconds ?? 0);
    if (delta > 0) used.push({ name, delta });
  }
  return used
    .sort((a, b) => b.delta - a.delta)
    .slice(0, top)
    .map((t) => `${t.name} ${t.delta.toFixed(2)}`)
    .join(', ');
}

/**
 * CPU time so far, in ticks, from /proc/stat: of the whole machine, or of one
 * core (`core`); all of it, and the parts left idle, spent waiting on the disk
 * (iowait) or taken by the hypervisor (steal).
 */
export function machineTicks(core = null) {
  try {
    const lines = fs.readFileSync('/proc/stat', 'utf8').split('\n');
    const line = core === null ? lines[0] : lines.find((l) => l.startsWith(`cpu${core} `));
    const [, ...values] = line.trim().split(/\s+/);
    const n = values.map(Number);
    return { all: n.reduce((a, b) => a + b, 0), idle: n[3], iowait: n[4], steal: n[7] ?? 0 };
  } catch {
    return null;
  }
}

/** Shares of the CPU time between two machineTicks() readings. */
export function tickShares(before, after) {
  if (!before || !after || after.all === before.all) return null;
  const all = after.all - before.all;
  const share = (field) => (after[field] - before[field]) / all;
  return { idle: share('idle'), iowait: share('iowait'), steal: share('steal') };
}

/** The share of a file's bytes in the page cache (util-linux fincore), null if unknown. */
export function pageCacheShare(file) {
  if (!file) return null;
  try {
    const [resident, size] = execFileSync('fincore', ['--bytes', '--noheadings', '--raw', '--output', 'RES,SIZE', file], { encoding: 'utf8' })
      .trim()
      .split(/\s+/)
      .map(Number);
    return size > 0 ? resident / size : null;
  } catch {
    return null;
  }
}

/** The largest file under a directory (Pail's blob of a big upload), null if none. */
export function largestFile(dir) {
  let best = null;
  let bestSize = -1;
  const walk = (current) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const size = fs.statSync(full).size;
        if (size > bestSize) [best, bestSize] = [full, size];
      }
    }
  };
  try {
    walk(dir);
  } catch {
    return null;
  }
  return best;
}

/** Idle RSS: the median of a few samples over `ms`. */
export async function idleRssKiB(pid, ms = 500) {
  const values = [];
  for (let t = 0; t < ms; t += 50) {
    const rss = readRssKiB(pid);
    if (rss !== null) values.push(rss);
    await sleep(50);
  }
  return median(values);
}

// ---------------------------------------------------------------------------

export function median(values) {
  const sorted = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

/**
 * Puts `count` distinct small files named `<prefix>-<n>` into a bucket with
 * many concurrent PUTs (the load generator, on the load core). Needs raised
 * rate limits.
 */
export async function seedFiles(base, key, bucketId, { prefix, count, bytes = 16, connections = 64 }) {
  const result = await runLoad({
    url: `${base}/api/v1/buckets/${bucketId}/files`,
    method: 'PUT',
    headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' },
    bodyBytes: bytes,
    connections,
    amount: count,
    distinct: { prefix },
  });
  if (result.ok !== count)
    throw new Error(`seeding ${prefix}: ${result.ok} of ${count} PUTs succeeded (${JSON.stringify(result.codes)}, ${result.errors} errors)`);
  return result;
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
