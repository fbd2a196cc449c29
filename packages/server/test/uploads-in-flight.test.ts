/**
 * Uploads in flight hold their bytes against the cap: what cannot fit beside
 * them is refused at once, before a byte is stored; a body of unknown length
 * holds more as it streams; a user has at most MAX_UPLOADS_PER_USER large
 * uploads running. Real sockets that send part of a body and stall.
 */
import { readdir } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendKind } from './helpers/backends.js';
import { json, signUp, type TestUser } from './helpers/client.js';
import { readBooks } from './helpers/ledger.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/eventually.js';

const CAP = 2_000_000;
let server: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer({ env: { PLAN_FREE_STORAGE_BYTES: String(CAP), MAX_UPLOADS_PER_USER: '2' } });
  port = Number(new URL(server.url).port);
});
afterAll(() => server.close());

async function newBucket(user: TestUser, on = server): Promise<number> {
  const response = await fetch(`${on.url}/api/v1/buckets`, {
    method: 'POST',
    headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `inflight-${Math.random().toString(36).slice(2, 10)}` }),
  });
  return (await json(response)).data.id;
}

/** A PUT that declares `length`, sends `sent` bytes of it and stalls; resolves with the status line if the server answers. */
function stalledPut(user: TestUser, bucket: number, name: string, length: number, sent: number, toPort = port) {
  const socket: Socket = connect({ host: '127.0.0.1', port: toPort });
  let received = '';
  const answered = new Promise<string>((resolve) => {
    socket.on('data', (data: Buffer) => {
      received += data.toString();
      if (received.includes('\r\n\r\n')) resolve(received.split('\r\n')[0] ?? '');
    });
    socket.on('close', () => resolve(received.split('\r\n')[0] ?? 'closed'));
  });
  socket.on('error', () => {});
  socket.write(`PUT /api/v1/buckets/${bucket}/files/${name} HTTP/1.1\r\nHost: pail\r\nx-api-key: ${user.apiKey}\r\nContent-Length: ${length}\r\n\r\n`);
  socket.write(Buffer.alloc(sent, 1));
  return { socket, answered };
}

/** Waits (up to 10 s: a loaded machine reads heads and closed sockets late) until the user's uploads in flight hold `bytes`. */
async function untilReserved(user: TestUser, bytes: number, what: string, on = server): Promise<void> {
  await eventually(async () => (await readBooks(on, user.id)).held.reserved === bytes, 10_000, what);
}

const tmpFiles = async () => (backendKind() === 'scaled' ? [] : readdir(path.join(server.dataDir, 'blobs', '.tmp')));

describe('uploads in flight', () => {
  it('four stalled 1.9 MB uploads under a 2 MB cap: one holds its bytes, the others are refused at once', async () => {
    const user = await signUp(server.url);
    const bucket = await newBucket(user);
    const first = stalledPut(user, bucket, 'a.bin', 1_900_000, 100_000);
    await untilReserved(user, 1_900_000, "the first upload's hold");
    const others = [1, 2, 3].map((i) => stalledPut(user, bucket, `b${i}.bin`, 1_900_000, 100_000));
    const started = Date.now();
    for (const other of others) expect(await other.answered).toBe('HTTP/1.1 409 Conflict');
    // At once: a stalled upload that was let in would be answered only when the idle timeout (30 s) cuts it.
    expect(Date.now() - started).toBeLessThan(5000);
    // Only the one that holds its bytes is being written.
    expect((await tmpFiles()).length).toBeLessThanOrEqual(1);
    // When it ends (here: the client goes away) its bytes are given back.
    first.socket.destroy();
    for (const other of others) other.socket.destroy();
    await untilReserved(user, 0, 'the hold given back');
    const whole = await fetch(`${server.url}/api/v1/buckets/${bucket}/files/whole.bin`, {
      method: 'PUT',
      headers: { 'x-api-key': user.apiKey },
      body: new Uint8Array(1_900_000),
    });
    expect(whole.status).toBe(201);
    const me = await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data.storage_used_bytes).toBe(1_900_000);
  });

  it('a body of unknown length is held as it streams: past the cap it is refused and nothing is kept', async () => {
    const user = await signUp(server.url);
    const bucket = await newBucket(user);
    const chunked = (bytes: number) =>
      fetch(`${server.url}/api/v1/buckets/${bucket}/files/chunked.bin`, {
        method: 'PUT',
        headers: { 'x-api-key': user.apiKey },
        // A stream body: fetch sends it chunked, with no Content-Length.
        body: new ReadableStream({
          start(controller) {
            for (let sent = 0; sent < bytes; sent += 100_000) controller.enqueue(new Uint8Array(Math.min(100_000, bytes - sent)));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
    const over = await chunked(3_000_000);
    expect(over.status).toBe(409);
    expect((await json(over)).error).toMatch(/^Storage limit exceeded/);
    const fits = await chunked(1_500_000);
    expect(fits.status).toBe(201);
    expect((await json(fits)).data.size).toBe(1_500_000);
    const me = await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data.storage_used_bytes).toBe(1_500_000);
  });

  it('MAX_UPLOADS_PER_USER large uploads at a time: one more is refused with 429 while they run', async () => {
    const user = await signUp(server.url);
    const bucket = await newBucket(user);
    const running = [stalledPut(user, bucket, 'r1.bin', 300_000, 100_000), stalledPut(user, bucket, 'r2.bin', 300_000, 100_000)];
    await untilReserved(user, 600_000, 'both uploads running');
    const third = stalledPut(user, bucket, 'r3.bin', 300_000, 100_000);
    expect(await third.answered).toBe('HTTP/1.1 429 Too Many Requests');
    for (const upload of [...running, third]) upload.socket.destroy();
    await untilReserved(user, 0, 'the running uploads ended');
    const after = await fetch(`${server.url}/api/v1/buckets/${bucket}/files/r4.bin`, {
      method: 'PUT',
      headers: { 'x-api-key': user.apiKey },
      body: new Uint8Array(300_000),
    });
    expect(after.status).toBe(201);
  });
});

describe('the default MAX_UPLOADS_PER_USER', () => {
  let defaults: TestServer;

  beforeAll(async () => {
    defaults = await startTestServer();
  });
  afterAll(() => defaults?.close());

  it('is 64: 24 large uploads of one user at once (rclone --transfers 24) all pass', async () => {
    const user = await signUp(defaults.url);
    const bucket = await newBucket(user, defaults);
    const toPort = Number(new URL(defaults.url).port);
    const uploads = Array.from({ length: 24 }, (_, i) => stalledPut(user, bucket, `t${i}.bin`, 200_000, 100_000, toPort));
    // All 24 are in flight at once: each has sent half its body and waits, holding its bytes.
    await untilReserved(user, 24 * 200_000, 'all 24 uploads in flight', defaults);
    for (const upload of uploads) upload.socket.write(Buffer.alloc(100_000, 2));
    const answers = await Promise.all(uploads.map((upload) => upload.answered));
    for (const upload of uploads) upload.socket.destroy();
    expect(answers).toEqual(Array.from({ length: 24 }, () => 'HTTP/1.1 201 Created'));
    expect(defaults.config.maxUploadsPerUser).toBe(64);
  });
});
