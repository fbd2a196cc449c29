/**
 * Crash safety through the S3 API, as process.test.ts checks it on the Pail
 * API: a server SIGKILLed while PutObject bodies are half sent keeps what it
 * acknowledged whole, stores nothing of the cut uploads, and counts right.
 */
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { spawnServer, type ServerProcess } from './helpers/process.js';
import { freePort } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-s3-crash-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

function s3Client(endpoint: string, user: TestUser): S3Client {
  // The presigned PUTs below carry no body checksum (the presigner would sign the CRC32 of an empty body).
  return sdkClient(endpoint, user, { requestChecksumCalculation: 'WHEN_REQUIRED' });
}

/** Sends `bytes` of a declared `total` to a presigned PUT url, then leaves the request hanging. */
function startSlowPut(url: string, total: number, bytes: Buffer) {
  const request = http.request(url, { method: 'PUT', headers: { 'content-length': String(total) } });
  request.on('error', () => {});
  request.on('response', (response) => response.resume());
  request.write(bytes);
  return request;
}

async function filesOnDisk(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('S3 crash safety', () => {
  it('a process killed mid-PutObject keeps the acknowledged object whole, stores nothing of the cut ones, counts right', async () => {
    const s3Port = String(await freePort());
    const env = { DATA_DIR: dataDir, S3_API_PORT: s3Port };
    const endpoint = `http://127.0.0.1:${s3Port}`;
    let server: ServerProcess = await spawnServer(env);
    const user = await signUp(server.url);
    let s3 = s3Client(endpoint, user);
    await s3.send(new CreateBucketCommand({ Bucket: 'crash' }));
    const original = randomBytes(200_000);
    await s3.send(new PutObjectCommand({ Bucket: 'crash', Key: 'docs/keep.bin', Body: original }));

    // A replacement of the acknowledged object and a new object, each half sent when the process dies.
    const presignedPut = (key: string) => getSignedUrl(s3, new PutObjectCommand({ Bucket: 'crash', Key: key }), { expiresIn: 600 });
    const replacing = startSlowPut(await presignedPut('docs/keep.bin'), 8_000_000, randomBytes(4_000_000));
    const adding = startSlowPut(await presignedPut('docs/new.bin'), 8_000_000, randomBytes(4_000_000));
    await new Promise((resolve) => setTimeout(resolve, 500));
    server.child.kill('SIGKILL');
    await server.exited;
    replacing.destroy();
    adding.destroy();

    server = await spawnServer(env);
    s3 = s3Client(endpoint, user);
    try {
      const kept = await s3.send(new GetObjectCommand({ Bucket: 'crash', Key: 'docs/keep.bin' }));
      expect(Buffer.from(await kept.Body!.transformToByteArray()).equals(original)).toBe(true);
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'crash' }));
      expect(listed.Contents?.map((o) => [o.Key, o.Size])).toEqual([['docs/keep.bin', 200_000]]);

      const me = (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
      expect(me.storage_used_bytes).toBe(200_000);
      const buckets = (await json(await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } }))).data as {
        name: string;
        object_count: number;
        total_bytes: number;
      }[];
      expect(buckets.find((b) => b.name === 'crash')).toMatchObject({ object_count: 1, total_bytes: 200_000 });
      // On disk: the one live blob, no temporary or partial file.
      expect(await filesOnDisk(path.join(dataDir, 'blobs'))).toHaveLength(1);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
