/**
 * Large downloads, byte for byte. On the filesystem store a download piped
 * into the response refills the same two read buffers (file-read-stream.ts);
 * these tests would see it if a buffer were refilled while the response still
 * held its bytes: a client that stalls keeps the last chunk pending in the
 * server's socket while the next read runs (refilling that chunk's buffer
 * instead of the other one fails two of them).
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;
let fileUrl: string;
// Several 1 MiB reads and a ragged end, so every read buffer is refilled more than once.
const bytes = randomBytes(24 * 1024 * 1024 + 4321);
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server.url);
  const created = await fetch(`${server.url}/api/v1/buckets`, {
    method: 'POST',
    headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'large-downloads' }),
  });
  const bucket = (await json(created)).data.id;
  fileUrl = `${server.url}/api/v1/buckets/${bucket}/files/big.bin`;
  const uploaded = await fetch(fileUrl, { method: 'PUT', headers: { 'x-api-key': user.apiKey }, body: bytes });
  expect(uploaded.status).toBe(201);
});
afterAll(() => server.close());

/**
 * GET over a raw socket. `stallMs` > 0: the client reads nothing for that
 * long at first and again after every MiB, so the kernel's buffers fill and
 * the server's writes wait on the client (as with a slow network).
 */
function download(headers: Record<string, string>, stallMs: number): Promise<{ status: number; body: Buffer }> {
  const url = new URL(fileUrl);
  const head = [
    `GET ${url.pathname} HTTP/1.1`,
    `host: ${url.host}`,
    `x-api-key: ${user.apiKey}`,
    'connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(`${head.join('\r\n')}\r\n\r\n`));
    const chunks: Buffer[] = [];
    let received = 0;
    let nextStall = 0;
    const stall = () => {
      socket.pause();
      setTimeout(() => socket.resume(), stallMs);
    };
    if (stallMs > 0) stall();
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (stallMs > 0 && received >= nextStall) {
        nextStall = received + 1024 * 1024;
        stall();
      }
    });
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const status = Number(all.subarray(0, split).toString('latin1').split(' ')[1]);
      resolve({ status, body: all.subarray(split + 4) });
    });
    socket.on('error', reject);
  });
}

describe('large downloads', () => {
  it('arrive whole for a client that reads at once', async () => {
    const response = await fetch(fileUrl, { headers: { 'x-api-key': user.apiKey } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.length).toBe(bytes.length);
    expect(sha256(body)).toBe(sha256(bytes));
  });

  it('arrive whole for a client that keeps stopping to read', async () => {
    const { status, body } = await download({}, 30);
    expect(status).toBe(200);
    expect(body.length).toBe(bytes.length);
    expect(sha256(body)).toBe(sha256(bytes));
  });

  it('serve a range across read boundaries, also to a slow client', async () => {
    const start = 1024 * 1024 - 7;
    const end = 4 * 1024 * 1024 + 9;
    for (const stallMs of [0, 30]) {
      const { status, body } = await download({ range: `bytes=${start}-${end}` }, stallMs);
      expect(status).toBe(206);
      expect(body.equals(bytes.subarray(start, end + 1))).toBe(true);
    }
  });

  it('serve many downloads at once, each whole', async () => {
    const results = await Promise.all([0, 5, 0, 20].map((stallMs) => download({}, stallMs)));
    for (const { status, body } of results) {
      expect(status).toBe(200);
      expect(sha256(body)).toBe(sha256(bytes));
    }
  });
});
