/**
 * Rate limits live in Redis when REDIS_URL is set. When Redis cannot be
 * reached, requests that need a budget get a quick 503 {error} (Pail fails
 * closed: without the shared counter it cannot enforce the plan's budget), the
 * process stays up, and everything that needs no budget keeps working. Every
 * API request has a budget now (the Developer API's plan, the Client API's
 * CLIENT_RATE_LIMIT, sign-ups per address), so users are made here without HTTP.
 * Needs PAIL_TEST_BACKEND=scaled (the scaled project).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendKind } from '../helpers/backends.js';
import { createApiKey } from '../../src/domain/api-keys.js';
import { createSession } from '../../src/domain/sessions.js';
import { createUser } from '../../src/domain/users.js';
import { json } from '../helpers/client.js';
import { freePort, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let user: { apiKey: string; token: string };
let blackHole: Server;

beforeAll(async () => {
  if (backendKind() !== 'scaled') throw new Error('redis-down.test.ts needs PAIL_TEST_BACKEND=scaled (run by the scaled project)');
  // Nothing listens on this port: connections are refused at once.
  const closedPort = await freePort();
  server = await startTestServer({ env: { REDIS_URL: `redis://127.0.0.1:${closedPort}` } });
  user = await userWithoutHttp(server);
});

afterAll(async () => {
  await server?.close();
  await new Promise<void>((resolve) => (blackHole ? blackHole.close(() => resolve()) : resolve()));
});

/** A user with a key and a session, made through the domain functions (sign-up itself needs Redis). */
async function userWithoutHttp(target: TestServer): Promise<{ apiKey: string; token: string }> {
  const { db, tokens, s3Credentials } = target.app.pail;
  const row = await createUser(db, { email: `redis-down-${randomUUID()}@example.com`, password: 'correct horse' });
  const key = await createApiKey(db, row.id, { name: 'test' }, 10, s3Credentials);
  return { apiKey: key.key, token: await createSession(db, tokens, row.id) };
}

async function timed(request: Promise<Response>): Promise<{ response: Response; ms: number }> {
  const started = Date.now();
  const response = await request;
  return { response, ms: Date.now() - started };
}

describe('Redis unreachable', () => {
  it('Developer API requests get 503 {error} quickly, again and again, and the server stays up', async () => {
    for (let i = 0; i < 5; i++) {
      const { response, ms } = await timed(fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } }));
      expect(response.status).toBe(503);
      const body = await json(response);
      expect(typeof body.error).toBe('string');
      expect(body.error).toMatch(/rate limit/i);
      expect(ms).toBeLessThan(5000);
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('anonymous downloads (per-IP budget) and session requests (the Client API budget) get 503 too; probes still work', async () => {
    const anonymous = await timed(fetch(`${server.url}/api/v1/buckets/1/files/x.txt`));
    expect(anonymous.response.status).toBe(503);
    expect(typeof (await json(anonymous.response)).error).toBe('string');
    expect(anonymous.ms).toBeLessThan(5000);

    const me = await timed(fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.response.status).toBe(503);
    expect(me.ms).toBeLessThan(5000);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('a Redis that stops answering after the connection is up does not hang requests either', async () => {
    // Answers what the client sends while connecting (CLIENT SETINFO, the INFO ready check), so
    // the client is ready; then swallows every command: like a Redis that stalls, or a network
    // that starts dropping packets, mid-connection.
    const sockets = new Set<Socket>();
    const stalls = createServer((socket) => {
      sockets.add(socket);
      socket.on('data', (data: Buffer) => {
        for (const [, command] of data
          .toString()
          .toLowerCase()
          .matchAll(/\r\n(client|info)\r\n/g)) {
          socket.write(command === 'client' ? '+OK\r\n' : '$9\r\nloading:0\r\n');
        }
      });
    });
    await new Promise<void>((resolve) => stalls.listen(0, '127.0.0.1', resolve));
    const address = stalls.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const stalled = await startTestServer({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
    try {
      const other = await userWithoutHttp(stalled);
      await new Promise((resolve) => setTimeout(resolve, 300)); // let the client become ready
      const { response, ms } = await timed(
        fetch(`${stalled.url}/api/v1/buckets`, { headers: { 'x-api-key': other.apiKey }, signal: AbortSignal.timeout(20_000) }),
      );
      expect(response.status).toBe(503);
      expect(typeof (await json(response)).error).toBe('string');
      expect(ms).toBeLessThan(10_000);
    } finally {
      await stalled.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => stalls.close(() => resolve()));
    }
  });

  it('a Redis that accepts connections but never answers does not hang requests either', async () => {
    // A TCP server that swallows everything: ioredis connects, then waits for replies that never come.
    blackHole = createServer((socket) => socket.on('data', () => {}));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const address = blackHole.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const stalled = await startTestServer({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
    try {
      const other = await userWithoutHttp(stalled);
      const { response, ms } = await timed(
        fetch(`${stalled.url}/api/v1/buckets`, { headers: { 'x-api-key': other.apiKey }, signal: AbortSignal.timeout(20_000) }),
      );
      expect(response.status).toBe(503);
      expect(typeof (await json(response)).error).toBe('string');
      expect(ms).toBeLessThan(10_000);
    } finally {
      await stalled.close();
    }
  });
});
