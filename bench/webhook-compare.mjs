#!/usr/bin/env node
/**
 * `node bench/webhook-compare.mjs --before DIR [--reps N] [--duration S]` (issue 39): W4 (PUT distinct 4 KiB files,
 * 32 connections) into a bucket without a webhook, with one to a receiver that answers at once, and with one to a
 * dead endpoint, on two builds of Pail in one interleaved run (the order of the builds and of the three cases turned
 * each repetition). DIR is a checkout with a built packages/server/dist (compare.mjs's --before); the other build is
 * this repository's. Prints each run's req/s and server CPU per answer, then the medians and their ratios to W4/pail.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RAISED_LIMITS, REPO_DIR, commandLine, makeBucket, makeUser, median, runLoad, startServer } from './lib.mjs';
import { hookedBucket } from './webhook-receivers.mjs';

const { option } = commandLine();
const before = option('--before');
if (!before) throw new Error('usage: node bench/webhook-compare.mjs --before DIR [--reps N] [--duration S]');
const reps = Number(option('--reps') ?? 3);
const duration = Number(option('--duration') ?? 5);
const builds = { before: path.resolve(before, 'packages/server/dist/main.js'), after: path.join(REPO_DIR, 'packages/server/dist/main.js') };
const cpuUs = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];

const sides = {};
for (const [side, main] of Object.entries(builds)) {
  const server = await startServer('pail', { label: `hooks-${side}`, main, env: { ...RAISED_LIMITS, WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const user = await makeUser(server.base, `${side}@example.com`);
  sides[side] = { server, user, target: { server, key: user.key, w4Buckets: new Map() } };
}
const runs = [];
try {
  for (let rep = 1; rep <= reps; rep++) {
    const order = rep % 2 ? ['before', 'after'] : ['after', 'before'];
    const cases = rep % 2 ? ['pail', 'hook', 'dead-hook'] : ['dead-hook', 'hook', 'pail'];
    for (const variant of cases) {
      for (const side of order) {
        const { server, user, target } = sides[side];
        const bucket =
          variant === 'pail'
            ? await makeBucket(server.base, user.key, `plain-r${rep}`, 'private')
            : await hookedBucket(target, rep, variant === 'hook' ? 'live' : 'dead');
        const startCpu = cpuUs(server.pid);
        const result = await runLoad({
          url: `${server.base}/api/v1/buckets/${bucket}/files`,
          method: 'PUT',
          headers: { 'x-api-key': user.key, 'content-type': 'application/octet-stream' },
          bodyBytes: 4096,
          connections: 32,
          distinct: { prefix: 'p' },
          duration,
        });
        const us = (cpuUs(server.pid) - startCpu) / (result.rps * duration);
        runs.push({ rep, side, variant, rps: result.rps, us });
        console.log(
          `rep ${rep}  ${side.padEnd(6)}  W4/${variant.padEnd(9)}  ${Math.round(result.rps)} req/s, ${Math.round(us)} µs CPU/answer (load ${load()})`,
        );
      }
    }
  }
} finally {
  for (const { server } of Object.values(sides)) await server.stop();
}
for (const side of Object.keys(builds)) {
  const of = (variant, key) => median(runs.filter((run) => run.side === side && run.variant === variant).map((run) => run[key]));
  const [rps, us] = [of('pail', 'rps'), of('pail', 'us')];
  const row = (variant) =>
    `${variant} ${Math.round(of(variant, 'rps'))} (${Math.round(of(variant, 'us'))} µs): ${(of(variant, 'rps') / rps).toFixed(2)} of the req/s, ${(us / of(variant, 'us')).toFixed(2)} by CPU`;
  console.log(`${side}: median W4/pail ${Math.round(rps)} req/s (${Math.round(us)} µs); ${row('hook')}; ${row('dead-hook')}`);
}
