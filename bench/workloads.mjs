/**
 * The workloads W1–W7 and their variants, as "cases": one measured thing on
 * one server. run.mjs sets the servers up (setup*), then calls every case's
 * run(rep) once per repetition, interleaved, and report.mjs takes the medians.
 *
 * Servers (all pinned to the server core; only the one under load is busy):
 *   pail      Pail, embedded defaults (SQLite, files in DATA_DIR), rate limits raised
 *   baseline  bench/baseline-server.mjs: bare node:http + fs streams
 *   big       the same Pail process, but a bucket that already holds N files (100,000)
 *   pg        Pail on PostgreSQL + Redis (blobs still in DATA_DIR), rate limits raised
 *   limits    Pail with the real per-plan limits (free plan: 100 API requests/min,
 *             600 anonymous downloads/min per IP): most answers are 429
 */
import fs from 'node:fs';
import path from 'node:path';
import { makeBucket, makeUser, putFile, seedFiles, walkListing } from './lib.mjs';

export const FILE_4K = Buffer.alloc(4096, 'pail 4 KiB file ');
export const FILE_NAME = 'f4k.bin';

/** Settings of a full run and of --quick. */
export function settings(quick) {
  return quick
    ? { reps: 1, duration: 3, latencyDuration: 3, limitsDuration: 2, warmup: 1, bigFiles: 10_000, listFiles: 10_000, streamBytes: 256 * 1024 ** 2 }
    : { reps: 3, duration: 10, latencyDuration: 10, limitsDuration: 5, warmup: 2, bigFiles: 100_000, listFiles: 10_000, streamBytes: 1024 ** 3 };
}

// ---------------------------------------------------------------------------
// Setup: users, keys, buckets and files, all over the HTTP API

/** Pail with raised limits: public + private bucket with the 4 KiB file, a 10,000-file bucket, an N-file bucket. */
export async function setupPail(server, cfg, log, { withLists = true } = {}) {
  const user = await makeUser(server.base, `bench-${server.label}@example.com`);
  const pub = await makeBucket(server.base, user.key, 'bench-public', 'public');
  const priv = await makeBucket(server.base, user.key, 'bench-private', 'private');
  await putFile(server.base, user.key, pub, FILE_NAME, FILE_4K);
  await putFile(server.base, user.key, priv, FILE_NAME, FILE_4K);
  const target = { server, key: user.key, pub, priv, w4Buckets: new Map() };
  if (!withLists) return target;

  let started = Date.now();
  target.list = await makeBucket(server.base, user.key, 'bench-list10k', 'private');
  await seedFiles(server.base, user.key, target.list, { prefix: 'l', count: cfg.listFiles });
  log(`  seeded ${cfg.listFiles} files for W7 in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  started = Date.now();
  target.big = await makeBucket(server.base, user.key, 'bench-big', 'private');
  const seeded = await seedFiles(server.base, user.key, target.big, { prefix: 's', count: cfg.bigFiles });
  await putFile(server.base, user.key, target.big, FILE_NAME, FILE_4K);
  log(`  seeded ${cfg.bigFiles} files into the big bucket in ${((Date.now() - started) / 1000).toFixed(1)} s (${Math.round(seeded.rps)} PUT/s)`);

  // The late page of W7: the cursor of the last full page of the seeded files.
  const walk = await walkListing(server.base, user.key, target.big);
  const lastFull = Math.floor(cfg.bigFiles / 1000) - 1;
  target.bigCount = walk.count;
  target.lateCursor = walk.cursors[lastFull - 1] ?? walk.cursors[walk.cursors.length - 1];
  target.latePage = lastFull + 1;
  return target;
}

/** The baseline's files: the 4 KiB file and a 10,000-file directory, written directly. */
export function setupBaseline(server, cfg) {
  fs.writeFileSync(path.join(server.dataDir, FILE_NAME), FILE_4K);
  const dir = path.join(server.dataDir, 'list10k');
  fs.mkdirSync(dir);
  for (let n = 0; n < cfg.listFiles; n++) fs.writeFileSync(path.join(dir, `l-${n}`), 'x'.repeat(16));
  return { server };
}

/** A fresh bucket for each W4 repetition, so "empty bucket" stays empty-ish. */
async function w4Bucket(target, rep) {
  const name = `bench-w4-r${rep}`;
  if (!target.w4Buckets.has(name)) target.w4Buckets.set(name, await makeBucket(target.server.base, target.key, name, 'private'));
  return target.w4Buckets.get(name);
}

// ---------------------------------------------------------------------------
// Cases

const keyHeader = (target) => ({ 'x-api-key': target.key });
const fileUrl = (target, bucket, name = FILE_NAME) => `${target.server.base}/api/v1/buckets/${bucket}/files/${name}`;

/**
 * Every case: { id, workload, variant, metric, run(rep, duration) -> load spec }.
 * metric: 'rps' (2xx per second), 'allRps' (all answers per second; real limits)
 * or 'latency' (p50/p99 ms, one connection).
 */
export function loadCases({ pail, baseline, pg, limits }, cfg) {
  const cases = [];
  const add = (c) => cases.push({ metric: 'rps', duration: cfg.duration, ...c });

  // W1: public GET, no key
  add({ workload: 'W1', variant: 'pail', spec: () => ({ url: fileUrl(pail, pail.pub), method: 'GET', connections: 64 }) });
  add({ workload: 'W1', variant: 'baseline', spec: () => ({ url: `${baseline.server.base}/files/${FILE_NAME}`, method: 'GET', connections: 64 }) });
  // W2: private GET with a key
  add({ workload: 'W2', variant: 'pail', spec: () => ({ url: fileUrl(pail, pail.priv), method: 'GET', headers: keyHeader(pail), connections: 64 }) });
  add({ workload: 'W2', variant: 'baseline', spec: () => ({ url: `${baseline.server.base}/files/${FILE_NAME}`, method: 'GET', headers: keyHeader(pail), connections: 64 }) });
  add({ workload: 'W2', variant: 'big', spec: () => ({ url: fileUrl(pail, pail.big), method: 'GET', headers: keyHeader(pail), connections: 64 }) });
  // W3: HEAD with a key
  add({ workload: 'W3', variant: 'pail', spec: () => ({ url: fileUrl(pail, pail.priv), method: 'HEAD', headers: keyHeader(pail), connections: 64 }) });
  add({ workload: 'W3', variant: 'baseline', spec: () => ({ url: `${baseline.server.base}/files/${FILE_NAME}`, method: 'HEAD', headers: keyHeader(pail), connections: 64 }) });
  // W4: PUT distinct 4 KiB files
  const put = (url, headers, prefix) => ({ url, method: 'PUT', headers: { ...headers, 'content-type': 'application/octet-stream' }, bodyBytes: 4096, connections: 32, distinct: { prefix } });
  add({ workload: 'W4', variant: 'pail', spec: async (rep) => put(`${pail.server.base}/api/v1/buckets/${await w4Bucket(pail, rep)}/files`, keyHeader(pail), 'w4') });
  add({ workload: 'W4', variant: 'baseline', spec: (rep) => put(`${baseline.server.base}/files/w4-${rep}`, keyHeader(pail), 'w4') });
  add({ workload: 'W4', variant: 'big', spec: (rep) => put(`${pail.server.base}/api/v1/buckets/${pail.big}/files`, keyHeader(pail), `w4-${rep}`) });
  // W7: list 1000 names, one client
  const list = (url, headers) => ({ url, method: 'GET', headers, connections: 1 });
  const latency = { metric: 'latency', duration: cfg.latencyDuration };
  add({ workload: 'W7', variant: 'pail', ...latency, spec: () => list(`${pail.server.base}/api/v1/buckets/${pail.list}/files?limit=1000`, keyHeader(pail)) });
  add({ workload: 'W7', variant: 'baseline', ...latency, spec: () => list(`${baseline.server.base}/list/list10k`, keyHeader(pail)) });
  add({ workload: 'W7', variant: 'big-first', ...latency, spec: () => list(`${pail.server.base}/api/v1/buckets/${pail.big}/files?limit=1000`, keyHeader(pail)) });
  add({ workload: 'W7', variant: 'big-late', ...latency, spec: () => list(`${pail.server.base}/api/v1/buckets/${pail.big}/files?limit=1000&cursor=${encodeURIComponent(pail.lateCursor)}`, keyHeader(pail)) });

  if (pg) {
    add({ workload: 'W2', variant: 'pg', spec: () => ({ url: fileUrl(pg, pg.priv), method: 'GET', headers: keyHeader(pg), connections: 64 }) });
    add({ workload: 'W4', variant: 'pg', spec: async (rep) => put(`${pg.server.base}/api/v1/buckets/${await w4Bucket(pg, rep)}/files`, keyHeader(pg), 'w4') });
  }
  if (limits) {
    const lim = { metric: 'allRps', duration: cfg.limitsDuration };
    add({ workload: 'W1', variant: 'limits', ...lim, spec: () => ({ url: fileUrl(limits, limits.pub), method: 'GET', connections: 64 }) });
    add({ workload: 'W2', variant: 'limits', ...lim, spec: () => ({ url: fileUrl(limits, limits.priv), method: 'GET', headers: keyHeader(limits), connections: 64 }) });
    add({ workload: 'W3', variant: 'limits', ...lim, spec: () => ({ url: fileUrl(limits, limits.priv), method: 'HEAD', headers: keyHeader(limits), connections: 64 }) });
    add({ workload: 'W4', variant: 'limits', ...lim, spec: () => put(`${limits.server.base}/api/v1/buckets/${limits.priv}/files`, keyHeader(limits), 'w4') });
  }
  for (const c of cases) c.id = `${c.workload}/${c.variant}`;
  return cases;
}
