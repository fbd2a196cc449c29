/**
 * A resumable upload survives its server: the process is SIGKILLed after
 * some requests were acknowledged (and once in the middle of a request),
 * started again on the same DATA_DIR, and tus-js-client resumes from the
 * offset the server kept, to a whole file counted once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as tus from 'tus-js-client';
import { afterEach, describe, expect, it } from 'vitest';
import { blake3Hex } from './helpers/blake3.js';
import { json, signUp } from './helpers/client.js';
import { spawnServer, type ServerProcess } from './helpers/process.js';

const MiB = 1024 * 1024;
const dataDirs: string[] = [];
const servers: ServerProcess[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
  await Promise.all(dataDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

async function start(dataDir: string): Promise<ServerProcess> {
  const server = await spawnServer({ DATA_DIR: dataDir });
  servers.push(server);
  return server;
}

async function kill(server: ServerProcess): Promise<void> {
  server.child.kill('SIGKILL');
  await server.exited;
}

describe('a resumable upload across a server crash', () => {
  it('SIGKILL after two acknowledged pieces and again mid-piece: resumed on the restarted server, the file is whole and counted once', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-tus-crash-'));
    dataDirs.push(dataDir);
    let server = await start(dataDir);
    const user = await signUp(server.url);
    const created = await fetch(`${server.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'crash' }),
    });
    const bucket = (await json(created)).data.id as number;
    const endpoint = `${server.url}/api/v1/buckets/${bucket}/uploads`;
    const body = randomBytes(6 * MiB);

    // Two 1 MiB pieces acknowledged, then the server dies.
    let acknowledged = 0;
    let uploadUrl = '';
    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(body, {
        endpoint,
        chunkSize: MiB,
        retryDelays: [],
        headers: { 'x-api-key': user.apiKey },
        metadata: { filename: 'big.bin' },
        onChunkComplete: (_size, sent) => {
          acknowledged = sent;
          uploadUrl = upload.url!;
          if (sent >= 2 * MiB) {
            void upload.abort().then(resolve, reject);
          }
        },
        onError: reject,
      });
      upload.start();
    });
    expect(acknowledged).toBe(2 * MiB);
    await kill(server);

    // A restarted server listens on another port here: the upload's url moves with it.
    const moved = (url: string) => `${server.url}${new URL(url).pathname}`;
    server = await start(dataDir);
    uploadUrl = moved(uploadUrl);
    const state = await fetch(uploadUrl, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0', 'x-api-key': user.apiKey } });
    expect(state.status).toBe(200);
    expect(state.headers.get('upload-offset')).toBe(String(2 * MiB));

    // Half a piece in flight when it dies again: what arrived before the kill may be kept or not, never half-kept wrongly.
    const partial = fetch(uploadUrl, {
      method: 'PATCH',
      headers: { 'tus-resumable': '1.0.0', 'x-api-key': user.apiKey, 'upload-offset': String(2 * MiB), 'content-type': 'application/offset+octet-stream' },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(body.subarray(2 * MiB, 2 * MiB + 512 * 1024));
        },
      }),
      duplex: 'half',
    } as RequestInit).catch(() => null);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await kill(server);
    await partial;

    server = await start(dataDir);
    uploadUrl = moved(uploadUrl);
    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(body, {
        endpoint: moved(endpoint),
        uploadUrl,
        chunkSize: MiB,
        retryDelays: [],
        headers: { 'x-api-key': user.apiKey },
        metadata: { filename: 'big.bin' },
        onSuccess: () => resolve(),
        onError: reject,
      });
      upload.start();
    });
    const got = await fetch(`${server.url}/api/v1/buckets/${bucket}/files/big.bin`, { headers: { 'x-api-key': user.apiKey } });
    // Hashed by reading the kept bytes back: this process did not see the first ones arrive.
    expect(got.headers.get('etag')).toBe(`"${await blake3Hex(body)}"`);
    expect(md5(new Uint8Array(await got.arrayBuffer()))).toBe(md5(body));
    const me = await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data.storage_used_bytes).toBe(body.length);
  }, 60_000);
});
