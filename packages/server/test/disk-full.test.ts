/**
 * A full disk: the upload that meets it answers 507 {error}, leaves no partial
 * file and no changed counts, reads go on, and uploads work again once space
 * is freed. The data directory is a small tmpfs mounted by the test (root
 * only); where mounting is not allowed, the suite is skipped with the reason.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const SIZE = '8m';
let mountPoint = '';
let unavailable: string | null = null;
let server: TestServer;
let user: TestUser;
let bucket: number;

beforeAll(async () => {
  mountPoint = await mkdtemp(path.join(os.tmpdir(), 'pail-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE},mode=0700`, 'tmpfs', mountPoint], { stdio: 'pipe' });
  } catch (error) {
    unavailable = `cannot mount a tmpfs here (${(error as Error).message.split('\n')[0]})`;
    console.log(`[disk-full] skipped: ${unavailable}`);
    return;
  }
  server = await startTestServer({ dataDir: path.join(mountPoint, 'data') });
  user = await signUp(server.url);
  const created = await fetch(`${server.url}/api/v1/buckets`, {
    method: 'POST',
    headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'full' }),
  });
  bucket = (await json(created)).data.id;
});

afterAll(async () => {
  await server?.close();
  if (!unavailable) execFileSync('umount', [mountPoint]);
  await rmdir(mountPoint).catch(() => rm(mountPoint, { recursive: true, force: true }));
});

const put = (name: string, bytes: number) =>
  fetch(`${server.url}/api/v1/buckets/${bucket}/files/${name}`, { method: 'PUT', headers: { 'x-api-key': user.apiKey }, body: new Uint8Array(bytes).fill(7) });
const usage = async () =>
  (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;
const tmpFiles = () => readdir(path.join(server.dataDir, 'blobs', '.tmp'));

describe('disk full', () => {
  it('507 {error}, nothing partial, counts unchanged, reads go on; uploads work again once space is freed', async (context) => {
    if (unavailable) return context.skip();
    expect((await put('keep.bin', 300_000)).status).toBe(201);
    const before = await usage();

    // Larger than the whole filesystem: the blob store meets ENOSPC.
    const refused = await put('huge.bin', 12_000_000);
    expect(refused.status).toBe(507);
    expect(await json(refused)).toEqual({
      error: 'Insufficient storage: the server has no disk space left for this upload; try again later',
      code: 'InsufficientStorage',
    });
    expect(await tmpFiles()).toEqual([]);
    expect(await usage()).toBe(before);

    // The disk filled by something else: even a small upload is refused the same way.
    const filler = path.join(mountPoint, 'filler');
    await writeFile(filler, Buffer.alloc(16 * 1024 * 1024)).catch(() => {});
    const small = await put('small.bin', 200_000);
    expect(small.status, await small.clone().text()).toBe(507);
    expect(await tmpFiles()).toEqual([]);
    expect(await usage()).toBe(before);

    // Reads go on.
    const kept = await fetch(`${server.url}/api/v1/buckets/${bucket}/files/keep.bin`, { headers: { 'x-api-key': user.apiKey } });
    expect(kept.status).toBe(200);
    expect((await kept.arrayBuffer()).byteLength).toBe(300_000);
    const listed = await json(await fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { headers: { 'x-api-key': user.apiKey } }));
    expect(listed.data.map((o: { filename: string }) => o.filename)).toEqual(['keep.bin']);

    // Space freed: it recovers by itself.
    await rm(filler);
    expect((await put('small.bin', 200_000)).status).toBe(201);
    expect(await usage()).toBe(before + 200_000);
  });
});
