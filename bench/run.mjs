#!/usr/bin/env node
/**
 * `npm run bench`: Pail against a bare Node baseline, W1–W7 plus the scaling,
 * PostgreSQL + Redis and real-limits figures, in one run. See bench/README.md.
 *
 *   node bench/run.mjs [--quick] [--reps N] [--duration S] [--big N]
 *                      [--no-build] [--no-pg] [--no-limits] [--no-stream]
 *                      [--only ID,…] [--out FILE]
 *
 * Servers run on core 0 (taskset -c 0), autocannon, the stream client and this
 * script on core 1. Results: printed, and bench/results/latest.json.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_DIR, REPO_DIR, RAISED_LIMITS, api, commandLine, gitInfo, machineInfo, postgresAndRedis, runLoad, runOnLoadCore, startServer } from './lib.mjs';
import { renderHeader, renderTable, writeResults } from './report.mjs';
import { describe, describeTransfer, loadCases, measureCase, measureTransfer, pailStreamTarget, settings, setupBaseline, setupPail } from './workloads.mjs';

// ---------------------------------------------------------------------------
// Arguments

const { flag, option } = commandLine();
if (flag('--help') || flag('-h')) {
  console.log(
    fs
      .readFileSync(new URL(import.meta.url), 'utf8')
      .split('\n')
      .slice(2, 13)
      .join('\n'),
  );
  process.exit(0);
}

// This script (and so every load child it starts) runs on the load core.
await runOnLoadCore(main);

async function main() {
  const quick = flag('--quick');
  const cfg = settings(quick);
  if (option('--reps')) cfg.reps = Number(option('--reps'));
  if (option('--duration')) cfg.duration = cfg.latencyDuration = Number(option('--duration'));
  if (option('--big')) cfg.bigFiles = Number(option('--big'));
  const out = path.resolve(option('--out') ?? path.join(BENCH_DIR, 'results', quick ? 'quick.json' : 'latest.json'));
  const started = Date.now();
  const log = (message) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);

  const machine = machineInfo();

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
    machine,
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
    // WEBHOOK_ALLOW_PRIVATE: W4 hook/dead-hook deliver to receivers on this machine (webhook-receivers.mjs).
    const pailServer = await start('pail', { label: 'pail', env: { ...RAISED_LIMITS, WEBHOOK_ALLOW_PRIVATE: 'true' }, s3: true });
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

    // --only W2/pail,W2/signed: just those cases (ids as in the progress lines).
    const only = option('--only')?.split(',');
    const cases = loadCases({ pail, baseline, pg, limits }, cfg).filter((c) => !only || only.includes(c.id));
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
        const result = await measureCase(c, rep, servers);
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

// ---------------------------------------------------------------------------
// W5/W6: one large upload and download per server, RSS sampled every 50 ms

async function streamRep(rep, pail, baseline, cfg, results, log) {
  const name = `big-${rep}.bin`;
  const targets = {
    pail: pailStreamTarget(pail, name),
    baseline: { server: baseline.server, url: `${baseline.server.base}/files/${name}`, headers: {}, file: () => path.join(baseline.server.dataDir, name) },
  };
  // Each server downloads the file it has just received, so both downloads find
  // it equally fresh in the page cache (some hosts, this one included, page out
  // memory left untouched for ~30 s). Which server goes first alternates.
  const order = rep % 2 === 1 ? ['pail', 'baseline'] : ['baseline', 'pail'];
  for (const variant of order) {
    for (const mode of ['upload', 'download']) {
      const entry = await measureTransfer(targets[variant], mode, cfg.streamBytes, `${mode}-${variant}-${rep}`);
      (results.stream[`${mode}/${variant}`] ??= []).push(entry);
      log(`  ${`${mode === 'upload' ? 'W5' : 'W6'}/${variant}`.padEnd(16)} ${describeTransfer(entry)}`);
    }
  }
  await api(pail.server.base, 'DELETE', `/api/v1/buckets/${pail.priv}/files/${name}`, { key: pail.key });
  fs.rmSync(path.join(baseline.server.dataDir, name), { force: true });
}
