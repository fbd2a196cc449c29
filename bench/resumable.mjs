#!/usr/bin/env node
/**
 * `npm run bench:resumable`: a resumable (tus) upload of one generated file
 * in 16 MiB pieces against a plain PUT of the same size, interleaved, on the
 * embedded defaults (server on core 0, client on core 1, as memory.mjs). For
 * each: MB/s, the server's peak RSS above idle, and whether the stored bytes
 * are the ones sent (MD5 of what was sent against a download).
 *
 *   node bench/resumable.mjs [--size MiB] [--piece MiB] [--reps N] [--no-build]
 *
 * Asked of it (issue 25): the resumable upload at least 0.8 of the PUT's MB/s,
 * with RSS bounded. Exit code 1 when bytes were not intact.
 */
import { execFileSync } from 'node:child_process';
import { api, hasTaskset, idleRssKiB, makeBucket, makeUser, readRssKiB, REPO_DIR, resetPeakRss, runStream, sampleRss, startServer } from './lib.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const index = argv.indexOf(name);
  return index >= 0 ? Number(argv[index + 1]) : fallback;
};
const MiB = 1024 * 1024;
const bytes = option('--size', 1024) * MiB;
const pieceBytes = option('--piece', 16) * MiB;
const reps = option('--reps', 3);

if (!argv.includes('--no-build')) {
  try {
    execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: REPO_DIR, stdio: 'inherit' });
  } catch {
    console.warn('warning: the build failed; using the existing packages/server/dist');
  }
}
if (!hasTaskset()) console.warn('warning: taskset not found: server and client are not pinned to separate cores');

const mib = (kib) => (kib / 1024).toFixed(1);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const server = await startServer('pail', {
  label: 'resumable',
  env: { PLAN_FREE_STORAGE_BYTES: String(2 ** 40), MAX_FILE_BYTES: String(2 ** 40), PLAN_FREE_RATE_LIMIT: '1000000' },
});
let failed = false;
try {
  const user = await makeUser(server.base, 'resumable@example.com');
  const bucket = await makeBucket(server.base, user.key, 'resumable', 'private');
  const headers = { 'x-api-key': user.key };
  const idle = await idleRssKiB(server.pid, 1000);
  console.log(`Pail pid ${server.pid}, ${(bytes / 1024 ** 3).toFixed(2)} GiB file, ${pieceBytes / MiB} MiB pieces, ${reps} reps; idle RSS ${mib(idle)} MiB`);

  const results = { put: [], tus: [] };
  const measure = async (mode, rep) => {
    const filename = `${mode}-${rep}.bin`;
    await idleRssKiB(server.pid, 500);
    const hwmReset = resetPeakRss(server.pid);
    const sampler = sampleRss(server.pid, 50);
    const url = mode === 'put' ? `${server.base}/api/v1/buckets/${bucket}/files/${filename}` : `${server.base}/api/v1/buckets/${bucket}/uploads`;
    const result = await runStream({ mode: mode === 'put' ? 'upload' : 'tus', url, headers, bytes, pieceBytes, filename, md5: true });
    const { peakKiB } = sampler.stop();
    const peak = Math.max(peakKiB, hwmReset ? (readRssKiB(server.pid, 'VmHWM') ?? 0) : 0);
    const down = await runStream({ mode: 'download', url: `${server.base}/api/v1/buckets/${bucket}/files/${filename}`, headers, bytes, md5: true });
    const intact = result.bytes === bytes && down.bytes === bytes && result.md5 === down.md5;
    if (!intact) failed = true;
    const growth = (peak - idle) / 1024;
    results[mode].push({ mbps: result.mbps, growth });
    console.log(
      `${mode.padEnd(4)} rep ${rep}: ${result.mbps.toFixed(0).padStart(5)} MB/s, status ${result.status}, RSS +${growth.toFixed(1)} MiB above idle, ${intact ? 'intact' : `NOT INTACT ${result.response ?? ''}`}`,
    );
    await api(server.base, 'DELETE', `/api/v1/buckets/${bucket}/files/${filename}`, { key: user.key });
  };
  for (let rep = 1; rep <= reps; rep++) {
    // Alternating which goes first, so neither always meets a warmer page cache.
    for (const mode of rep % 2 === 1 ? ['put', 'tus'] : ['tus', 'put']) await measure(mode, rep);
  }
  const put = median(results.put.map((r) => r.mbps));
  const tus = median(results.tus.map((r) => r.mbps));
  const peakGrowth = Math.max(...results.tus.map((r) => r.growth));
  console.log(`\nmedian MB/s: PUT ${put.toFixed(0)}, resumable ${tus.toFixed(0)}: ratio ${(tus / put).toFixed(2)} (asked: >= 0.80)`);
  console.log(`resumable RSS: at most +${peakGrowth.toFixed(1)} MiB above idle`);
} finally {
  await server.stop();
}
process.exit(failed ? 1 : 0);
