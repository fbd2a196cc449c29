#!/usr/bin/env node
/**
 * `npm run bench:memory`: only W5/W6. Starts Pail (embedded defaults, server
 * on core 0), uploads one generated 1 GiB file with PUT and downloads it again
 * (client on core 1, streaming, never buffered), and prints the server's idle
 * RSS, its peak RSS during each transfer (VmRSS sampled every 50 ms, and
 * VmHWM after resetting it through /proc/<pid>/clear_refs), MB/s, and whether
 * the bytes came back intact (size and MD5 of what was sent vs received).
 *
 *   node bench/memory.mjs [--size MiB] [--no-build]
 *
 * Exit code 1 when the bytes were not intact or the peak grew more than
 * 32 MiB above idle.
 */
import { execFileSync } from 'node:child_process';
import { api, hasTaskset, idleRssKiB, makeBucket, makeUser, readRssKiB, REPO_DIR, resetPeakRss, runStream, sampleRss, startServer } from './lib.mjs';

const argv = process.argv.slice(2);
const sizeIndex = argv.indexOf('--size');
const bytes = (sizeIndex >= 0 ? Number(argv[sizeIndex + 1]) : 1024) * 1024 * 1024;
const LIMIT_MIB = 32;

if (!argv.includes('--no-build')) {
  try {
    execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: REPO_DIR, stdio: 'inherit' });
  } catch {
    console.warn('warning: the build failed; using the existing packages/server/dist');
  }
}
if (!hasTaskset()) console.warn('warning: taskset not found: server and client are not pinned to separate cores');

const mib = (kib) => (kib / 1024).toFixed(1);
const server = await startServer('pail', { label: 'memory', env: { PLAN_FREE_STORAGE_BYTES: String(2 ** 40), MAX_FILE_BYTES: String(2 ** 40) } });
let failed = false;
try {
  const user = await makeUser(server.base, 'memory@example.com');
  const bucket = await makeBucket(server.base, user.key, 'memory', 'private');
  const url = `${server.base}/api/v1/buckets/${bucket}/files/big.bin`;
  const headers = { 'x-api-key': user.key };

  const idle = await idleRssKiB(server.pid, 1000);
  console.log(`Pail pid ${server.pid}, ${(bytes / 1024 ** 3).toFixed(2)} GiB file; idle RSS ${mib(idle)} MiB`);

  const measure = async (mode) => {
    const before = await idleRssKiB(server.pid, 500);
    const hwmReset = resetPeakRss(server.pid);
    const sampler = sampleRss(server.pid, 50);
    const result = await runStream({ mode, url, headers, bytes, md5: true });
    const { peakKiB, samples } = sampler.stop();
    const hwm = hwmReset ? readRssKiB(server.pid, 'VmHWM') : null;
    const peak = Math.max(peakKiB, hwm ?? 0);
    const growth = (peak - idle) / 1024;
    console.log(
      `${mode.padEnd(8)} ${result.mbps.toFixed(0).padStart(5)} MB/s  status ${result.status}  RSS before ${mib(before)} MiB, peak ${mib(peak)} MiB ` +
        `(sampled ${mib(peakKiB)} over ${samples} samples${hwm !== null ? `, VmHWM ${mib(hwm)}` : ''}) = +${growth.toFixed(1)} MiB above idle ${growth <= LIMIT_MIB ? 'ok' : `OVER ${LIMIT_MIB} MiB`}`,
    );
    if (growth > LIMIT_MIB) failed = true;
    return result;
  };

  const up = await measure('upload');
  const down = await measure('download');
  const head = await fetch(url, { method: 'HEAD', headers });
  const storedSize = Number(head.headers.get('content-length'));
  const intact = up.status === 201 && down.status === 200 && up.bytes === bytes && down.bytes === bytes && storedSize === bytes && up.md5 === down.md5;
  console.log(`sent ${up.bytes} bytes md5 ${up.md5}; stored ${storedSize}; received ${down.bytes} bytes md5 ${down.md5}: ${intact ? 'INTACT' : 'NOT INTACT'}`);
  console.log('(MB/s here include MD5 hashing on the client; npm run bench measures without it)');
  if (!intact) failed = true;
  await api(server.base, 'DELETE', `/api/v1/buckets/${bucket}/files/big.bin`, { key: user.key });
} finally {
  await server.stop();
}
process.exit(failed ? 1 : 0);
