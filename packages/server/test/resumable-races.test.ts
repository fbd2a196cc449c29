/**
 * One writer per resumable upload (issue 33, findings 1, 3 and 11): PATCHes
 * whose connections are cut at random, PATCHes that overlap at one offset,
 * and a cut followed at once by a resume in smaller pieces. The server
 * survives each, the upload finishes from the offset HEAD reports, the file
 * is exactly one request's bytes and its owner is charged exactly its size.
 */
import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import * as tus from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendKind } from './helpers/backends.js';
import { blake3Hex } from './helpers/blake3.js';
import { json, type devApi, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createUpload, patchUpload, sha256, TUS, tusBucket, untilWriting } from './helpers/tus.js';

const KiB = 1024;
const MiB = 1024 * KiB;

let server: TestServer;

beforeAll(async () => {
  // The cap of finding 3: a 1,000,000-byte upload fits once, never twice.
  server = await startTestServer({ env: { PLAN_FREE_STORAGE_BYTES: String(1 * MiB) } });
});
afterAll(() => server?.close());

const setUp = () => tusBucket(server, 'race');

async function offsetOf(url: string, user: TestUser): Promise<number> {
  const response = await fetch(url, { method: 'HEAD', headers: { ...TUS, 'x-api-key': user.apiKey } });
  expect(response.status).toBe(200);
  return Number(response.headers.get('upload-offset'));
}

/** A PATCH on a raw socket: its head, `send` bytes of a body declared `declared` long, the socket destroyed `cutAfterMs` later. */
function cutPatch(url: string, user: TestUser, offset: number, body: Buffer, declared: number, cutAfterMs: number): Promise<void> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(
        `PATCH ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nTus-Resumable: 1.0.0\r\nX-Api-Key: ${user.apiKey}\r\n` +
          `Upload-Offset: ${offset}\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      socket.write(body);
      setTimeout(() => socket.destroy(), cutAfterMs);
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
}

/** A PATCH that sends `sent` and then goes quiet, its connection left open (a network gone away); settles with its status or 'cut'. */
function quietPatch(url: string, user: TestUser, offset: number, sent: Buffer, declared: number) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const answer = fetch(url, {
    method: 'PATCH',
    headers: {
      ...TUS,
      'x-api-key': user.apiKey,
      'upload-offset': String(offset),
      'content-type': 'application/offset+octet-stream',
      'content-length': String(declared),
    },
    body: new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
        c.enqueue(sent);
      },
    }),
    duplex: 'half',
  } as RequestInit).then(
    (r) => r.status,
    () => 'cut' as const,
  );
  // Bounded, so that a server that never ends it fails the test instead of hanging it.
  const settled = Promise.race([answer, new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), 5000))]);
  return { settled, close: () => controller.error(new Error('gone')) };
}

async function usedBytes(user: TestUser): Promise<number> {
  return (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;
}

/** The file as downloaded, checked against its ETag (the content's BLAKE3). */
async function download(dev: ReturnType<typeof devApi>, bucket: number, name: string): Promise<Buffer> {
  const response = await dev(`/${bucket}/files/${name}`);
  expect(response.status).toBe(200);
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(response.headers.get('etag')).toBe(`"${await blake3Hex(bytes)}"`);
  return bytes;
}

/** Bytes in the filesystem blob store, staging included (embedded project only). */
async function bytesOnDisk(): Promise<number> {
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) total += (await stat(full)).size;
    }
  };
  await walk(path.join(server.dataDir, 'blobs'));
  return total;
}

const embedded = backendKind() === 'embedded';

describe('one writer per resumable upload', () => {
  it('PATCHes cut 0-3 ms after 0-128 KiB, thirty times: the server lives, HEAD gives an offset to resume from, the file is whole', async () => {
    const { user, dev, bucket, endpoint } = await setUp();
    const body = randomBytes(1_000_000);
    const url = await createUpload(endpoint, user, body.length, 'cut.bin');
    for (let round = 0; round < 30; round++) {
      const offset = await offsetOf(url, user);
      // Never the last byte: the upload stays open for the resume below.
      const send = Math.min(Math.floor(Math.random() * 128 * KiB), body.length - 1 - offset);
      await cutPatch(url, user, offset, body.subarray(offset, offset + send), body.length - offset, Math.floor(Math.random() * 4));
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const offset = await offsetOf(url, user);
    const last = await patchUpload(url, user, offset, body.subarray(offset));
    expect(last.status).toBe(204);
    expect(last.headers.get('upload-offset')).toBe(String(body.length));
    expect(sha256(await download(dev, bucket.id, 'cut.bin'))).toBe(sha256(body));
    expect(await usedBytes(user)).toBe(body.length);
  }, 60_000);

  it('ten PATCHes at offset 0 at once under a 1 MiB cap: at most one succeeds, the file is one request’s bytes, counted once', async () => {
    const { user, dev, bucket, endpoint } = await setUp();
    const body = randomBytes(1_000_000);
    const before = embedded ? await bytesOnDisk() : 0;
    const url = await createUpload(endpoint, user, body.length, 'ten.bin');
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        patchUpload(url, user, 0, body).then(
          (r) => r.status,
          () => 'cut' as const,
        ),
      ),
    );
    expect(answers.filter((status) => status === 204).length).toBeLessThanOrEqual(1);
    expect(answers.every((status) => status === 204 || status === 409 || status === 'cut')).toBe(true);
    if (!answers.includes(204)) {
      const offset = await offsetOf(url, user);
      expect((await patchUpload(url, user, offset, body.subarray(offset))).status).toBe(204);
    }
    expect(sha256(await download(dev, bucket.id, 'ten.bin'))).toBe(sha256(body));
    expect(await usedBytes(user)).toBe(body.length);
    if (embedded) expect((await bytesOnDisk()) - before).toBe(body.length);
  }, 60_000);

  it('two writers of different bytes, the second while the first is sending: the file is one of them, its ETag its bytes', async () => {
    const { user, dev, bucket, endpoint } = await setUp();
    const first = randomBytes(1_000_000);
    const second = randomBytes(1_000_000);
    const before = embedded ? await bytesOnDisk() : 0;
    const url = await createUpload(endpoint, user, first.length, 'two.bin');
    // The first sends half its bytes, then waits: the second comes in meanwhile.
    const slow = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(first.subarray(0, 500_000));
        await new Promise((resolve) => setTimeout(resolve, 300));
        controller.enqueue(first.subarray(500_000));
        controller.close();
      },
    });
    const firstAnswer = fetch(url, {
      method: 'PATCH',
      headers: {
        ...TUS,
        'x-api-key': user.apiKey,
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
        'content-length': String(first.length),
      },
      body: slow,
      duplex: 'half',
    } as RequestInit).then(
      (r) => r.status,
      () => 'cut' as const,
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    const secondAnswer = await patchUpload(url, user, 0, second).then(
      (r) => r.status,
      () => 'cut' as const,
    );
    const answers = [await firstAnswer, secondAnswer];
    expect(answers.filter((status) => status === 204).length).toBeLessThanOrEqual(1);
    const finished = await fetch(url, { method: 'HEAD', headers: { ...TUS, 'x-api-key': user.apiKey } });
    if (finished.status === 200) {
      // Unfinished: what is kept is the first's (the second came after it began).
      const offset = Number(finished.headers.get('upload-offset'));
      expect((await patchUpload(url, user, offset, first.subarray(offset))).status).toBe(204);
    }
    const stored = await download(dev, bucket.id, 'two.bin');
    expect([sha256(first), sha256(second)]).toContain(sha256(stored));
    expect(await usedBytes(user)).toBe(first.length);
    if (embedded) expect((await bytesOnDisk()) - before).toBe(first.length);
  }, 60_000);

  it('a PATCH cut mid-body, resumed at once by tus-js-client in 64 KiB pieces: no 409, no 500, the file is whole', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const { user, dev, bucket, endpoint } = await setUp();
      const body = randomBytes(900_000);
      const name = `resumed-${attempt}.bin`;
      const url = await createUpload(endpoint, user, body.length, name);
      // The cut request had sent far more than one of the resumed pieces.
      await cutPatch(url, user, 0, body.subarray(0, 600_000), body.length, 0);
      await new Promise<void>((resolve, reject) => {
        const upload = new tus.Upload(body, {
          uploadUrl: url,
          chunkSize: 64 * KiB,
          retryDelays: [],
          headers: { 'x-api-key': user.apiKey },
          onSuccess: () => resolve(),
          onError: reject,
        });
        upload.start();
      });
      expect(sha256(await download(dev, bucket.id, name))).toBe(sha256(body));
      expect(await usedBytes(user)).toBe(body.length);
    }
  }, 60_000);

  it('a PATCH gone quiet is ended by the HEAD of a client resuming: HEAD reports the bytes it kept, and the upload finishes from there', async () => {
    const { user, dev, bucket, endpoint } = await setUp();
    const body = randomBytes(1_000_000);
    const url = await createUpload(endpoint, user, body.length, 'quiet.bin');
    const quiet = quietPatch(url, user, 0, body.subarray(0, 400_000), body.length);
    // Gone quiet once the server writes what it sent (on a loaded machine that may take a while to begin).
    await untilWriting(server, url.split('/').pop()!);
    try {
      expect(await offsetOf(url, user)).toBe(400_000);
      expect(await quiet.settled).toBe('cut');
    } finally {
      quiet.close();
    }
    expect((await patchUpload(url, user, 400_000, body.subarray(400_000))).status).toBe(204);
    expect(sha256(await download(dev, bucket.id, 'quiet.bin'))).toBe(sha256(body));
    expect(await usedBytes(user)).toBe(body.length);
  });

  it('DELETE ends a PATCH gone quiet: the upload is gone, its bytes too, and nothing is charged', async () => {
    const { user, endpoint } = await setUp();
    const body = randomBytes(1_000_000);
    const before = embedded ? await bytesOnDisk() : 0;
    const url = await createUpload(endpoint, user, body.length, 'ended.bin');
    const quiet = quietPatch(url, user, 0, body.subarray(0, 400_000), body.length);
    // Gone quiet once the server writes what it sent (on a loaded machine that may take a while to begin).
    await untilWriting(server, url.split('/').pop()!);
    try {
      expect((await fetch(url, { method: 'DELETE', headers: { ...TUS, 'x-api-key': user.apiKey } })).status).toBe(204);
      expect(await quiet.settled).toBe('cut');
    } finally {
      quiet.close();
    }
    expect((await fetch(url, { method: 'HEAD', headers: { ...TUS, 'x-api-key': user.apiKey } })).status).toBe(404);
    expect(await usedBytes(user)).toBe(0);
    // The whole cap is free again: a file of its size fits.
    const again = await createUpload(endpoint, user, body.length, 'again.bin');
    expect((await patchUpload(again, user, 0, body)).status).toBe(204);
    if (embedded) expect((await bytesOnDisk()) - before).toBe(body.length);
  });
});
