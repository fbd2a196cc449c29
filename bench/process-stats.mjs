/** What a process uses (RSS, CPU by thread, page faults) and what the machine does meanwhile, read from /proc. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { median, sleep } from './setup.mjs';

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
