/**
 * Signed urls (decisions.md): GET/HEAD and PUT without a key or session until
 * they expire; tied to the key or session that made them and to what it may
 * do; ended by revoking the key, ending the session or deleting the bucket;
 * PUT urls within the owner's cap, `max_bytes` and `content_type`.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const CAP = 100_000;
let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  server = await startTestServer({ env: { PLAN_FREE_STORAGE_BYTES: String(CAP) } });
  user = await signUp(server.url);
});
afterAll(() => server.close());

const dev = (path: string, init: RequestInit = {}, key = user.apiKey) =>
  fetch(`${server.url}/api/v1/buckets${path}`, { ...init, headers: { 'x-api-key': key, ...(init.headers as Record<string, string>) } });

async function newBucket(owner: TestUser = user): Promise<number> {
  const created = await dev(
    '',
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `s-${randomBytes(4).toString('hex')}` }) },
    owner.apiKey,
  );
  return (await json(created)).data.id as number;
}

async function sign(path: string, body: Record<string, unknown> = {}, credential: Record<string, string> = { 'x-api-key': user.apiKey }) {
  return fetch(`${server.url}${path}/signed-url`, {
    method: 'POST',
    headers: { ...credential, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function signedUrl(bucket: number, filename: string, body: Record<string, unknown> = {}, key = user.apiKey): Promise<string> {
  const response = await sign(`/api/v1/buckets/${bucket}/files/${filename}`, body, { 'x-api-key': key });
  expect(response.status).toBe(201);
  return (await json(response)).data.url as string;
}

async function storedNames(bucket: number): Promise<string[]> {
  return (await json(await dev(`/${bucket}/files`))).data.map((f: { filename: string }) => f.filename);
}

async function usedBytes(owner: TestUser = user): Promise<number> {
  const me = await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${owner.token}` } }));
  return me.data.storage_used_bytes ?? me.data.user?.storage_used_bytes;
}

describe('GET urls', () => {
  it('download without a key or session: bytes, Range, ETag and 304, HEAD', async () => {
    const bucket = await newBucket();
    expect(
      (await dev(`/${bucket}/files/docs/report.txt`, { method: 'PUT', body: 'hello signed world', headers: { 'content-type': 'text/plain' } })).status,
    ).toBe(201);
    const response = await sign(`/api/v1/buckets/${bucket}/files/docs/report.txt`, { method: 'GET', expires_in: 600 });
    expect(response.status).toBe(201);
    const { data } = await json(response);
    expect(Object.keys(data).sort()).toEqual(['expires_at', 'method', 'url']);
    expect(data.method).toBe('GET');
    expect(Math.abs(Date.parse(data.expires_at) - (Date.now() + 600_000))).toBeLessThan(5000);
    expect(data.url).toMatch(new RegExp(`^${server.url}/storage/s-[0-9a-f]+(-[0-9a-f]{12})?/docs/report\\.txt\\?`));

    const got = await fetch(data.url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(await got.text()).toBe('hello signed world');
    const etag = got.headers.get('etag')!;

    const ranged = await fetch(data.url, { headers: { range: 'bytes=6-11' } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe('signed');
    expect((await fetch(data.url, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const head = await fetch(data.url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('18');
  });

  it('is made only for a file that exists, within expires_in 1..604800', async () => {
    const bucket = await newBucket();
    const missing = await sign(`/api/v1/buckets/${bucket}/files/nothing.txt`);
    expect(missing.status).toBe(404);
    expect((await json(missing)).error).toBe('File not found');
    await dev(`/${bucket}/files/x`, { method: 'PUT', body: 'x' });
    for (const body of [{ expires_in: 0 }, { expires_in: 604801 }, { expires_in: 'soon' }, { method: 'POST' }, { method: 'GET', max_bytes: 5 }]) {
      const response = await sign(`/api/v1/buckets/${bucket}/files/x`, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(typeof (await json(response)).error).toBe('string');
    }
    expect((await sign(`/api/v1/buckets/${bucket}/files/x`, { expires_in: 604800 })).status).toBe(201);
  });

  it('an altered url is 403: another file, a later expiry, another signature, another method', async () => {
    const bucket = await newBucket();
    await dev(`/${bucket}/files/a.txt`, { method: 'PUT', body: 'a' });
    await dev(`/${bucket}/files/b.txt`, { method: 'PUT', body: 'b' });
    const url = new URL(await signedUrl(bucket, 'a.txt', { expires_in: 60 }));
    const altered = [
      new URL(url.href.replace('/a.txt?', '/b.txt?')),
      (() => {
        const u = new URL(url);
        u.searchParams.set('X-Pail-Expires', String(Number(u.searchParams.get('X-Pail-Expires')) + 3600));
        return u;
      })(),
      (() => {
        const u = new URL(url);
        const sig = u.searchParams.get('X-Pail-Signature')!;
        u.searchParams.set('X-Pail-Signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
        return u;
      })(),
      (() => {
        const u = new URL(url);
        u.searchParams.delete('X-Pail-Signer');
        return u;
      })(),
    ];
    for (const u of altered) {
      const response = await fetch(u);
      expect(response.status, u.href).toBe(403);
      expect((await json(response)).error).toMatch(/^This signed url is not valid/);
    }
    // A GET url does not upload.
    const put = await fetch(url, { method: 'PUT', body: 'overwritten' });
    expect(put.status).toBe(403);
    expect(await (await fetch(url)).text()).toBe('a');
  });

  it('expires, never sooner than asked', async () => {
    const bucket = await newBucket();
    await dev(`/${bucket}/files/a.txt`, { method: 'PUT', body: 'a' });
    const asked = server.clock.now();
    const made = await json(await sign(`/api/v1/buckets/${bucket}/files/a.txt`, { expires_in: 1 }, { 'x-api-key': user.apiKey }));
    // Whole seconds, rounded up: at least the second asked for, at most one more.
    expect(Date.parse(made.data.expires_at) - asked).toBeGreaterThanOrEqual(1000);
    expect(Date.parse(made.data.expires_at) - server.clock.now()).toBeLessThanOrEqual(2000);
    const url = made.data.url as string;
    expect((await fetch(url)).status).toBe(200);
    server.clock.advance(2100);
    const response = await fetch(url);
    expect(response.status).toBe(403);
    expect(await json(response)).toEqual({ error: 'This signed url has expired', code: 'Forbidden' });
  });
});

describe('ending urls', () => {
  it('revoking the key that made it ends it at once', async () => {
    const bucket = await newBucket();
    await dev(`/${bucket}/files/a.txt`, { method: 'PUT', body: 'a' });
    const created = await json(
      await fetch(`${server.url}/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: '{"name":"signer"}',
      }),
    );
    const url = await signedUrl(bucket, 'a.txt', {}, created.data.key);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(`${server.url}/api/keys/${created.data.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${user.token}` } })).status).toBe(
      200,
    );
    const response = await fetch(url);
    expect(response.status).toBe(403);
    expect((await json(response)).error).toMatch(/^This signed url has ended/);
  });

  it('ending the session that made it ends it at once', async () => {
    const owner = await signUp(server.url);
    const bucket = await newBucket(owner);
    await dev(`/${bucket}/files/a.txt`, { method: 'PUT', body: 'a' }, owner.apiKey);
    const response = await sign(`/api/buckets/${bucket}/files/a.txt`, {}, { authorization: `Bearer ${owner.token}` });
    expect(response.status).toBe(201);
    const { url } = (await json(response)).data;
    expect(await (await fetch(url)).text()).toBe('a');
    expect((await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${owner.token}` } })).status).toBe(200);
    const after = await fetch(url);
    expect(after.status).toBe(403);
    expect((await json(after)).error).toMatch(/^This signed url has ended/);
  });

  it('deleting its bucket ends it', async () => {
    const bucket = await newBucket();
    await dev(`/${bucket}/files/a.txt`, { method: 'PUT', body: 'a' });
    const getUrl = await signedUrl(bucket, 'a.txt');
    const putUrl = await signedUrl(bucket, 'b.txt', { method: 'PUT' });
    expect((await dev(`/${bucket}`, { method: 'DELETE' })).status).toBe(200);
    for (const [url, method] of [
      [getUrl, 'GET'],
      [putUrl, 'PUT'],
    ] as const) {
      const response = await fetch(url, { method, body: method === 'PUT' ? 'b' : undefined });
      expect(response.status, method).toBe(403);
      expect((await json(response)).error).toBe('This signed url has ended: its bucket was deleted');
    }
  });

  it("holds to its key's limits: a read-only key makes no PUT url, a key without manage none at all", async () => {
    const bucket = await newBucket();
    await dev(`/${bucket}/files/a.txt`, { method: 'PUT', body: 'a' });
    const makeKey = async (permissions: string[]) =>
      (
        await json(
          await fetch(`${server.url}/api/keys`, {
            method: 'POST',
            headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ permissions }),
          }),
        )
      ).data.key as string;
    const readAndManage = await makeKey(['read', 'manage']);
    expect((await sign(`/api/v1/buckets/${bucket}/files/a.txt`, { method: 'GET' }, { 'x-api-key': readAndManage })).status).toBe(201);
    const put = await sign(`/api/v1/buckets/${bucket}/files/a.txt`, { method: 'PUT' }, { 'x-api-key': readAndManage });
    expect(put.status).toBe(403);
    expect((await json(put)).error).toBe('This API key does not allow write');
    const readOnly = await makeKey(['read']);
    const refused = await sign(`/api/v1/buckets/${bucket}/files/a.txt`, { method: 'GET' }, { 'x-api-key': readOnly });
    expect(refused.status).toBe(403);
    expect((await json(refused)).error).toBe('This API key does not allow manage');
  });
});

describe('PUT urls', () => {
  it('upload as a raw-body upload would, with no key or session', async () => {
    const bucket = await newBucket();
    const url = await signedUrl(bucket, 'uploads/photo.png', { method: 'PUT', expires_in: 300 });
    const response = await fetch(url, { method: 'PUT', body: new Uint8Array([0x89, 0x50, 0x4e, 0x47]) });
    expect(response.status).toBe(201);
    expect(await json(response)).toEqual({ data: { filename: 'uploads/photo.png', size: 4, updated: false } });
    const got = await dev(`/${bucket}/files/uploads/photo.png`);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    // It may be used again until it expires: the second upload replaces the first.
    expect((await json(await fetch(url, { method: 'PUT', body: 'again' }))).data.updated).toBe(true);
    // A PUT url does not download, and a storage url takes no upload without a signature.
    expect((await fetch(url)).status).toBe(403);
    expect((await fetch(url.split('?')[0]!, { method: 'PUT', body: 'x', headers: { 'x-api-key': user.apiKey } })).status).toBe(403);
  });

  it('max_bytes: a larger upload is 413 and stores nothing, declared or streamed', async () => {
    const bucket = await newBucket();
    const url = await signedUrl(bucket, 'small.bin', { method: 'PUT', max_bytes: 10 });
    const declared = await fetch(url, { method: 'PUT', body: new Uint8Array(11) });
    expect(declared.status).toBe(413);
    expect(typeof (await json(declared)).error).toBe('string');
    const streamed = await fetch(url, {
      method: 'PUT',
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new Uint8Array(8));
          controller.enqueue(new Uint8Array(8));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(await storedNames(bucket)).toEqual([]);
    expect((await fetch(url, { method: 'PUT', body: new Uint8Array(10) })).status).toBe(201);
  });

  it('content_type: another type is 415, none takes the url type', async () => {
    const bucket = await newBucket();
    const url = await signedUrl(bucket, 'pic', { method: 'PUT', content_type: 'image/webp' });
    const wrong = await fetch(url, { method: 'PUT', body: 'x', headers: { 'content-type': 'text/html' } });
    expect(wrong.status).toBe(415);
    expect((await json(wrong)).error).toBe('This signed url uploads only image/webp');
    expect(await storedNames(bucket)).toEqual([]);
    expect((await fetch(url, { method: 'PUT', body: new Uint8Array([1]) })).status).toBe(201);
    expect((await dev(`/${bucket}/files/pic`)).headers.get('content-type')).toBe('image/webp');
    expect((await fetch(url, { method: 'PUT', body: 'x', headers: { 'content-type': 'IMAGE/WEBP' } })).status).toBe(201);
  });

  it("stays within the owner's storage cap when signed PUTs race", async () => {
    const owner = await signUp(server.url);
    const bucket = await newBucket(owner);
    const size = 30_000; // 3 fit under the 100 000-byte cap, 8 are tried
    const urls = await Promise.all(Array.from({ length: 8 }, (_, i) => signedUrl(bucket, `race-${i}.bin`, { method: 'PUT' }, owner.apiKey)));
    const statuses = await Promise.all(urls.map(async (url) => (await fetch(url, { method: 'PUT', body: new Uint8Array(size) })).status));
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    expect(await usedBytes(owner)).toBe(3 * size);
    const listed = (await json(await dev(`/${bucket}/files`, {}, owner.apiKey))).data;
    expect(listed).toHaveLength(3);
  });
});
