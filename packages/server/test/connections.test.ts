/**
 * Slow and greedy clients, with real sockets: stalled connections are closed
 * (IDLE_TIMEOUT_SECONDS, HEADERS_TIMEOUT_SECONDS), one address cannot hold
 * more than MAX_CONNECTIONS_PER_IP, and an upload whose bytes keep moving is
 * never cut.
 */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;
let port: number;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { IDLE_TIMEOUT_SECONDS: '1', HEADERS_TIMEOUT_SECONDS: '1', MAX_CONNECTIONS_PER_IP: '50' } });
  port = Number(new URL(server.url).port);
  user = await signUp(server.url);
});
afterAll(() => server.close());

/** A socket from `localAddress` that sends the start of a request and then nothing. */
function stalled(localAddress: string, head = 'GET /healthz HTTP/1.1\r\nHost: pail\r\n', toPort = port): Promise<{ socket: Socket; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: toPort, localAddress }, () => {
      socket.write(head);
      resolve({ socket, closed });
      // Read what the server may answer (a 408 for late headers), as a real client does: a socket whose bytes sit unread never sees the server's close.
      socket.resume();
    });
    const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now())));
    socket.on('error', () => {});
    socket.once('error', reject);
  });
}

async function newBucket(): Promise<number> {
  const response = await fetch(`${server.url}/api/v1/buckets`, {
    method: 'POST',
    headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `slow-${Date.now()}` }),
  });
  return (await json(response)).data.id;
}

describe('slow clients', () => {
  it('300 stalled sockets from one address: the rest are served at once, and the stalled ones are closed', async () => {
    const sockets = await Promise.all(Array.from({ length: 300 }, () => stalled('127.0.0.8')));
    const started = Date.now();
    const response = await fetch(`${server.url}/healthz`);
    const servedIn = Date.now() - started;
    expect(response.status).toBe(200);
    expect(servedIn).toBeLessThan(1000);
    // Past the cap, connections were closed at once; the 50 it kept are closed once their headers are late.
    const closedAt = await Promise.all(sockets.map((s) => s.closed));
    const waited = Math.max(...closedAt) - started;
    expect(waited).toBeLessThan(5000);
    console.log(`[connections] 300 stalled sockets: a normal request took ${servedIn} ms; all stalled sockets closed ${waited} ms later`);
  });

  it('a body that stops moving is cut after the idle timeout, and nothing is stored', async () => {
    const bucket = await newBucket();
    const { closed } = await stalled(
      '127.0.0.9',
      `PUT /api/v1/buckets/${bucket}/files/stalled.bin HTTP/1.1\r\nHost: pail\r\nx-api-key: ${user.apiKey}\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(1000)}`,
    );
    const started = Date.now();
    const closedAt = await closed;
    expect(closedAt - started).toBeLessThan(4000);
    const listed = await json(await fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { headers: { 'x-api-key': user.apiKey } }));
    expect(listed.data).toEqual([]);
  });

  it('an upload whose bytes keep moving is never cut, however long it takes', async () => {
    const bucket = await newBucket();
    const chunk = Buffer.alloc(2048, 7);
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        `${server.url}/api/v1/buckets/${bucket}/files/trickle.bin`,
        { method: 'PUT', headers: { 'x-api-key': user.apiKey, 'content-type': 'application/octet-stream' } },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (text: string) => (body += text));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      let sent = 0;
      // 12 pieces, 400 ms apart: 4.4 s in all, four times the idle timeout.
      const timer = setInterval(() => {
        request.write(chunk);
        if (++sent === 12) {
          clearInterval(timer);
          request.end();
        }
      }, 400);
    });
    expect(result.status).toBe(201);
    expect(JSON.parse(result.body).data).toEqual({ filename: 'trickle.bin', size: 12 * 2048, updated: false });
  });

  it('the S3 listener has the same guard: stalled sockets past the cap closed at once, the rest after the idle timeout', async () => {
    const s3Port = Number(new URL(server.s3Url!).port);
    // One after another, so the 10 past the cap of 50 are known, and judged by order rather than by the clock.
    const sockets: { closed: Promise<number> }[] = [];
    for (let i = 0; i < 60; i++) sockets.push(await stalled('127.0.0.10', 'GET /some-bucket HTTP/1.1\r\nHost: pail\r\n', s3Port));
    const response = await fetch(`${server.s3Url}/`);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('<Code>AccessDenied</Code>');
    const closedAt = await Promise.all(sockets.map((s) => s.closed));
    const kept = closedAt.slice(0, 50);
    const refused = closedAt.slice(50);
    // Those past the cap were closed on arrival, before the header timeout closed any of those kept.
    expect(Math.max(...refused)).toBeLessThanOrEqual(Math.min(...kept));
  });
});
