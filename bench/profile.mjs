#!/usr/bin/env node
/**
 * Where Pail spends its CPU under one workload: starts Pail with `--cpu-prof`
 * (server core), drives the workload with autocannon (load core), stops the
 * server and prints the functions and the modules with the most self time.
 *
 *   node bench/profile.mjs [W1|W2|W3|W4|W7] [--signed | --s3 | --hook live|dead] [--pg] [--limits] [--duration S] [--top N] [--no-build]
 *
 * --signed: W2 through a signed url instead of with the key.
 * --s3: W2 through the S3 API, a presigned GetObject; W4 through the S3 API, PutObject
 * signed afresh in each request's Authorization header (as W4 s3 in workloads.mjs).
 *
 * --pg: Pail on PostgreSQL + Redis (a fresh schema and key prefix, as in run.mjs).
 * --limits: the default plan limits instead of raised ones, so after the first
 * 100 requests (600 for W1) the profile is of the 429 answer.
 *
 * The .cpuprofile is kept (path printed) for Chrome DevTools / speedscope.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makeBucket, makeUser, postgresAndRedis, putFile, RAISED_LIMITS, REPO_DIR, runLoad, seedFiles, startServer, tempDir } from './lib.mjs';
import { FILE_4K, FILE_NAME, presignedGetOf } from './workloads.mjs';
import { hookedBucket } from './webhook-receivers.mjs';

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const workload = (argv.find((a) => /^W\d$/.test(a)) ?? 'W2').toUpperCase();
const duration = Number(opt('--duration', 10));
const hook = opt('--hook', null);
const top = Number(opt('--top', 30));

if (!argv.includes('--no-build')) {
  try {
    execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: REPO_DIR, stdio: 'inherit' });
  } catch {
    console.warn('warning: the build failed; using the existing packages/server/dist');
  }
}

const profileDir = tempDir('profile');
const backend = argv.includes('--pg') ? await postgresAndRedis() : { env: {} };
if (backend.problem) throw new Error(backend.problem);
const server = await startServer('pail', {
  label: 'profile',
  env: { ...(argv.includes('--limits') ? {} : RAISED_LIMITS), ...backend.env, ...(hook ? { WEBHOOK_ALLOW_PRIVATE: 'true' } : {}) },
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
  s3: argv.includes('--s3'),
});
let result;
try {
  const user = await makeUser(server.base, 'profile@example.com');
  const pub = await makeBucket(server.base, user.key, 'profile-public', 'public');
  const priv = await makeBucket(server.base, user.key, 'profile-private', 'private');
  await putFile(server.base, user.key, pub, FILE_NAME, FILE_4K);
  await putFile(server.base, user.key, priv, FILE_NAME, FILE_4K);
  const key = { 'x-api-key': user.key };
  const file = (bucket) => `${server.base}/api/v1/buckets/${bucket}/files/${FILE_NAME}`;
  let spec;
  if (workload === 'W1') spec = { url: file(pub), method: 'GET', connections: 64 };
  else if (workload === 'W2' && argv.includes('--signed')) {
    const signed = await fetch(`${file(priv)}/signed-url`, { method: 'POST', headers: { ...key, 'content-type': 'application/json' }, body: '{}' });
    spec = { url: (await signed.json()).data.url, method: 'GET', connections: 64 };
  } else if (workload === 'W2' && argv.includes('--s3')) {
    spec = { url: await presignedGetOf(server.s3Base, user, 'profile-private'), method: 'GET', connections: 64 };
  } else if (workload === 'W2') spec = { url: file(priv), method: 'GET', headers: key, connections: 64 };
  else if (workload === 'W3') spec = { url: file(priv), method: 'HEAD', headers: key, connections: 64 };
  else if (workload === 'W4' && argv.includes('--s3')) {
    await makeBucket(server.base, user.key, 'profile-w4s3', 'private');
    spec = {
      url: `${server.s3Base}/profile-w4s3`,
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      bodyBytes: 4096,
      connections: 32,
      distinct: { prefix: 'p' },
      s3Sign: { accessKeyId: user.accessKeyId, secretAccessKey: user.secretAccessKey, region: 'us-east-1' },
    };
  } else if (workload === 'W4')
    spec = {
      // --hook live|dead: into a bucket with a webhook to a receiver that answers, or to one that never does (W4 hook, dead-hook).
      url: `${server.base}/api/v1/buckets/${hook ? await hookedBucket({ server, key: user.key, w4Buckets: new Map() }, 1, hook) : priv}/files`,
      method: 'PUT',
      headers: { ...key, 'content-type': 'application/octet-stream' },
      bodyBytes: 4096,
      connections: 32,
      distinct: { prefix: 'p' },
    };
  else if (workload === 'W7') {
    const list = await makeBucket(server.base, user.key, 'profile-list', 'private');
    await seedFiles(server.base, user.key, list, { prefix: 'l', count: 10_000 });
    spec = { url: `${server.base}/api/v1/buckets/${list}/files?limit=1000`, method: 'GET', headers: key, connections: 1 };
  } else throw new Error(`unknown workload ${workload}`);
  result = await runLoad({ ...spec, duration });
} finally {
  await server.stop();
  await backend.cleanup?.();
}
console.log(`${workload}: ${Math.round(result.rps)} req/s under the profiler (p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms)`);

const file = fs.readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
if (!file) throw new Error(`no .cpuprofile in ${profileDir}`);
const profilePath = path.join(profileDir, file);
const profile = JSON.parse(fs.readFileSync(profilePath, 'utf8'));

// Self time per node: samples × their time deltas.
const selfUs = new Map();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const where = (url) => {
  if (!url) return '(native)';
  const clean = url.replace(/^file:\/\//, '');
  const nm = clean.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = clean.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (clean.startsWith('node:')) return 'node:internal';
  if (clean.includes('/packages/')) return clean.slice(clean.indexOf('/packages/') + 1);
  return clean;
};
const byFunction = new Map();
const byModule = new Map();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (!us) continue;
  const cf = node.callFrame;
  const fn = `${cf.functionName || '(anonymous)'}  ${where(cf.url)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  const mod = cf.url ? where(cf.url) : cf.functionName.startsWith('(') ? cf.functionName : '(native)';
  byModule.set(mod, (byModule.get(mod) ?? 0) + us);
}
const show = (title, map, n) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    console.log(`${((us / total) * 100).toFixed(1).padStart(6)} %  ${name}`);
  }
};
show('self time by module / file', byModule, 20);
show('self time by function', byFunction, top);
console.log(`\nprofile: ${profilePath}`);
