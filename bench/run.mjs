#!/usr/bin/env node
/**
 * `npm run bench`: Pail against a bare Node baseline, W1–W7 plus the scaling,
 * PostgreSQL + Redis and real-limits figures, in one run. See bench/README.md.
 *
 *   node bench/run.mjs [--quick] [--reps N] [--duration S] [--big N]
 *                      [--no-build] [--no-pg] [--no-limits] [--no-stream]
 *                      [--out FILE]
 *
 * Servers run on core 0 (taskset -c 0), autocannon, the stream client and this
 * script on core 1. Results: printed, and bench/results/latest.json.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BENCH_DIR,
  LOAD_CORE,
  REPO_DIR,
  RAISED_LIMITS,
  SERVER_CORE,
  api,
  hasTaskset,
  cpuSeconds,
  cpuSplit,
  idleRssKiB,
  largestFile,
  machineTicks,
  pageCacheShare,
  postgresAndRedis,
  readRssKiB,
  resetPeakRss,
  runLoad,
  runStream,
  sampleRss,
  sleep,
  startServer,
  threadCpu,
  threadCpuDelta,
  tickShares,
} from './lib.mjs';
import { renderHeader, renderTable, writeResults } from './report.mjs';
import { loadCases, settings, setupBaseline, setupPail } from './workloads.mjs';

// ---------------------------------------------------------------------------
// Arguments

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const option = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
if (flag('--help') || flag('-h')) {
  console.log(fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(2, 13).join('\n'));
  process.exit(0);
}

// This script (and so every load child it starts) runs on the load core.
if (hasTaskset() && process.env.PAIL_BENCH_PINNED !== '1') {
  const child = spawn('taskset', ['-c', LOAD_CORE, process.execPath, ...process.execArgv, process.argv[1], ...argv], {
    stdio: 'inherit',
    env: { ...process.env, PAIL_BENCH_PINNED: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await main();
}

async function main() {
  const quick = flag('--quick');
  const cfg = settings(quick);
  if (option('--reps')) cfg.reps = Number(option('--reps'));
  if (option('--duration')) cfg.duration = cfg.latencyDuration = Number(option('--duration'));
  if (option('--big')) cfg.bigFiles = Number(option('--big'));
  const out = path.resolve(option('--out') ?? path.join(BENCH_DIR, 'results', quick ? 'quick.json' : 'latest.json'));
  const started = Date.now();
  const log = (message) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);

  if (os.cpus().length < 2) console.warn('warning: fewer than 2 cores: server and load generator share a core');
  if (!hasTaskset()) console.warn('warning: taskset not found (util-linux): server and load are NOT pinned to separate cores');
  const loadavgStart = os.loadavg();
  if (loadavgStart[0] > 1.5) console.warn(`warning: load average is ${loadavgStart[0].toFixed(2)}: other work on this machine will skew the figures`);

  if (!flag('--no-build')) {
    log('building the server (npx tsc -b packages/server)');
    try {
      execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: REPO_DIR, stdio: 'inherit' });
    } catch {
      console.warn('warning: the build failed; benchmarking the existing packages/server/dist');
    }
  }

  const results = {
    startedAt: new Date(started).toISOString(),
    finishedAt: null,
    quick,
    settings: cfg,
    git: gitInfo(),
    machine: {
      node: process.version,
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model ?? '?',
      serverCore: SERVER_CORE,
      loadCore: LOAD_CORE,
      taskset: hasTaskset(),
      loadavgStart,
      loadavgEnd: null,
    },
    skipped: {},
    runs: {},
    stream: {},
  };

  const servers = [];
  const cleanups = [];
  const start = async (kind, options) => {
    const server = await startServer(kind, options);
    servers.push(server);
    return server;
  };
  let interrupted = false;
  process.on('SIGINT', () => {
    interrupted = true;
    console.warn('interrupted: stopping after the current step');
  });

  try {
    // --- servers and their data -------------------------------------------
    log('starting Pail (SQLite, raised rate limits) and the bare Node baseline');
    const pailServer = await start('pail', { label: 'pail', env: RAISED_LIMITS });
    const baselineServer = await start('baseline', { label: 'baseline' });
    log(`seeding Pail (W7 bucket of ${cfg.listFiles}, big bucket of ${cfg.bigFiles})`);
    const pail = await setupPail(pailServer, cfg, log);
    results.latePage = pail.latePage;
    results.bigBucketFiles = pail.bigCount;
    const baseline = setupBaseline(baselineServer, cfg);

    let pg = null;
    if (flag('--no-pg')) results.skipped.pg = '--no-pg';
    else {
      const backend = await postgresAndRedis();
      if (backend.problem) {
        results.skipped.pg = backend.problem;
        log(`skipping PostgreSQL + Redis: ${backend.problem}`);
      } else {
        cleanups.push(backend.cleanup);
        log('starting Pail on PostgreSQL + Redis');
        const pgServer = await start('pail', { label: 'pg', env: { ...RAISED_LIMITS, ...backend.env } });
        pg = await setupPail(pgServer, cfg, log, { withLists: false });
      }
    }

    let limits = null;
    if (flag('--no-limits')) results.skipped.limits = '--no-limits';
    else {
      log('starting Pail with the real per-plan limits');
      const limitsServer = await start('pail', { label: 'limits' });
      limits = await setupPail(limitsServer, cfg, log, { withLists: false });
    }

    const cases = loadCases({ pail, baseline, pg, limits }, cfg);
    for (const c of cases) results.runs[c.id] = [];

    // --- warm-up (not recorded) ----------------------------------------------
    log(`warm-up: ${cases.length} cases × ${cfg.warmup} s`);
    for (const c of cases) {
      if (interrupted) break;
      await runLoad({ ...(await c.spec(0)), duration: cfg.warmup });
    }

    // --- the repetitions, interleaved --------------------------------------
    for (let rep = 1; rep <= cfg.reps && !interrupted; rep++) {
      log(`repetition ${rep} of ${cfg.reps}`);
      for (const c of inRepOrder(cases, rep)) {
        if (interrupted) break;
        const spec = await c.spec(rep);
        const server = servers.find((s) => spec.url.startsWith(`${s.base}/`));
        const cpuBefore = server ? cpuSeconds(server.pid) : null;
        const coreBefore = machineTicks(SERVER_CORE);
        const result = await runLoad({ ...spec, duration: c.duration });
        // How much of the server's core went unused, and how much of that waiting on the disk.
        result.serverCore = tickShares(coreBefore, machineTicks(SERVER_CORE));
        // Server CPU per answer tells a server that works harder per request
        // from one that waits (on the disk, or for a core it does not get).
        if (cpuBefore !== null && result.total > 0) result.serverCpuUsPerAnswer = ((cpuSeconds(server.pid) - cpuBefore) * 1e6) / result.total;
        results.runs[c.id].push(result);
        log(`  ${c.id.padEnd(16)} ${describe(c, result)}`);
      }
      if (!flag('--no-stream') && !interrupted) await streamRep(rep, pail, baseline, cfg, results, log);
    }
  } finally {
    for (const server of servers.reverse()) await server.stop().catch(() => {});
    for (const cleanup of cleanups) await cleanup().catch((error) => console.warn(`cleanup: ${error.message}`));
  }

  results.finishedAt = new Date().toISOString();
  results.machine.loadavgEnd = os.loadavg();
  writeResults(results, out);
  console.log();
  console.log(renderHeader(results));
  console.log();
  console.log(renderTable(results));
  console.log();
  console.log(`written to ${path.relative(process.cwd(), out)}`);
}

/**
 * The cases of one repetition. Within a workload, odd repetitions run Pail
 * first and even ones run it last, so no variant always follows the same
 * neighbour (a case that leaves write-back behind slows the one after it).
 */
function inRepOrder(cases, rep) {
  if (rep % 2 === 1) return cases;
  const groups = [];
  for (const c of cases) {
    const last = groups[groups.length - 1];
    if (last && last[0].workload === c.workload) last.push(c);
    else groups.push([c]);
  }
  return groups.flatMap((group) => group.reverse());
}

function describe(c, r) {
  const problems = (r.errors ? ` errors=${r.errors}` : '') + (r.timeouts ? ` timeouts=${r.timeouts}` : '') + (r.non2xx && c.metric !== 'allRps' ? ` non2xx=${JSON.stringify(r.codes)}` : '');
  const core = r.serverCore ? `, its core idle ${pct(r.serverCore.idle + r.serverCore.iowait)} (iowait ${pct(r.serverCore.iowait)})` : '';
  const cpuNote = r.serverCpuUsPerAnswer === undefined ? '' : `, server CPU ${Math.round(r.serverCpuUsPerAnswer)} µs/answer${core}`;
  if (c.metric === 'latency') return `p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms (${r.ok} requests)${cpuNote}${problems}`;
  if (c.metric === 'allRps') return `${Math.round(r.allRps)} answers/s, ${r.ok} × 2xx, codes ${JSON.stringify(r.codes)}`;
  return `${Math.round(r.rps)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms${cpuNote}${problems}`;
}

// ---------------------------------------------------------------------------
// W5/W6: one large upload and download per server, RSS sampled every 50 ms

let dropWarned = false;
function dropPageCache() {
  try {
    fs.writeFileSync('/proc/sys/vm/drop_caches', '1');
  } catch (error) {
    if (!dropWarned) console.warn(`note: cannot empty the page cache before uploads (${error.code ?? error.message}); W5 then depends on the order of the servers`);
    dropWarned = true;
  }
}

function pct(share) {
  return share == null ? '?' : `${Math.round(share * 100)}%`;
}

async function streamRep(rep, pail, baseline, cfg, results, log) {
  const name = `big-${rep}.bin`;
  const targets = {
    pail: {
      server: pail.server,
      url: `${pail.server.base}/api/v1/buckets/${pail.priv}/files/${name}`,
      headers: { 'x-api-key': pail.key },
      file: () => largestFile(path.join(pail.server.dataDir, 'blobs')),
    },
    baseline: { server: baseline.server, url: `${baseline.server.base}/files/${name}`, headers: {}, file: () => path.join(baseline.server.dataDir, name) },
  };
  // Each server downloads the file it has just received, so both downloads find
  // it equally fresh in the page cache (some hosts, this one included, page out
  // memory left untouched for ~30 s). Which server goes first alternates.
  const order = rep % 2 === 1 ? ['pail', 'baseline'] : ['baseline', 'pail'];
  for (const variant of order) {
    for (const mode of ['upload', 'download']) {
      const t = targets[variant];
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
      const perf = startPerf(`${mode}-${variant}-${rep}`);
      if (perf) await sleep(500);
      const sampler = sampleRss(pid, 50);
      const cpuBefore = cpuSplit(pid);
      const threadsBefore = threadCpu(pid);
      const ticksBefore = machineTicks();
      const coreBefore = machineTicks(SERVER_CORE);
      const r = await runStream({ mode, url: t.url, headers: t.headers, bytes: cfg.streamBytes, md5: false });
      const { peakKiB, samples } = sampler.stop();
      await perf?.stop();
      const hwmKiB = hwmReset ? readRssKiB(pid, 'VmHWM') : null;
      const intact = (r.status === 200 || r.status === 201) && r.bytes === cfg.streamBytes;
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
      const busy = (t) => t.all - t.idle - t.iowait - t.steal; // steal: the hypervisor's, not this core's work
      const coreBusy = coreBefore && coreAfter ? (busy(coreAfter) - busy(coreBefore)) / 100 : null;
      const othersOnCore = coreBusy !== null && serverCpu !== null ? Math.max(0, coreBusy - serverCpu) : null;
      const entry = { ...r, idleKiB, peakKiB, hwmKiB, samples, intact, serverCpu, serverSystemCpu, serverFaults, threads, othersOnCore, machine, cached };
      (results.stream[`${mode}/${variant}`] ??= []).push(entry);
      const growth = (Math.max(peakKiB, hwmKiB ?? 0) - idleKiB) / 1024;
      log(`  ${`${mode === 'upload' ? 'W5' : 'W6'}/${variant}`.padEnd(16)} ${r.mbps.toFixed(0)} MB/s, RSS idle ${(idleKiB / 1024).toFixed(1)} MiB, +${growth.toFixed(1)} MiB at peak, server CPU ${serverCpu?.toFixed(2)} s (system ${serverSystemCpu?.toFixed(2)}, ${serverFaults} page faults; by thread: ${threads}) of ${r.seconds.toFixed(2)} s, others on its core ${othersOnCore?.toFixed(2)} s, iowait ${pct(machine?.iowait)}, steal ${pct(machine?.steal)}${cached === null ? '' : `, file ${pct(cached)} in page cache`}${intact ? '' : ` NOT INTACT (status ${r.status}, ${r.bytes} bytes)`}`);
    }
  }
  await api(pail.server.base, 'DELETE', `/api/v1/buckets/${pail.priv}/files/${name}`, { key: pail.key });
  fs.rmSync(path.join(baseline.server.dataDir, name), { force: true });
}

/**
 * BENCH_PERF=<dir>: a `perf record -g` of the server's core during each W5/W6
 * transfer, as <dir>/<mode>-<server>-<rep>.data (`perf report -i` reads it).
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

function gitInfo() {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_DIR, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'packages/server', 'packages/shared'], { cwd: REPO_DIR, encoding: 'utf8' }).trim() !== '';
    return { commit, dirty };
  } catch {
    return null;
  }
}
