#!/usr/bin/env node
/**
 * Two builds of Pail, before and after a change, measured in one interleaved run.
 *
 *   node bench/compare.mjs --before DIR [--after DIR] [--reps N] [--duration S]
 *                          [--quick] [--no-pg] [--no-stream] [--only ID,…] [--out FILE]
 *
 * DIR: a checkout of this repository with built packages (packages/server/dist/main.js);
 * --after defaults to this repository. Nothing is built here. Each build gets its own
 * server (core 0, fresh data dir, raised limits) and runs W1–W4, W7 and W5/W6 (and W2/W4
 * on PostgreSQL + Redis); every repetition runs each workload on both, the first build
 * alternating. Results: printed, and bench/results/compare.json. See bench/README.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BENCH_DIR,
  REPO_DIR,
  RAISED_LIMITS,
  api,
  commandLine,
  gitInfo,
  machineInfo,
  median,
  postgresAndRedis,
  runLoad,
  runOnLoadCore,
  startServer,
} from './lib.mjs';
import { DOORS, WHAT, fmt } from './report.mjs';
import { describe, describeTransfer, loadCases, measureCase, measureTransfer, pailStreamTarget, settings, setupPail, transferGrowthMiB } from './workloads.mjs';

const { flag, option } = commandLine();
if (flag('--help') || flag('-h')) {
  console.log(
    fs
      .readFileSync(new URL(import.meta.url), 'utf8')
      .split('\n')
      .slice(2, 12)
      .join('\n'),
  );
  process.exit(0);
}
if (!option('--before')) {
  console.error(
    'usage: node bench/compare.mjs --before DIR [--after DIR] [--reps N] [--duration S] [--quick] [--no-pg] [--no-stream] [--only ID,…] [--out FILE]',
  );
  process.exit(2);
}

const SIDES = ['before', 'after'];

// This script (and so every load child it starts) runs on the load core.
await runOnLoadCore(main);

async function main() {
  const builds = {};
  for (const side of SIDES) {
    const dir = path.resolve(option(`--${side}`) ?? REPO_DIR);
    builds[side] = { dir, main: checkBuild(side, dir), git: gitInfo(dir) };
  }
  const quick = flag('--quick');
  const cfg = settings(quick);
  // An even number of repetitions, so each build goes first equally often.
  cfg.reps = option('--reps') ? Number(option('--reps')) : quick ? 2 : 4;
  if (option('--duration')) cfg.duration = cfg.latencyDuration = Number(option('--duration'));
  const out = path.resolve(option('--out') ?? path.join(BENCH_DIR, 'results', 'compare.json'));
  const started = Date.now();
  const log = (message) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);

  const results = {
    startedAt: new Date(started).toISOString(),
    finishedAt: null,
    quick,
    settings: cfg,
    builds,
    sameBuild: builds.before.dir === builds.after.dir,
    machine: machineInfo(),
    skipped: {},
    order: [],
    runs: {},
    stream: {},
  };
  if (results.sameBuild) log('the same build on both sides (an A/A check): the ratios show the noise of this machine');

  const servers = [];
  const cleanups = [];
  const start = async (options) => {
    const server = await startServer('pail', options);
    servers.push(server);
    return server;
  };
  let interrupted = false;
  process.on('SIGINT', () => {
    interrupted = true;
    console.warn('interrupted: stopping after the current step');
  });

  try {
    // --- servers and their data: the same setup for both builds --------------
    const targets = {};
    for (const side of SIDES) {
      const b = builds[side];
      log(`starting ${side}: ${b.main}${b.git ? ` (commit ${b.git.commit}${b.git.dirty ? ' + uncommitted changes' : ''})` : ''}`);
      const server = await start({ label: side, env: RAISED_LIMITS, main: b.main, s3: true });
      targets[side] = { pail: await setupPail(server, cfg, log, { withBig: false }), pg: null };
    }
    if (flag('--no-pg')) results.skipped.pg = '--no-pg';
    else {
      const backends = {};
      for (const side of SIDES) {
        const backend = await postgresAndRedis();
        if (backend.problem) {
          results.skipped.pg = backend.problem;
          break;
        }
        cleanups.push(backend.cleanup);
        backends[side] = backend;
      }
      if (results.skipped.pg) log(`skipping PostgreSQL + Redis: ${results.skipped.pg}`);
      else {
        for (const side of SIDES) {
          log(`starting ${side} on PostgreSQL + Redis`);
          const server = await start({ label: `${side}-pg`, env: { ...RAISED_LIMITS, ...backends[side].env }, main: builds[side].main });
          targets[side].pg = await setupPail(server, cfg, log, { withLists: false });
        }
      }
    }

    // The same cases for both builds, in the same order: W1–W4, W7, then the PostgreSQL ones.
    const casesOf = Object.fromEntries(SIDES.map((side) => [side, loadCases(targets[side], cfg)]));
    // --only W4/pg,W3/pail: just those cases (ids as in the progress lines), for a focused A/B.
    const only = option('--only')?.split(',');
    // Paired by id: a case one build lacks (a feature it does not have, e.g. versioned buckets) is left out.
    const pairs = casesOf.before
      .map((c) => ({ id: c.id, metric: c.metric, cases: { before: c, after: casesOf.after.find((a) => a.id === c.id) } }))
      .filter((pair) => pair.cases.after !== undefined && (!only || only.includes(pair.id)));
    for (const pair of pairs) results.runs[pair.id] = { before: [], after: [] };

    // --- warm-up (not recorded) -----------------------------------------------
    log(`warm-up: ${pairs.length} cases × 2 builds × ${cfg.warmup} s`);
    for (const pair of pairs) {
      for (const side of SIDES) {
        if (interrupted) break;
        await runLoad({ ...(await pair.cases[side].spec(0)), duration: cfg.warmup });
      }
    }

    // --- the repetitions, interleaved -----------------------------------------
    for (let rep = 1; rep <= cfg.reps && !interrupted; rep++) {
      // Odd repetitions run "before" first, even ones "after" first, in every workload.
      const order = rep % 2 === 1 ? SIDES : [...SIDES].reverse();
      results.order.push(order.join(' → '));
      log(`repetition ${rep} of ${cfg.reps} (${order.join(' first, then ')})`);
      for (const pair of pairs) {
        for (const side of order) {
          if (interrupted) break;
          const c = pair.cases[side];
          const result = await measureCase(c, rep, servers);
          results.runs[pair.id][side].push(result);
          log(`  ${`${pair.id} ${side}`.padEnd(16)} ${describe(c, result)}`);
        }
      }
      if (!flag('--no-stream') && !interrupted) {
        // Each build uploads its file and downloads it at once (see run.mjs).
        const name = `big-${rep}.bin`;
        for (const side of order) {
          for (const mode of ['upload', 'download']) {
            const entry = await measureTransfer(pailStreamTarget(targets[side].pail, name), mode, cfg.streamBytes, `${mode}-${side}-${rep}`);
            (results.stream[mode] ??= { before: [], after: [] })[side].push(entry);
            log(`  ${`${mode === 'upload' ? 'W5' : 'W6'} ${side}`.padEnd(16)} ${describeTransfer(entry)}`);
          }
        }
        for (const side of SIDES) {
          const { server, priv, key } = targets[side].pail;
          await api(server.base, 'DELETE', `/api/v1/buckets/${priv}/files/${name}`, { key });
        }
      }
    }
    if (flag('--no-stream')) results.skipped.stream = '--no-stream';
  } finally {
    for (const server of servers.reverse()) await server.stop().catch(() => {});
    for (const cleanup of cleanups) await cleanup().catch((error) => console.warn(`cleanup: ${error.message}`));
  }

  results.finishedAt = new Date().toISOString();
  results.machine.loadavgEnd = os.loadavg();
  results.rows = compareRows(results);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log();
  console.log(renderCompareHeader(results));
  console.log();
  console.log(renderCompareTable(results.rows));
  console.log();
  console.log(`written to ${path.relative(process.cwd(), out)}`);
}

/** The server's entry point of a checkout; exits with the commands that fix a missing build. */
function checkBuild(side, dir) {
  const mainJs = path.join(dir, 'packages/server/dist/main.js');
  const missing = [mainJs, path.join(dir, 'packages/shared/dist/index.js'), path.join(dir, 'node_modules')].filter((file) => !fs.existsSync(file));
  if (missing.length > 0) {
    console.error(`--${side} ${dir}: missing ${missing.join(', ')}`);
    console.error('compare.mjs does not build; to prepare a checkout:');
    if (missing.some((file) => file.endsWith('node_modules'))) {
      console.error(`  cp -a ${path.join(REPO_DIR, 'node_modules')} ${dir}/`);
      console.error(`  (and each ${REPO_DIR}/packages/*/node_modules that exists, into ${dir}/packages/*/)`);
    }
    console.error(`  (cd ${dir} && npx tsc -b packages/shared packages/server)`);
    process.exit(2);
  }
  // tsc -b rewrites only the outputs that changed, but its .tsbuildinfo on every build that did anything.
  const built = mtime(path.join(dir, 'packages/server/tsconfig.tsbuildinfo'));
  const newest = Math.max(newestMtime(path.join(dir, 'packages/server/src')), newestMtime(path.join(dir, 'packages/shared/src')));
  if (built && newest > built)
    console.warn(`warning: --${side} ${dir}: sources changed after the last build; to rebuild: (cd ${dir} && npx tsc -b packages/shared packages/server)`);
  return mainJs;
}

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function newestMtime(dir) {
  let newest = 0;
  try {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) newest = Math.max(newest, mtime(path.join(entry.parentPath ?? entry.path, entry.name)));
    }
  } catch {
    // no such directory
  }
  return newest;
}

// ---------------------------------------------------------------------------
// The table: medians of both builds, after/before, and each repetition's after/before

/**
 * One row per figure: { workload, what, unit, better ('higher'|'lower'), before, after,
 * ratio (after/before of the medians), perRep (after/before within each repetition), digits }.
 */
function compareRows(results) {
  const rows = [];
  const add = (workload, what, unit, better, digits, lists, pick) => {
    if (!lists || (lists.before.length === 0 && lists.after.length === 0)) return;
    const values = { before: lists.before.map(pick), after: lists.after.map(pick) };
    const before = median(values.before);
    const after = median(values.after);
    const ratio = (a, b) => (typeof a === 'number' && typeof b === 'number' && b !== 0 ? a / b : null);
    const perRep = values.before.map((b, i) => ratio(values.after[i], b));
    rows.push({ workload, what, unit, better, digits, before, after, ratio: ratio(after, before), perRep, values });
  };
  const runs = results.runs;
  const cpu = (r) => r.serverCpuUsPerAnswer;
  for (const w of ['W1', 'W2', 'W3', 'W4']) {
    add(w, WHAT[w], 'req/s', 'higher', 0, runs[`${w}/pail`], (r) => r.rps);
    add(w, 'server CPU per answer', 'µs', 'lower', 1, runs[`${w}/pail`], cpu);
  }
  for (const { workload, variant, what } of DOORS) {
    add(`${workload} ${variant}`, what, 'req/s', 'higher', 0, runs[`${workload}/${variant}`], (r) => r.rps);
    add(`${workload} ${variant}`, 'server CPU per answer', 'µs', 'lower', 1, runs[`${workload}/${variant}`], cpu);
  }
  const size = results.settings.streamBytes;
  const sizeLabel = size >= 1024 ** 3 ? `${size / 1024 ** 3} GiB` : `${size / 1024 ** 2} MiB`;
  for (const [w, mode] of [
    ['W5', 'upload'],
    ['W6', 'download'],
  ]) {
    const list = results.stream[mode];
    add(w, `${mode} one ${sizeLabel} file`, 'MB/s', 'higher', 0, list, (e) => (e.intact ? e.mbps : null));
    add(w, `server CPU per ${mode}`, 's', 'lower', 2, list, (e) => e.serverCpu);
    add(w, `server peak RSS above idle`, 'MiB', 'lower', 1, list, transferGrowthMiB);
  }
  const list = runs['W7/pail'];
  const files = results.settings.listFiles.toLocaleString('en-US');
  add('W7', `list first 1000 of ${files}, 1 client: p50`, 'ms', 'lower', 1, list, (r) => r.latency.p50);
  add('W7', `list first 1000 of ${files}, 1 client: p99`, 'ms', 'lower', 1, list, (r) => r.latency.p99);
  add('W7', `list first 1000 of ${files}, 1 client: mean`, 'ms', 'lower', 2, list, (r) => r.latency.mean);
  add('W7', 'server CPU per answer', 'µs', 'lower', 0, list, cpu);
  for (const w of ['W2', 'W4']) {
    add(`${w} pg`, `${WHAT[w]}, PostgreSQL + Redis`, 'req/s', 'higher', 0, runs[`${w}/pg`], (r) => r.rps);
    add(`${w} pg`, 'server CPU per answer', 'µs', 'lower', 1, runs[`${w}/pg`], cpu);
  }
  return rows;
}

function renderCompareTable(rows) {
  const lines = ['| Workload | What | Unit | Better | Before | After | After/before | Each repetition |', '|---|---|---|---|---:|---:|---:|---|'];
  for (const r of rows) {
    const reps = r.perRep.map((x) => fmt(x, 2)).join(' ');
    lines.push(
      `| ${r.workload} | ${r.what} | ${r.unit} | ${r.better} | ${fmt(r.before, r.digits)} | ${fmt(r.after, r.digits)} | ${fmt(r.ratio, 2)} | ${reps} |`,
    );
  }
  return lines.join('\n');
}

function renderCompareHeader(results) {
  const m = results.machine;
  const s = results.settings;
  const load = (l) => (l ? l.map((x) => x.toFixed(2)).join(' ') : '?');
  const build = (side) => {
    const b = results.builds[side];
    return `${side}: ${b.dir}${b.git ? ` (commit ${b.git.commit}${b.git.dirty ? ' + uncommitted changes' : ''})` : ''}`;
  };
  const skipped = Object.entries(results.skipped).map(([what, why]) => `${what === 'pg' ? 'PostgreSQL + Redis' : 'W5/W6'} skipped: ${why}`);
  return [
    `Pail before/after, ${results.quick ? 'quick' : 'full'} run, ${results.startedAt} → ${results.finishedAt}`,
    `${build('before')}; ${build('after')}${results.sameBuild ? ' (the same build: an A/A check)' : ''}`,
    `node ${m.node}; ${m.cpus} × ${m.model}; servers on core ${m.serverCore}, load on core ${m.loadCore}${m.taskset ? '' : ' (taskset missing: NOT pinned)'}`,
    `${s.reps} repetitions, interleaved (${results.order.join('; ')}), ${s.duration} s each (W7 ${s.latencyDuration} s); medians. Load average at start ${load(m.loadavgStart)}, at end ${load(m.loadavgEnd)}.`,
    ...skipped,
  ].join('\n');
}
