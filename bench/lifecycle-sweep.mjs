#!/usr/bin/env node
/**
 * What a lifecycle sweep costs the requests served beside it: Pail (embedded
 * SQLite, on the server core) holds N expired 16-byte files; GETs of a 4 KiB
 * file with an API key (8 connections, on the load core) are measured before,
 * during and after the sweep that deletes all N. Prints one JSON document:
 * each phase's latency (p50/p99/max), the sweep's duration and rate, and the
 * median and the worst p99 of the runs during the sweep minus the p99 before it.
 *
 *   node bench/lifecycle-sweep.mjs [--files 100000] [--window 5]
 *
 * Needs the built server (npx tsc -b packages/server) and taskset, as run.mjs.
 */
import { api, makeBucket, makeUser, putFile, RAISED_LIMITS, runLoad, seedFiles, sleep, startServer, machineInfo, gitInfo } from './lib.mjs';

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}
const FILES = option('files', 100_000);
const WINDOW_SECONDS = option('window', 5);
const CONNECTIONS = 8;

const server = await startServer('pail', {
  label: 'lifecycle',
  // A day of one second, and a pass every second: the sweep starts within a second of the rule.
  env: { ...RAISED_LIMITS, LIFECYCLE_DAY_SECONDS: '1', LIFECYCLE_INTERVAL_SECONDS: '1' },
});
try {
  const user = await makeUser(server.base, `lifecycle-${Date.now()}@bench.example`);
  const reads = await makeBucket(server.base, user.key, 'reads', 'private');
  const expiring = await makeBucket(server.base, user.key, 'expiring', 'private');
  await putFile(server.base, user.key, reads, 'f4k.bin', Buffer.alloc(4096, 'pail'));
  const seedStart = Date.now();
  await seedFiles(server.base, user.key, expiring, { prefix: 'old', count: FILES });
  const seedSeconds = (Date.now() - seedStart) / 1000;

  const load = (duration) =>
    runLoad({
      url: `${server.base}/api/v1/buckets/${reads}/files/f4k.bin`,
      method: 'GET',
      headers: { 'x-api-key': user.key },
      connections: CONNECTIONS,
      duration,
    });
  const objectCount = async () => (await api(server.base, 'GET', `/api/v1/buckets/${expiring}`, { key: user.key })).data.object_count;

  await load(2); // warm-up
  const before = await load(WINDOW_SECONDS * 2);

  await api(server.base, 'PUT', `/api/v1/buckets/${expiring}/lifecycle`, {
    key: user.key,
    json: { rules: [{ id: 'all', status: 'enabled', expiration: { days: 1 } }] },
  });
  const sweepStart = Date.now();
  const during = [];
  let left = await objectCount();
  while (left > 0) {
    during.push({ ...(await load(WINDOW_SECONDS)), left });
    left = await objectCount();
    if (Date.now() - sweepStart > 30 * 60 * 1000) throw new Error(`${left} files still there after 30 minutes`);
  }
  const sweepSeconds = (Date.now() - sweepStart) / 1000;
  await sleep(1000);
  const after = await load(WINDOW_SECONDS * 2);

  const phase = (run) => ({
    rps: Math.round(run.rps),
    p50: run.latency.p50,
    p99: run.latency.p99,
    max: run.latency.max,
    non2xx: run.non2xx,
    errors: run.errors,
  });
  const worstP99 = Math.max(...during.map((run) => run.latency.p99));
  const p99s = during.map((run) => run.latency.p99).sort((a, b) => a - b);
  const medianP99 = p99s[Math.floor(p99s.length / 2)];
  console.log(
    JSON.stringify(
      {
        machine: machineInfo(),
        git: gitInfo(),
        files: FILES,
        seedSeconds,
        connections: CONNECTIONS,
        before: phase(before),
        during: during.map((run) => ({ ...phase(run), filesLeftAtStart: run.left })),
        after: phase(after),
        sweep: { seconds: sweepSeconds, filesPerSecond: Math.round(FILES / sweepSeconds) },
        medianP99DuringMinusBeforeMs: medianP99 - before.latency.p99,
        worstP99DuringMinusBeforeMs: worstP99 - before.latency.p99,
      },
      null,
      2,
    ),
  );
} finally {
  await server.stop();
}
