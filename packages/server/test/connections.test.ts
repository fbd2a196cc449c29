/**
 * Slow and greedy clients, with real sockets: stalled connections are closed
 * (IDLE_TIMEOUT_SECONDS, HEADERS_TIMEOUT_SECONDS), a flood of them from one
 * address leaves room for everyone else, and an upload whose bytes keep
 * moving is never cut. MAX_CONNECTIONS_PER_IP: connections-in-progress.test.ts.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOCKETS_PER_REQUEST } from '../src/http/plugins/connections.js';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
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
    // At once: not queued behind the flood (3 s leaves a loaded machine room; the stalled sockets hold on far longer).
    expect(servedIn).toBeLessThan(3000);
    // Past the cap, connections were closed at once; the 50 it kept are closed once their headers are late.
    const closedAt = await Promise.all(sockets.map((s) => s.closed));
    const waited = Math.max(...closedAt) - started;
    // By the 1 s headers timeout, with a loaded machine's margin: the default one (20 s) would be far later.
    expect(waited).toBeLessThan(10_000);
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
    // By the 1 s idle timeout, with a loaded machine's margin: the default one (30 s) would be far later.
    expect(closedAt - started).toBeLessThan(10_000);
    const listed = await json(await fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { headers: { 'x-api-key': user.apiKey } }));
    expect(listed.data).toEqual([]);
  });

  it('an upload whose bytes keep moving is never cut, however long it takes', async () => {
    // A server of its own with a 3 s idle timeout: writes 400 ms apart stay far inside it even when a loaded machine
    // delays a few of them (against 1 s, a late timer or two could look like a stall).
    const trickling = await startTestServer({ env: { IDLE_TIMEOUT_SECONDS: '3' } });
    try {
      await trickle(trickling);
    } finally {
      await trickling.close();
    }
  }, 60_000);

  async function trickle(on: TestServer): Promise<void> {
    const owner = await signUp(on.url);
    const made = await fetch(`${on.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `trickle-${Date.now()}` }),
    });
    const bucket = (await json(made)).data.id;
    const chunk = Buffer.alloc(2048, 7);
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        `${on.url}/api/v1/buckets/${bucket}/files/trickle.bin`,
        { method: 'PUT', headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/octet-stream' } },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (text: string) => (body += text));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      let sent = 0;
      // 24 pieces, 400 ms apart: 9.2 s in all, three times the idle timeout.
      const timer = setInterval(() => {
        request.write(chunk);
        if (++sent === 24) {
          clearInterval(timer);
          request.end();
        }
      }, 400);
    });
    expect(result.status).toBe(201);
    expect(JSON.parse(result.body).data).toEqual({ filename: 'trickle.bin', size: 24 * 2048, updated: false });
  }

  it('the S3 listener has the same guard: 300 stalled sockets from one address, the rest served at once, the stalled ones closed', async () => {
    const s3Port = Number(new URL(server.s3Url!).port);
    const sockets = await Promise.all(Array.from({ length: 300 }, () => stalled('127.0.0.10', 'GET /some-bucket HTTP/1.1\r\nHost: pail\r\n', s3Port)));
    const started = Date.now();
    const response = await fetch(`${server.s3Url}/`);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('<Code>AccessDenied</Code>');
    // The same bounds as the API listener's, for the same reasons.
    expect(Date.now() - started).toBeLessThan(3000);
    const closedAt = await Promise.all(sockets.map((s) => s.closed));
    expect(Math.max(...closedAt) - started).toBeLessThan(10_000);
  });
});

/**
 * MAX_CONNECTIONS_PER_IP counts requests in progress (as nginx's limit_conn
 * does), not sockets: a client's idle keep-alive pool never meets it, one
 * request past it is answered 503 with Retry-After in the listener's format,
 * and a flood of stalled sockets from one address closes its oldest idle ones.
 */
describe('requests in progress per address (MAX_CONNECTIONS_PER_IP=50)', () => {
  const CAP = 50;
  let busy: TestServer;
  let busyPort: number;
  let owner: TestUser;

  beforeAll(async () => {
    busy = await startTestServer({ s3: true, env: { MAX_CONNECTIONS_PER_IP: String(CAP), IDLE_TIMEOUT_SECONDS: '30', HEADERS_TIMEOUT_SECONDS: '30' } });
    busyPort = Number(new URL(busy.url).port);
    owner = await signUp(busy.url);
  });
  afterAll(() => busy.close());

  /** A GET through `agent`, its status and body, or the error the socket failed with. */
  function get(agent: Agent, path: string): Promise<{ status: number; body: string } | Error> {
    return new Promise((resolve) => {
      const request = httpRequest(`${busy.url}${path}`, { agent }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        response.on('error', resolve);
      });
      request.on('error', resolve);
      request.end();
    });
  }

  /** A request with a body that stays in progress: its headers and 10 bytes of 1000, then nothing; resolves once the server took it. */
  function held(head: string, toPort: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: toPort }, () => {
        socket.write(`${head}Content-Length: 1000\r\nExpect: 100-continue\r\n\r\n`);
      });
      // Node answers 100 Continue as it hands the request on.
      socket.once('data', (data: Buffer) => {
        if (!data.toString().startsWith('HTTP/1.1 100')) return reject(new Error(`not held: ${data.toString()}`));
        socket.write(Buffer.alloc(10, 1));
        resolve(socket);
      });
      socket.on('error', () => {});
      socket.once('close', () => reject(new Error('closed without an answer')));
    });
  }

  /** Fetches until the answer has `status` (the server counts a held request a moment after its 100 Continue). */
  async function fetchUntil(url: string, status: number): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(url);
      if (response.status === status || attempt === 40) return response;
      await response.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('a pool of 100 idle keep-alive sockets and ordinary requests on them and on new ones: every request answered, none reset', async () => {
    // 100 agents of one socket each: a pool of 100 sockets kept open between requests.
    const agents = Array.from({ length: 100 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    try {
      const answers: ({ status: number; body: string } | Error)[] = [];
      for (let round = 0; round < 3; round++) {
        // At most 25 at once, in waves over the whole pool, with fetch's own pool beside them.
        for (let wave = 0; wave < 100; wave += 25) {
          const batch = agents.slice(wave, wave + 25).map((agent) => get(agent, '/healthz'));
          const fetched = Array.from({ length: 5 }, () => fetch(`${busy.url}/healthz`).then(async (r) => ({ status: r.status, body: await r.text() })));
          answers.push(...(await Promise.all([...batch, ...fetched])));
        }
      }
      const failures = answers.filter((answer) => answer instanceof Error || answer.status !== 200);
      expect(failures).toEqual([]);
      expect(answers).toHaveLength(3 * 4 * 30);
    } finally {
      for (const agent of agents) agent.destroy();
    }
  });

  it('one request past the cap is answered 503 {error, code: "SlowDown"} with Retry-After, and is let in once one has finished', async () => {
    const bucket = (await json(await devApi(busy.url, owner)('', { method: 'POST', body: JSON.stringify({ name: `held-${Date.now()}` }) }))).data.id;
    const sockets = await Promise.all(
      Array.from({ length: CAP }, (_, i) =>
        held(`PUT /api/v1/buckets/${bucket}/files/held-${i}.bin HTTP/1.1\r\nHost: pail\r\nx-api-key: ${owner.apiKey}\r\n`, busyPort),
      ),
    );
    try {
      const refused = await fetchUntil(`${busy.url}/healthz`, 503);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await json(refused)).toEqual({ error: expect.stringMatching(/^Slow down: 50 requests/), code: 'SlowDown' });
      sockets.pop()!.destroy();
      expect((await fetchUntil(`${busy.url}/healthz`, 200)).status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('the S3 listener answers past the cap 503 SlowDown in XML with Retry-After', async () => {
    const s3 = sdkClient(busy.s3Url!, owner, { requestChecksumCalculation: 'WHEN_REQUIRED' });
    const bucketName = (await json(await devApi(busy.url, owner)('', { method: 'POST', body: JSON.stringify({ name: `held-s3-${Date.now()}` }) }))).data.name;
    const s3Port = Number(new URL(busy.s3Url!).port);
    const heads = await Promise.all(
      Array.from({ length: CAP }, async (_, i) => {
        const url = new URL(await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucketName, Key: `held-${i}.bin` }), { expiresIn: 300 }));
        return `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n`;
      }),
    );
    const sockets = await Promise.all(heads.map((head) => held(head, s3Port)));
    try {
      const refused = await fetchUntil(`${busy.s3Url}/`, 503);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.text()).toContain('<Code>SlowDown</Code>');
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('behind a trusted proxy, each client has its own requests in progress: one client at the cap does not refuse the others', async () => {
    const PROXIED_CAP = 3;
    const proxied = await startTestServer({ env: { MAX_CONNECTIONS_PER_IP: String(PROXIED_CAP), TRUST_PROXY: '127.0.0.1', IDLE_TIMEOUT_SECONDS: '30' } });
    const port = Number(new URL(proxied.url).port);
    const user = await signUp(proxied.url);
    const bucket = (await json(await devApi(proxied.url, user)('', { method: 'POST', body: JSON.stringify({ name: `proxied-${Date.now()}` }) }))).data.id;
    const sockets = await Promise.all(
      Array.from({ length: PROXIED_CAP }, (_, i) =>
        held(
          `PUT /api/v1/buckets/${bucket}/files/held-${i}.bin HTTP/1.1\r\nHost: pail\r\nx-api-key: ${user.apiKey}\r\nX-Forwarded-For: 198.51.100.1\r\n`,
          port,
        ),
      ),
    );
    const from = (client: string) => fetch(`${proxied.url}/healthz`, { headers: { 'x-forwarded-for': client } });
    try {
      // The busy client is refused; another client behind the same proxy is served.
      for (let attempt = 0; attempt < 40 && (await from('198.51.100.1')).status !== 503; attempt++) await new Promise((r) => setTimeout(r, 50));
      expect((await from('198.51.100.1')).status).toBe(503);
      expect((await from('198.51.100.2')).status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
      await proxied.close();
    }
  });

  it('a flood of stalled sockets past the ceiling closes the oldest idle ones, and the address is still served', async () => {
    const ceiling = CAP * SOCKETS_PER_REQUEST;
    const flood: { socket: Socket; closed: Promise<number> }[] = [];
    for (let i = 0; i < ceiling + 5; i++) flood.push(await stalled('127.0.0.44', 'GET /healthz HTTP/1.1\r\nHost: pail\r\n', busyPort));
    try {
      const oldest = flood.slice(0, 5).map((s) => s.closed);
      await Promise.all(oldest);
      const stillOpen = flood.slice(5).filter((s) => !s.socket.destroyed && s.socket.readyState === 'open');
      expect(stillOpen).toHaveLength(ceiling);
      const served = await new Promise<number>((resolve, reject) => {
        httpRequest(`${busy.url}/healthz`, { localAddress: '127.0.0.44', agent: false }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      expect(served).toBe(200);
    } finally {
      for (const s of flood) s.socket.destroy();
    }
  });
});
