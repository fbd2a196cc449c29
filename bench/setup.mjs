/**
 * What every benchmark script starts from: where the checkout is, which core
 * the server and the load run on (and pinning to them), the machine and the
 * commit of a run, the script's command line, and small helpers.
 */
import { execFileSync, spawn } from 'node:child_process';
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

export function median(values) {
  const sorted = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;
