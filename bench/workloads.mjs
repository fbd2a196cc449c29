/**
 * The workloads W1–W7 and their variants, as "cases": one measured thing on
 * one server. run.mjs (and compare.mjs, for two builds of Pail) sets the
 * servers up (setup*), then measures every case once per repetition
 * (measureCase), interleaved, and W5/W6 with measureTransfer; report.mjs takes
 * the medians.
 *
 * Servers (all pinned to the server core; only the one under load is busy):
 *   pail      Pail, embedded defaults (SQLite, files in DATA_DIR), rate limits raised
 *   baseline  bench/baseline-server.mjs: bare node:http + fs streams
 *   big       the same Pail process, but a bucket that already holds N files (100,000)
 *   pg        Pail on PostgreSQL + Redis (blobs still in DATA_DIR), rate limits raised
 *   limits    Pail with the real per-plan limits (free plan: 100 API requests/min,
 *             600 anonymous downloads/min per IP): most answers are 429
 */
import { hookedBucket } from './webhook-receivers.mjs';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  SERVER_CORE,
  cpuSeconds,
  cpuSplit,
  idleRssKiB,
  largestFile,
  machineTicks,
  makeBucket,
  makeVersionedBucket,
  pageCacheShare,
  readRssKiB,
  resetPeakRss,
  runLoad,
  runStream,
  sampleRss,
  sleep,
  threadCpu,
  threadCpuDelta,
  tickShares,
} from './lib.mjs';

export { FILE_4K, FILE_NAME, presignedGetOf, setupBaseline, setupPail } from './bench-targets.mjs';
import { FILE_NAME } from './bench-targets.mjs';

/** Settings of a full run and of --quick. */
export function settings(quick) {
  return quick
    ? { reps: 1, duration: 3, latencyDuration: 3, limitsDuration: 2, warmup: 1, bigFiles: 10_000, listFiles: 10_000, streamBytes: 256 * 1024 ** 2 }
    : { reps: 3, duration: 10, latencyDuration: 10, limitsDuration: 5, warmup: 2, bigFiles: 100_000, listFiles: 10_000, streamBytes: 1024 ** 3 };
}

/** A fresh bucket for each W4 repetition, so "empty bucket" stays empty-ish (W4 through the S3 API has its own: `door` 's3'). */
async function w4Bucket(target, rep, door = '') {
  const name = `bench-w4${door}-r${rep}`;
  if (!target.w4Buckets.has(name)) {
    const make = door === 'versioned' ? makeVersionedBucket : (base, key, bucket) => makeBucket(base, key, bucket, 'private');
    target.w4Buckets.set(name, await make(target.server.base, target.key, name));
  }
  return target.w4Buckets.get(name);
}

// ---------------------------------------------------------------------------
// Cases

const keyHeader = (target) => ({ 'x-api-key': target.key });
const fileUrl = (target, bucket, name = FILE_NAME) => `${target.server.base}/api/v1/buckets/${bucket}/files/${name}`;

/**
 * Every case: { id, workload, variant, metric, duration, spec(rep) -> load spec }.
 * metric: 'rps' (2xx per second), 'allRps' (all answers per second; real limits)
 * or 'latency' (p50/p99 ms, one connection). Only `pail` is required: the
 * baseline's cases need `baseline`, the big bucket's `pail.big`, and so on.
 */
export function loadCases({ pail, baseline = null, pg = null, limits = null }, cfg) {
  const cases = [];
  const add = (c) => cases.push({ metric: 'rps', duration: cfg.duration, ...c });

  // W1: public GET, no key
  add({ workload: 'W1', variant: 'pail', spec: () => ({ url: fileUrl(pail, pail.pub), method: 'GET', connections: 64 }) });
  if (baseline)
    add({ workload: 'W1', variant: 'baseline', spec: () => ({ url: `${baseline.server.base}/files/${FILE_NAME}`, method: 'GET', connections: 64 }) });
  // W2: private GET with a key
  add({ workload: 'W2', variant: 'pail', spec: () => ({ url: fileUrl(pail, pail.priv), method: 'GET', headers: keyHeader(pail), connections: 64 }) });
  if (baseline)
    add({
      workload: 'W2',
      variant: 'baseline',
      spec: () => ({ url: `${baseline.server.base}/files/${FILE_NAME}`, method: 'GET', headers: keyHeader(pail), connections: 64 }),
    });
  // W2 through a signed url: no key, the signature and its signer checked instead.
  if (pail.signedUrl) add({ workload: 'W2', variant: 'signed', spec: () => ({ url: pail.signedUrl, method: 'GET', connections: 64 }) });
  // W2 through the S3 API: a presigned GetObject, the Signature V4 checked on every request.
  if (pail.s3Url) add({ workload: 'W2', variant: 's3', spec: () => ({ url: pail.s3Url, method: 'GET', connections: 64 }) });
  // W2 in a versioned bucket (issue 37): the current one of three versions.
  if (pail.versioned)
    add({
      workload: 'W2',
      variant: 'versioned',
      spec: () => ({ url: fileUrl(pail, pail.versioned), method: 'GET', headers: keyHeader(pail), connections: 64 }),
    });
  if (pail.big)
    add({ workload: 'W2', variant: 'big', spec: () => ({ url: fileUrl(pail, pail.big), method: 'GET', headers: keyHeader(pail), connections: 64 }) });
  // W3: HEAD with a key
  add({ workload: 'W3', variant: 'pail', spec: () => ({ url: fileUrl(pail, pail.priv), method: 'HEAD', headers: keyHeader(pail), connections: 64 }) });
  if (baseline)
    add({
      workload: 'W3',
      variant: 'baseline',
      spec: () => ({ url: `${baseline.server.base}/files/${FILE_NAME}`, method: 'HEAD', headers: keyHeader(pail), connections: 64 }),
    });
  // W4: PUT distinct 4 KiB files
  const put = (url, headers, prefix) => ({
    url,
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/octet-stream' },
    bodyBytes: 4096,
    connections: 32,
    distinct: { prefix },
  });
  add({
    workload: 'W4',
    variant: 'pail',
    spec: async (rep) => put(`${pail.server.base}/api/v1/buckets/${await w4Bucket(pail, rep)}/files`, keyHeader(pail), 'w4'),
  });
  // W4 through the S3 API: PutObject with the same body and connections, each request signed afresh
  // (Authorization header, signed payload: the server hashes the body to check it; s3-header-signer.mjs).
  if (pail.s3Credential)
    add({
      workload: 'W4',
      variant: 's3',
      spec: async (rep) => {
        await w4Bucket(pail, rep, 's3');
        return { ...put(`${pail.server.s3Base}/bench-w4s3-r${rep}`, {}, 'w4'), s3Sign: pail.s3Credential };
      },
    });
  // W4 into a versioned bucket (issue 37): every name new, so each PUT also makes its version id; none displaces one.
  if (pail.versioned)
    add({
      workload: 'W4',
      variant: 'versioned',
      spec: async (rep) => put(`${pail.server.base}/api/v1/buckets/${await w4Bucket(pail, rep, 'versioned')}/files`, keyHeader(pail), 'w4'),
    });
  if (baseline) add({ workload: 'W4', variant: 'baseline', spec: (rep) => put(`${baseline.server.base}/files/w4-${rep}`, keyHeader(pail), 'w4') });
  // W4 into a bucket with a webhook (issue 39): to a receiver that answers, and to a dead endpoint (webhook-receivers.mjs).
  const hooked = (kind) => async (rep) => put(`${pail.server.base}/api/v1/buckets/${await hookedBucket(pail, rep, kind)}/files`, keyHeader(pail), 'w4');
  if (pail.webhooks) add({ workload: 'W4', variant: 'hook', spec: hooked('live') });
  if (pail.webhooks) add({ workload: 'W4', variant: 'dead-hook', spec: hooked('dead') });
  if (pail.big)
    add({ workload: 'W4', variant: 'big', spec: (rep) => put(`${pail.server.base}/api/v1/buckets/${pail.big}/files`, keyHeader(pail), `w4-${rep}`) });
  // W7: list 1000 names, one client
  const list = (url, headers) => ({ url, method: 'GET', headers, connections: 1 });
  const latency = { metric: 'latency', duration: cfg.latencyDuration };
  add({ workload: 'W7', variant: 'pail', ...latency, spec: () => list(`${pail.server.base}/api/v1/buckets/${pail.list}/files?limit=1000`, keyHeader(pail)) });
  if (baseline) add({ workload: 'W7', variant: 'baseline', ...latency, spec: () => list(`${baseline.server.base}/list/list10k`, keyHeader(pail)) });
  if (pail.big) {
    add({
      workload: 'W7',
      variant: 'big-first',
      ...latency,
      spec: () => list(`${pail.server.base}/api/v1/buckets/${pail.big}/files?limit=1000`, keyHeader(pail)),
    });
    add({
      workload: 'W7',
      variant: 'big-late',
      ...latency,
      spec: () => list(`${pail.server.base}/api/v1/buckets/${pail.big}/files?limit=1000&cursor=${encodeURIComponent(pail.lateCursor)}`, keyHeader(pail)),
    });
  }

  if (pg) {
    add({ workload: 'W2', variant: 'pg', spec: () => ({ url: fileUrl(pg, pg.priv), method: 'GET', headers: keyHeader(pg), connections: 64 }) });
    add({ workload: 'W4', variant: 'pg', spec: async (rep) => put(`${pg.server.base}/api/v1/buckets/${await w4Bucket(pg, rep)}/files`, keyHeader(pg), 'w4') });
  }
  if (limits) {
    const lim = { metric: 'allRps', duration: cfg.limitsDuration };
    add({ workload: 'W1', variant: 'limits', ...lim, spec: () => ({ url: fileUrl(limits, limits.pub), method: 'GET', connections: 64 }) });
    add({
      workload: 'W2',
      variant: 'limits',
      ...lim,
      spec: () => ({ url: fileUrl(limits, limits.priv), method: 'GET', headers: keyHeader(limits), connections: 64 }),
    });
    add({
      workload: 'W3',
      variant: 'limits',
      ...lim,
      spec: () => ({ url: fileUrl(limits, limits.priv), method: 'HEAD', headers: keyHeader(limits), connections: 64 }),
    });
    add({ workload: 'W4', variant: 'limits', ...lim, spec: () => put(`${limits.server.base}/api/v1/buckets/${limits.priv}/files`, keyHeader(limits), 'w4') });
  }
  for (const c of cases) c.id = `${c.workload}/${c.variant}`;
  return cases;
}

/**
 * One measured run of a case: the load generator's figures plus, for the
 * server under load (found among `servers` by the URL), its CPU time per
 * answer and how much of its core went unused.
 */
export async function measureCase(c, rep, servers) {
  const spec = await c.spec(rep);
  const server = servers.find((s) => spec.url.startsWith(`${s.base}/`) || (s.s3Base !== null && spec.url.startsWith(`${s.s3Base}/`)));
  const cpuBefore = server ? cpuSeconds(server.pid) : null;
  const coreBefore = machineTicks(SERVER_CORE);
  const result = await runLoad({ ...spec, duration: c.duration });
  // How much of the server's core went unused, and how much of that waiting on the disk.
  result.serverCore = tickShares(coreBefore, machineTicks(SERVER_CORE));
  // Server CPU per answer tells a server that works harder per request
  // from one that waits (on the disk, or for a core it does not get).
  if (cpuBefore !== null && result.total > 0) result.serverCpuUsPerAnswer = ((cpuSeconds(server.pid) - cpuBefore) * 1e6) / result.total;
  return result;
}

/** One log line for a measureCase() result. */
export function describe(c, r) {
  const problems =
    (r.errors ? ` errors=${r.errors}` : '') +
    (r.timeouts ? ` timeouts=${r.timeouts}` : '') +
    (r.non2xx && c.metric !== 'allRps' ? ` non2xx=${JSON.stringify(r.codes)}` : '');
  const core = r.serverCore ? `, its core idle ${pct(r.serverCore.idle + r.serverCore.iowait)} (iowait ${pct(r.serverCore.iowait)})` : '';
  const cpuNote = r.serverCpuUsPerAnswer === undefined ? '' : `, server CPU ${Math.round(r.serverCpuUsPerAnswer)} µs/answer${core}`;
  if (c.metric === 'latency') return `p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms (${r.ok} requests)${cpuNote}${problems}`;
  if (c.metric === 'allRps') return `${Math.round(r.allRps)} answers/s, ${r.ok} × 2xx, codes ${JSON.stringify(r.codes)}`;
  return `${Math.round(r.rps)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms${cpuNote}${problems}`;
}

export function pct(share) {
  return share == null ? '?' : `${Math.round(share * 100)}%`;
}

// ---------------------------------------------------------------------------
// W5/W6: one large upload and download per server, RSS sampled every 50 ms

let dropWarned = false;
function dropPageCache() {
  try {
    fs.writeFileSync('/proc/sys/vm/drop_caches', '1');
  } catch (error) {
    if (!dropWarned)
      console.warn(`note: cannot empty the page cache before uploads (${error.code ?? error.message}); W5 then depends on the order of the servers`);
    dropWarned = true;
  }
}

/** Where a Pail server's W5/W6 file `name` goes: { server, url, headers, file() } for measureTransfer. */
export function pailStreamTarget(pail, name) {
  return {
    server: pail.server,
    url: `${pail.server.base}/api/v1/buckets/${pail.priv}/files/${name}`,
    headers: { 'x-api-key': pail.key },
    file: () => largestFile(path.join(pail.server.dataDir, 'blobs')),
  };
}

/**
 * One W5 (mode 'upload') or W6 ('download') transfer of `bytes` to or from a
 * target ({ server, url, headers, file() }), with the server's RSS, CPU (by
 * thread), page faults, what else ran on its core, and for a download the
 * share of the file in the page cache. `perfName`: the BENCH_PERF file name.
 */
export async function measureTransfer(t, mode, bytes, perfName) {
  const pid = t.server.pid;
  // Untimed: write back what earlier cases left dirty (the baseline's upload
  // never flushes its gigabyte), so no case pays for another's write-back.
  execFileSync('sync');
  // Before an upload, also empty the page cache where allowed (root): a
  // gigabyte written into a cache already full of earlier transfers cost
  // both servers up to twice the CPU, so whichever uploaded second lost.
  if (mode === 'upload') dropPageCache();
  const idleKiB = await idleRssKiB(pid);
  const hwmReset = resetPeakRss(pid);
  const cached = mode === 'download' ? pageCacheShare(t.file()) : null;
  const perf = startPerf(perfName);
  if (perf) await sleep(500);
  const sampler = sampleRss(pid, 50);
  const cpuBefore = cpuSplit(pid);
  const threadsBefore = threadCpu(pid);
  const ticksBefore = machineTicks();
  const coreBefore = machineTicks(SERVER_CORE);
  const r = await runStream({ mode, url: t.url, headers: t.headers, bytes, md5: false });
  const { peakKiB, samples } = sampler.stop();
  await perf?.stop();
  const hwmKiB = hwmReset ? readRssKiB(pid, 'VmHWM') : null;
  const intact = (r.status === 200 || r.status === 201) && r.bytes === bytes;
  const cpuAfter = cpuBefore && cpuSplit(pid);
  // By thread: the event loop, the libuv pool (writes, syncs), V8's helpers, workers.
  const threads = threadCpuDelta(threadsBefore, threadCpu(pid));
  const serverCpu = cpuAfter ? cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system : null;
  const serverSystemCpu = cpuAfter ? cpuAfter.system - cpuBefore.system : null;
  const serverFaults = cpuAfter ? cpuAfter.minorFaults - cpuBefore.minorFaults : null;
  const machine = tickShares(ticksBefore, machineTicks());
  // CPU seconds on the server's core that were not the server's (other
  // processes, kernel threads, interrupts): work that competed with it.
  const coreAfter = machineTicks(SERVER_CORE);
  const busy = (x) => x.all - x.idle - x.iowait - x.steal; // steal: the hypervisor's, not this core's work
  const coreBusy = coreBefore && coreAfter ? (busy(coreAfter) - busy(coreBefore)) / 100 : null;
  const othersOnCore = coreBusy !== null && serverCpu !== null ? Math.max(0, coreBusy - serverCpu) : null;
  return { ...r, idleKiB, peakKiB, hwmKiB, samples, intact, serverCpu, serverSystemCpu, serverFaults, threads, othersOnCore, machine, cached };
}

/** MiB the server's RSS grew above idle during a transfer (the larger of the sampled peak and VmHWM). */
export function transferGrowthMiB(entry) {
  return (Math.max(entry.peakKiB, entry.hwmKiB ?? 0) - entry.idleKiB) / 1024;
}

/** One log line for a measureTransfer() result. */
export function describeTransfer(e) {
  return `${e.mbps.toFixed(0)} MB/s, RSS idle ${(e.idleKiB / 1024).toFixed(1)} MiB, +${transferGrowthMiB(e).toFixed(1)} MiB at peak, server CPU ${e.serverCpu?.toFixed(2)} s (system ${e.serverSystemCpu?.toFixed(2)}, ${e.serverFaults} page faults; by thread: ${e.threads}) of ${e.seconds.toFixed(2)} s, others on its core ${e.othersOnCore?.toFixed(2)} s, iowait ${pct(e.machine?.iowait)}, steal ${pct(e.machine?.steal)}${e.cached === null ? '' : `, file ${pct(e.cached)} in page cache`}${e.intact ? '' : ` NOT INTACT (status ${e.status}, ${e.bytes} bytes)`}`;
}

/**
 * BENCH_PERF=<dir>: a `perf record -g` of the server's core during each W5/W6
 * transfer, as <dir>/<name>.data (`perf report -i` reads it).
 * For finding where a transfer's CPU goes; needs perf and root.
 */
function startPerf(name) {
  const dir = process.env.BENCH_PERF;
  if (!dir) return null;
  fs.mkdirSync(dir, { recursive: true });
  const child = spawn('perf', ['record', '-C', SERVER_CORE, '-g', '-o', path.join(dir, `${name}.data`)], { stdio: 'ignore' });
  child.on('error', (error) => console.warn(`perf: ${error.message}`));
  return {
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
