/**
 * PostgreSQL or the S3 store down, through a TCP proxy the test cuts (the
 * shared services stay up for the suites beside this one): requests that need
 * the store answer 503 {error} within seconds, /readyz says not ready, and
 * once the store is back Pail serves again by itself, with every acknowledged
 * upload whole. Needs PAIL_TEST_BACKEND=scaled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendKind, scaledBackendEnv, type BackendEnv } from '../helpers/backends.js';
import { json, signUp, type TestUser } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

let backend: BackendEnv;
let database: TcpProxy;
let s3: TcpProxy;
let server: TestServer;
let user: TestUser;
let bucket: number;

/** The same URL, through the proxy. */
function via(raw: string, proxy: TcpProxy): string {
  const url = new URL(raw);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString().replace(/\/$/, '');
}

beforeAll(async () => {
  if (backendKind() !== 'scaled') throw new Error('stores-down.test.ts needs PAIL_TEST_BACKEND=scaled (run by the scaled project)');
  backend = await scaledBackendEnv();
  const pgUrl = new URL(backend.env.DATABASE_URL!);
  database = await tcpProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
  const s3Url = new URL(backend.env.S3_ENDPOINT!);
  s3 = await tcpProxy({ host: s3Url.hostname, port: Number(s3Url.port) });
  server = await startTestServer({
    env: { ...backend.env, DATABASE_URL: via(backend.env.DATABASE_URL!, database), S3_ENDPOINT: via(backend.env.S3_ENDPOINT!, s3), INLINE_MAX_BYTES: '0' },
  });
  user = await signUp(server.url);
  const created = await fetch(`${server.url}/api/v1/buckets`, {
    method: 'POST',
    headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'outage' }),
  });
  bucket = (await json(created)).data.id;
}, 60_000);

afterAll(async () => {
  await server?.close();
  await database?.close();
  await s3?.close();
  await backend?.cleanup();
});

const key = () => ({ 'x-api-key': user.apiKey });
const put = (name: string, body: string) => fetch(`${server.url}/api/v1/buckets/${bucket}/files/${name}`, { method: 'PUT', headers: key(), body });
const get = (name: string) => fetch(`${server.url}/api/v1/buckets/${bucket}/files/${name}`, { headers: key() });

async function timed(request: Promise<Response>): Promise<{ response: Response; ms: number }> {
  const started = Date.now();
  const response = await request;
  return { response, ms: Date.now() - started };
}

/** Polls until `check` holds, for at most `ms`. */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await check()) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`not within ${ms} ms`);
}

for (const store of ['PostgreSQL', 'the S3 store'] as const) {
  describe(`${store} down, then back`, () => {
    it('503 {error} within seconds and not ready while down; serving again by itself when back, nothing acknowledged lost', async () => {
      const proxy = store === 'PostgreSQL' ? database : s3;
      const name = store === 'PostgreSQL' ? 'before-pg.txt' : 'before-s3.txt';
      expect((await put(name, `acknowledged before ${store} went down`)).status).toBe(201);

      await proxy.cut();
      // A write needs both stores; a listing needs the database; a read of the file needs both.
      const attempts =
        store === 'PostgreSQL' ? [put('during.txt', 'x'), fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { headers: key() })] : [put('during.txt', 'x')];
      for (const attempt of attempts) {
        const { response, ms } = await timed(attempt);
        expect(response.status).toBe(503);
        expect(await json(response)).toMatchObject({
          error: 'Service unavailable: a backing store cannot be reached; try again shortly',
          code: 'ServiceUnavailable',
        });
        expect(ms).toBeLessThan(8000);
      }
      const ready = await timed(fetch(`${server.url}/readyz`));
      expect(ready.response.status).toBe(503);
      expect(ready.ms).toBeLessThan(8000);

      await proxy.restore();
      const recoveredIn = await eventually(async () => (await fetch(`${server.url}/readyz`)).status === 200, 15_000);
      console.log(`[stores-down] ${store}: ready again ${recoveredIn} ms after it came back`);
      expect((await put('after.txt', 'back')).status).toBe(201);
      const kept = await get(name);
      expect(kept.status).toBe(200);
      expect(await kept.text()).toBe(`acknowledged before ${store} went down`);
      const listed = await json(await fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { headers: key() }));
      expect(listed.data.map((o: { filename: string }) => o.filename)).not.toContain('during.txt');
    });
  });
}
