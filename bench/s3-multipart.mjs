#!/usr/bin/env node
/**
 * `npm run bench:s3`: a large upload through the S3-compatible API, in one
 * PutObject against @aws-sdk/lib-storage's multipart Upload. The requirement:
 * a 1 GiB multipart upload at least 0.9 of a 1 GiB raw PUT's MB/s, with the
 * server's RSS within idle + 64 MiB.
 *
 *   node bench/s3-multipart.mjs [--reps N] [--size MiB] [--only raw,mp5,mp16]
 *                               [--no-download] [--cpu-prof] [--client-prof] [--no-build] [--before DIR [--after DIR]] [--sink]
 *
 * Starts Pail (embedded defaults, server on core 0, the S3 API on a free
 * port, storage and file caps raised, rate limits out of the way), measures
 * its idle RSS, makes one untimed small pass of every case (warm-up), then
 * runs the cases interleaved, `--reps` times (default 3), the order rotating:
 *
 *   raw   one PutObject of the whole streamed body (ContentLength given)
 *   mp5   lib-storage's Upload with its defaults (partSize 5 MiB, queueSize 4)
 *   mp16  lib-storage's Upload with partSize 16 MiB, queueSize 4
 *
 * The client (s3-client.mjs: the AWS SDK v3 with its default checksums, CRC32)
 * runs as a child process on the load core (core 1). Each transfer: `sync`
 * and, as root, the page cache emptied first (as W5); the server's RSS
 * sampled every 50 ms and VmHWM read after resetting it; its CPU seconds by
 * thread. After each transfer, untimed: HeadObject (size, and the ETag
 * against the one computed client-side: the MD5, or the MD5 of the parts'
 * MD5s and "-<parts>"), a GetObject whose MD5 is compared with what was sent
 * (not with --no-download), and a DeleteObject.
 *
 * Prints a log line per transfer and a table of medians, the ratio
 * multipart/raw and whether it meets >= 0.9 and RSS <= idle + 64 MiB (the
 * largest peak of any repetition). Writes every figure to
 * bench/results/s3-multipart.json. Exit code 1 when an object was not intact.
 *
 * --before DIR: also a second build of Pail (a checkout with built packages,
 * as for compare.mjs), its own server started alike; within each repetition
 * every case runs on both builds, "before" first in odd repetitions and
 * "after" (this checkout, or --after DIR) first in even ones. The table then has a row per
 * case and build, each build's ratio taken against its own raw PUT.
 *
 * --cpu-prof: the server runs under `node --cpu-prof`; after the run, the
 * modules and functions with the most self time are printed (best with
 * --only and --reps 1, so one case is profiled). --client-prof: the same for
 * the client of the timed uploads (the last one's profile is printed).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  BENCH_DIR,
  commandLine,
  cpuSplit,
  gitInfo,
  idleRssKiB,
  machineInfo,
  machineTicks,
  makeUser,
  median,
  MiB,
  RAISED_LIMITS,
  readRssKiB,
  REPO_DIR,
  resetPeakRss,
  runOnLoadCore,
  runS3Client,
  sampleRss,
  SERVER_CORE,
  startServer,
  startSink,
  tempDir,
  threadCpu,
  threadCpuDelta,
} from './lib.mjs';
import { summariseProfile } from './cpu-profile.mjs';

const { flag, option } = commandLine();
const reps = Number(option('--reps') ?? 3);
const sizeMiB = Number(option('--size') ?? 1024);
const bytes = sizeMiB * MiB;
const download = !flag('--no-download');
const cpuProf = flag('--cpu-prof');
const clientProf = flag('--client-prof') ? tempDir('s3-client-profile') : null;
/** Which upload the client's newest profile is of. */
let lastUpload = null;
const beforeDir = option('--before');
const afterDir = option('--after');
if (beforeDir && cpuProf) throw new Error('--cpu-prof profiles one build: leave out --before');
const sink = flag('--sink');
const SIDES = [...(beforeDir ? ['before'] : []), 'after', ...(sink ? ['sink'] : [])];
/** More than one server: every line and row names its side. */
const sided = SIDES.length > 1;
const RSS_LIMIT_MIB = 64;
const RATIO_TARGET = 0.9;
const WARMUP_BYTES = Math.min(bytes, 32 * MiB);

const CASES = [
  { id: 'raw', what: 'one PutObject (streamed body, ContentLength)', mode: 'put' },
  { id: 'mp5', what: 'lib-storage Upload, defaults (partSize 5 MiB, queueSize 4)', mode: 'multipart' },
  { id: 'mp16', what: 'lib-storage Upload, partSize 16 MiB, queueSize 4', mode: 'multipart', partSize: 16 * MiB, queueSize: 4 },
];
const only = option('--only')?.split(',');
const cases = CASES.filter((c) => !only || only.includes(c.id));
if (cases.length === 0) throw new Error(`--only: none of ${only} is one of ${CASES.map((c) => c.id).join(', ')}`);

/** lib-storage's default part size, for the ETag a default Upload gets. */
const DEFAULT_PART_SIZE = 5 * MiB;
const partSizeOf = (c) => (c.mode === 'put' ? 0 : (c.partSize ?? DEFAULT_PART_SIZE));

let dropWarned = false;
function dropPageCache() {
  try {
    fs.writeFileSync('/proc/sys/vm/drop_caches', '1');
  } catch (error) {
    if (!dropWarned) console.warn(`note: cannot empty the page cache before uploads (${error.code ?? error.message})`);
    dropWarned = true;
  }
}

const mib = (kib) => (kib / 1024).toFixed(1);

async function main() {
  if (!flag('--no-build')) {
    try {
      execFileSync('npx', ['tsc', '-b', 'packages/shared', 'packages/server'], { cwd: REPO_DIR, stdio: 'inherit' });
    } catch {
      console.warn('warning: the build failed; using the existing packages/server/dist');
    }
  }
  const machine = machineInfo();
  const builds = {};
  for (const [side, given] of [
    ['before', beforeDir],
    ['after', afterDir],
  ]) {
    if (!given) continue;
    const dir = path.resolve(given);
    const main = path.join(dir, 'packages/server/dist/main.js');
    if (!fs.existsSync(main)) throw new Error(`${main} is missing: build that checkout (see "Comparing two builds" in bench/README.md)`);
    builds[side] = { dir, main, git: gitInfo(dir) };
  }
  builds.after ??= { dir: REPO_DIR, git: gitInfo() };
  if (sink) builds.sink = { dir: 'bench/s3-sink.mjs', git: null };
  const git = builds.after.git;
  const startedAt = new Date().toISOString();
  const profileDir = cpuProf ? tempDir('s3-profile') : null;
  const servers = {};
  const runs = Object.fromEntries(SIDES.map((side) => [side, Object.fromEntries(cases.map((c) => [c.id, []]))]));
  const idle = {};
  let failed = false;
  try {
    for (const side of SIDES) {
      if (side === 'sink') {
        servers.sink = await startSink();
        continue;
      }
      servers[side] = await startServer('pail', {
        label: sided ? `s3-multipart-${side}` : 's3-multipart',
        s3: true,
        env: { ...RAISED_LIMITS, PLAN_FREE_STORAGE_BYTES: String(2 ** 40), MAX_FILE_BYTES: String(2 ** 40) },
        nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
        ...(builds[side].main ? { main: builds[side].main } : {}),
      });
    }
    const s3 = {};
    for (const side of SIDES) {
      const server = servers[side];
      if (side === 'sink') {
        s3.sink = { endpoint: server.s3Base, accessKeyId: 'SINK', secretAccessKey: 'sink', bucket: 's3-bench' };
        continue;
      }
      const user = await makeUser(server.base, 's3-bench@example.com');
      s3[side] = { endpoint: server.s3Base, accessKeyId: user.accessKeyId, secretAccessKey: user.secretAccessKey, bucket: 's3-bench' };
      await runS3Client({ ...s3[side], mode: 'create-bucket' });
    }
    for (const side of SIDES) {
      idle[side] = await idleRssKiB(servers[side].pid, 1000);
      const g = builds[side].git;
      console.log(
        `${sided ? `${side}: ` : ''}${side === 'sink' ? 'sink' : 'Pail'} pid ${servers[side].pid} (S3 API ${servers[side].s3Base}), ${sizeMiB} MiB per upload, ${reps} repetitions; idle RSS ${mib(idle[side])} MiB; ` +
          `${sided ? `${builds[side].dir}, ` : ''}commit ${g?.commit ?? '?'}${g?.dirty ? ' (uncommitted server changes)' : ''}, node ${machine.node}, ${machine.cpus} cores`,
      );
    }

    // Untimed warm-up: every path once, small.
    for (const side of SIDES) {
      for (const c of cases) {
        const key = `warmup-${c.id}.bin`;
        await runS3Client({ ...s3[side], mode: c.mode, key, bytes: WARMUP_BYTES, seed: 0, partSize: c.partSize, queueSize: c.queueSize });
        if (side !== 'sink') await runS3Client({ ...s3[side], mode: 'delete', key });
      }
    }

    for (let rep = 1; rep <= reps; rep++) {
      // The order rotates, so no case always follows the same neighbour; with two builds, each goes first in turn.
      const order = cases.map((_, i) => cases[(i + rep - 1) % cases.length]);
      const sides = rep % 2 === 1 ? SIDES : [...SIDES].reverse();
      for (const c of order) {
        for (const side of sides) {
          const entry = await measure(side, servers[side].pid, s3[side], idle[side], c, rep);
          runs[side][c.id].push(entry);
          if (!entry.check.intact) failed = true;
        }
      }
    }
    for (const side of SIDES) {
      for (const c of cases) {
        const e = runs[side][c.id][0];
        if (e)
          console.log(
            `${sided ? `${side} ` : ''}${c.id}: the SDK sent ${e.payloadMode}${e.trailer ? `, trailer ${e.trailer}` : ''}${e.checksumHeaders?.length ? `, headers ${e.checksumHeaders.join(', ')}` : ''}`,
          );
      }
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop();
  }
  machine.loadavgEnd = (await import('node:os')).default.loadavg();

  // ---------------------------------------------------------------- table
  const rowsOf = (side) => {
    const raw = runs[side].raw;
    const rawMbps = raw ? median(raw.map((e) => e.mbps)) : null;
    return cases.map((c) => {
      const list = runs[side][c.id];
      const mbps = median(list.map((e) => e.mbps));
      const maxGrowth = Math.max(...list.map((e) => e.growthMiB));
      const ratio = rawMbps && c.id !== 'raw' ? mbps / rawMbps : null;
      return {
        side,
        id: c.id,
        what: c.what,
        mbps,
        each: list.map((e) => e.mbps),
        eachRatio: c.id !== 'raw' && raw ? list.map((e, i) => (raw[i] ? e.mbps / raw[i].mbps : null)) : null,
        ratio,
        ratioMet: ratio === null ? null : ratio >= RATIO_TARGET,
        serverCpu: median(list.map((e) => e.serverCpu)),
        clientCpu: median(list.map((e) => e.clientCpu)),
        completeSeconds: median(list.map((e) => e.completeSeconds)),
        growthMedian: median(list.map((e) => e.growthMiB)),
        maxGrowth,
        rssMet: maxGrowth <= RSS_LIMIT_MIB,
        intact: list.every((e) => e.check.intact),
      };
    });
  };
  const rows = SIDES.flatMap(rowsOf);
  const fmt = (v, digits = 0) =>
    v === null || v === undefined ? '–' : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const buildOf = (side) => {
    const g = builds[side].git;
    return side === 'sink' ? 'the sink' : `${g?.commit ?? '?'}${g?.dirty ? ' (uncommitted server changes)' : ''}`;
  };
  const lines = [
    `S3 upload benchmark, ${startedAt}; ${sided ? SIDES.map((side) => `${side} ${buildOf(side)} (${builds[side].dir})`).join(', ') : `commit ${buildOf('after')}`}; node ${machine.node}; ${machine.cpus} × ${machine.model.split(' ').slice(0, 2).join(' ')}; server on core ${machine.serverCore}, client on core ${machine.loadCore}`,
    `${sizeMiB} MiB per upload, ${reps} repetitions interleaved, medians; idle RSS ${SIDES.map((side) => `${sided ? `${side} ` : ''}${mib(idle[side])}`).join(', ')} MiB; load average at start ${machine.loadavgStart.map((x) => x.toFixed(2)).join(' ')}, at end ${machine.loadavgEnd.map((x) => x.toFixed(2)).join(' ')}`,
    '',
    `| Case | ${sided ? 'Build | ' : ''}What | MB/s | Each repetition | /raw (each) | Server CPU s | Client CPU s | Complete s | RSS above idle, median / max MiB | Target | Met | Intact |`,
    `|---|${sided ? '---|' : ''}---|---:|---|---:|---:|---:|---:|---:|---|---|---|`,
    ...rows.map(
      (r) =>
        `| ${r.id} | ${sided ? `${r.side} | ` : ''}${r.what} | ${fmt(r.mbps)} | ${r.each.map((x) => fmt(x)).join(' ')} | ${r.ratio === null ? '–' : `${fmt(r.ratio, 2)} (${r.eachRatio.map((x) => fmt(x, 2)).join(' ')})`} | ` +
        `${fmt(r.serverCpu, 2)} | ${fmt(r.clientCpu, 2)} | ${fmt(r.completeSeconds, 2)} | ${fmt(r.growthMedian, 1)} / ${fmt(r.maxGrowth, 1)} | ` +
        // The sink is a yardstick: no target, and nothing kept to check.
        (r.side === 'sink'
          ? '– | – | – (nothing kept) |'
          : `${r.id === 'raw' ? `RSS ≤ +${RSS_LIMIT_MIB}` : `≥ ${RATIO_TARGET} of raw, RSS ≤ +${RSS_LIMIT_MIB}`} | ` +
            `${r.id === 'raw' ? (r.rssMet ? 'yes' : 'no') : r.ratioMet === null ? (r.rssMet ? 'RSS yes' : 'RSS no') : `${r.ratioMet ? 'yes' : 'no'} / ${r.rssMet ? 'yes' : 'no'}`} | ${r.intact ? 'yes' : 'NO'} |`),
    ),
  ];
  console.log(`\n${lines.join('\n')}`);
  fs.mkdirSync(path.join(BENCH_DIR, 'results'), { recursive: true });
  const out = path.join(BENCH_DIR, 'results', 's3-multipart.json');
  const runsOut = sided ? runs : runs.after;
  const idleOut = sided ? idle : idle.after;
  fs.writeFileSync(out, JSON.stringify({ startedAt, git, builds, machine, sizeMiB, reps, idleKiB: idleOut, rows, runs: runsOut }, null, 2));
  console.log(`\n(every repetition in ${path.relative(REPO_DIR, out)})`);

  if (profileDir) summariseProfile(profileDir, 'server');
  if (clientProf) summariseProfile(clientProf, `client (of the last timed upload: ${lastUpload.side}, ${lastUpload.case})`);
  if (failed) console.error('an uploaded object was NOT INTACT');
  process.exit(failed ? 1 : 0);
}

/** One timed upload of case `c` to one server, with its RSS, CPU and integrity check; logs a line. */
async function measure(side, pid, s3, idle, c, rep) {
  const key = `big-${c.id}-${rep}.bin`;
  const seed = `${c.id}-${rep}`;
  execFileSync('sync');
  dropPageCache();
  const beforeKiB = await idleRssKiB(pid, 500);
  const hwmReset = resetPeakRss(pid);
  const sampler = sampleRss(pid, 50);
  const cpuBefore = cpuSplit(pid);
  const threadsBefore = threadCpu(pid);
  const coreBefore = machineTicks(SERVER_CORE);
  let r;
  let sampled;
  try {
    lastUpload = { side, case: c.id };
    r = await runS3Client(
      { ...s3, mode: c.mode, key, bytes, seed, partSize: c.partSize, queueSize: c.queueSize },
      clientProf ? ['--cpu-prof', `--cpu-prof-dir=${clientProf}`] : [],
    );
  } finally {
    sampled = sampler.stop();
  }
  const { peakKiB, samples } = sampled;
  const hwmKiB = hwmReset ? readRssKiB(pid, 'VmHWM') : null;
  const cpuAfter = cpuSplit(pid);
  const threads = threadCpuDelta(threadsBefore, threadCpu(pid));
  const serverCpu = cpuBefore && cpuAfter ? cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system : null;
  const serverSystemCpu = cpuBefore && cpuAfter ? cpuAfter.system - cpuBefore.system : null;
  // CPU seconds on the server's core that were not the server's (other processes, kernel threads, interrupts).
  const coreAfter = machineTicks(SERVER_CORE);
  const busy = (x) => x.all - x.idle - x.iowait - x.steal;
  const othersOnCore = coreBefore && coreAfter && serverCpu !== null ? Math.max(0, (busy(coreAfter) - busy(coreBefore)) / 100 - serverCpu) : null;
  const peak = Math.max(peakKiB, hwmKiB ?? 0);
  const growthMiB = (peak - idle) / 1024;
  const growthOverBeforeMiB = (peak - beforeKiB) / 1024;

  // The sink keeps nothing to check.
  const check =
    side === 'sink' ? { intact: true, sink: true } : await runS3Client({ ...s3, mode: 'check', key, bytes, seed, partSize: partSizeOf(c), download });
  if (side !== 'sink') await runS3Client({ ...s3, mode: 'delete', key });

  const complete = r.completeSeconds !== null ? `, Complete ${r.completeSeconds.toFixed(2)} s` : '';
  const parts = r.parts !== null ? `${r.parts} parts` : '1 request';
  console.log(
    `rep ${rep} ${sided ? `${side.padEnd(6)} ` : ''}${c.id.padEnd(4)} ${r.mbps.toFixed(0).padStart(5)} MB/s in ${r.seconds.toFixed(2)} s (${parts}${complete}); ` +
      `RSS before ${mib(beforeKiB)} MiB, peak ${mib(peak)} (sampled ${mib(peakKiB)} over ${samples}${hwmKiB !== null ? `, VmHWM ${mib(hwmKiB)}` : ''}) = +${growthMiB.toFixed(1)} MiB above idle (+${growthOverBeforeMiB.toFixed(1)} above before); ` +
      `server CPU ${serverCpu?.toFixed(2)} s (system ${serverSystemCpu?.toFixed(2)}; ${threads}), others on its core ${othersOnCore?.toFixed(2)} s, client CPU ${r.clientCpu.toFixed(2)} s; ` +
      (side === 'sink'
        ? 'nothing kept (sink)'
        : `ETag ${check.etag} ${check.etag === check.expectedEtag ? 'as computed' : `EXPECTED ${check.expectedEtag}`}, size ${check.size}` +
          `${download ? `, download MD5 ${check.receivedMd5 === check.sentMd5 && check.receivedBytes === bytes ? 'same as sent' : `DIFFERENT (${check.receivedBytes} bytes)`}` : ''}: ` +
          `${check.intact ? 'INTACT' : 'NOT INTACT'}`),
  );
  return { rep, ...r, beforeKiB, peakKiB, hwmKiB, samples, growthMiB, growthOverBeforeMiB, serverCpu, othersOnCore, serverSystemCpu, threads, check };
}

await runOnLoadCore(main);
