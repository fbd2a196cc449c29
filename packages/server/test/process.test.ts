/**
 * The real process: crash safety (SIGKILL mid-upload, restart on the same
 * DATA_DIR), graceful shutdown (SIGTERM lets an upload in flight finish), and
 * configuration errors that stop start-up with the variable's name.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { MAIN, spawnServer, type ServerProcess } from './helpers/process.js';
import { eventually } from './helpers/eventually.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-process-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/**
 * Starts a raw PUT and sends `bytes` of its declared `total`, then leaves it hanging.
 * Its connection is not kept alive (agent: false): a server shutting down waits for
 * a kept-alive connection to time out (5 s), which is not what these tests are about.
 */
function startSlowPut(server: ServerProcess, pathname: string, apiKey: string, total: number, bytes: Buffer) {
  const { hostname, port } = new URL(server.url);
  const request = http.request({
    hostname,
    port,
    path: pathname,
    method: 'PUT',
    agent: false,
    headers: { 'x-api-key': apiKey, 'content-length': String(total) },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    request.on('error', reject);
  });
  request.write(bytes);
  return { request, response };
}

async function filesOnDisk(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('crash safety', () => {
  it('a process killed mid-upload leaves nothing partial, the old version whole and the counts right', async () => {
    const env = { DATA_DIR: dataDir };
    let server = await spawnServer(env);
    const user: TestUser = await signUp(server.url);
    const bucketRes = await fetch(`${server.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
      body: '{"name":"crash"}',
    });
    const bucket = (await json(bucketRes)).data.id;
    const original = randomBytes(100_000);
    const put = await fetch(`${server.url}/api/v1/buckets/${bucket}/files/keep.bin`, { method: 'PUT', headers: { 'x-api-key': user.apiKey }, body: original });
    expect(put.status).toBe(201);

    // Two uploads in flight: a replacement of keep.bin and a new file, each half sent.
    const replacing = startSlowPut(server, `/api/v1/buckets/${bucket}/files/keep.bin`, user.apiKey, 8_000_000, randomBytes(4_000_000));
    const adding = startSlowPut(server, `/api/v1/buckets/${bucket}/files/new.bin`, user.apiKey, 8_000_000, randomBytes(4_000_000));
    replacing.response.catch(() => {});
    adding.response.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    server.child.kill('SIGKILL');
    await server.exited;
    replacing.request.destroy();
    adding.request.destroy();

    server = await spawnServer(env);
    try {
      const headers = { 'x-api-key': user.apiKey };
      const kept = Buffer.from(await (await fetch(`${server.url}/api/v1/buckets/${bucket}/files/keep.bin`, { headers })).arrayBuffer());
      expect(kept.equals(original)).toBe(true);
      expect((await fetch(`${server.url}/api/v1/buckets/${bucket}/files/new.bin`, { headers })).status).toBe(404);
      const list = await json(await fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { headers }));
      expect(list.data.map((o: { filename: string; size: number }) => [o.filename, o.size])).toEqual([['keep.bin', 100_000]]);
      const info = (await json(await fetch(`${server.url}/api/v1/buckets/${bucket}`, { headers }))).data;
      expect(info).toMatchObject({ object_count: 1, total_bytes: 100_000 });
      const me = (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
      expect(me.storage_used_bytes).toBe(100_000);
      // On disk: exactly the one live blob; no temporary or partial files.
      const blobs = await filesOnDisk(path.join(dataDir, 'blobs'));
      expect(blobs).toHaveLength(1);
      expect(blobs[0]).toContain(list.data[0].storage_name);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});

describe('graceful shutdown', () => {
  it('SIGTERM lets an upload in flight finish, then the process exits 0', async () => {
    const graceful = await mkdtemp(path.join(os.tmpdir(), 'pail-graceful-'));
    const server = await spawnServer({ DATA_DIR: graceful });
    const user = await signUp(server.url);
    const bucketRes = await fetch(`${server.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
      body: '{"name":"graceful"}',
    });
    const bucket = (await json(bucketRes)).data.id;
    const first = randomBytes(1_000_000);
    const second = randomBytes(1_000_000);
    const upload = startSlowPut(server, `/api/v1/buckets/${bucket}/files/late.bin`, user.apiKey, 2_000_000, first);
    // In flight when the signal comes: the server is writing its body to a temporary file.
    const tmpDir = path.join(graceful, 'blobs', '.tmp');
    await eventually(async () => (await readdir(tmpDir).catch(() => [])).length > 0, 10_000, 'the upload in flight');
    server.child.kill('SIGTERM');
    // The rest is sent once the server is shutting down: it takes no new connection (or answers 503 on one it had).
    await eventually(
      () =>
        fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
          (response) => response.status === 503,
          () => true,
        ),
      10_000,
      'the server to stop taking requests',
    );
    upload.request.end(second);
    const result = await upload.response;
    expect(result.status).toBe(201);
    expect(JSON.parse(result.body)).toEqual({ data: { filename: 'late.bin', size: 2_000_000, updated: false } });
    expect(await server.exited).toBe(0);
  });
});

/** Runs the entry point to its end (at most 15 s): its exit code and what it wrote to stderr. */
function startUp(env: NodeJS.ProcessEnv): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 15_000 });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

// Each case a process of its own, started side by side: each waits mostly on Node's start-up.
describe('configuration', () => {
  it.concurrent.for([
    [{ PORT: 'abc' }, /PORT/],
    [{ PLAN_FREE_STORAGE_BYTES: '-5' }, /PLAN_FREE_STORAGE_BYTES/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ SIGNUP: 'maybe' }, /SIGNUP/],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9' }, /S3_BUCKET/],
    [{ SESSION_SECRET: 'short' }, /SESSION_SECRET/],
  ] as const)('%j stops start-up with a message naming the variable', async ([env, pattern], { expect }) => {
    const result = await startUp({ ...process.env, DATA_DIR: dataDir, ...env });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(pattern);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});
