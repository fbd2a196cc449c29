/**
 * API keys with limits (decisions.md): buckets, permissions and expiry, shown
 * in key records and checked on every route a key opens.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server.url);
});
afterAll(() => server.close());

const ALL = ['read', 'write', 'delete', 'manage'];

async function createKey(body: Record<string, unknown>, owner: TestUser = user): Promise<Response> {
  return fetch(`${server.url}/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'limited', ...body }),
  });
}

async function keyWith(body: Record<string, unknown>): Promise<string> {
  const response = await createKey(body);
  expect(response.status).toBe(201);
  return (await json(response)).data.key as string;
}

const withKey = (key: string, path: string, init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, { ...init, headers: { 'x-api-key': key, ...(init.headers as Record<string, string>) } });

async function newBucket(name = `k-${randomBytes(4).toString('hex')}`, isPublic = false): Promise<{ id: number; storageName: string }> {
  const created = await withKey(user.apiKey, '/api/v1/buckets', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, public: isPublic }),
  });
  const id = (await json(created)).data.id as number;
  expect((await withKey(user.apiKey, `/api/v1/buckets/${id}/files/a/file.txt`, { method: 'PUT', body: 'hello' })).status).toBe(201);
  const listed = await json(await withKey(user.apiKey, `/api/v1/buckets/${id}/files`));
  return { id, storageName: new URL(listed.data[0].url as string).pathname.split('/')[2]! };
}

/** Every route of the Developer API that names a bucket, as `[method, path, body?]`. */
function bucketRoutes(id: number): [string, string, BodyInit?][] {
  const multipart = () => {
    const form = new FormData();
    form.append('file', new Blob(['x']), 'm.txt');
    return form;
  };
  return [
    ['GET', `/api/v1/buckets/${id}`],
    ['GET', `/api/v1/bucket/${id}`],
    ['GET', `/api/v1/buckets/${id}/files`],
    ['GET', `/api/v1/bucket/${id}/files`],
    ['GET', `/api/v1/buckets/${id}/files/a/file.txt`],
    ['HEAD', `/api/v1/buckets/${id}/files/a/file.txt`],
    ['PUT', `/api/v1/buckets/${id}/files/new.txt`, 'x'],
    ['POST', `/api/v1/buckets/${id}/files`, multipart()],
    ['DELETE', `/api/v1/buckets/${id}/files/a/file.txt`],
    ['DELETE', `/api/v1/buckets/${id}/files/a/file.txt/delete`],
    ['POST', `/api/v1/buckets/${id}/files/a/file.txt/signed-url`, '{}'],
    ['POST', `/api/v1/buckets/${id}/visibility`, '{"visibility":"public"}'],
    ['DELETE', `/api/v1/buckets/${id}`],
    ['DELETE', `/api/v1/bucket/${id}/delete`],
  ];
}

const jsonHeaders = (body: BodyInit | undefined): Record<string, string> => (typeof body === 'string' ? { 'content-type': 'application/json' } : {});

describe('creating keys with limits', () => {
  it('shows buckets, permissions and expires_at in the create answer and in the list', async () => {
    const { id } = await newBucket();
    const response = await createKey({ buckets: [id], permissions: ['read'], expires_in: 3600 });
    expect(response.status).toBe(201);
    const created = (await json(response)).data;
    expect(created).toMatchObject({ name: 'limited', buckets: [id], permissions: ['read'] });
    expect(Date.parse(created.expires_at) - Date.now()).toBeGreaterThan(3500_000);
    expect(Date.parse(created.expires_at) - Date.now()).toBeLessThanOrEqual(3600_000);

    const at = new Date(Date.now() + 86_400_000).toISOString();
    const second = (await json(await createKey({ permissions: ['write', 'read'], expires_at: at }))).data;
    expect(second).toMatchObject({ buckets: null, permissions: ['read', 'write'], expires_at: at });

    const list = (await json(await fetch(`${server.url}/api/keys`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
    expect(list.find((k: { id: number }) => k.id === created.id)).toMatchObject({ buckets: [id], permissions: ['read'], expires_at: created.expires_at });
    expect(list.find((k: { id: number }) => k.id === second.id)).toMatchObject({ buckets: null, permissions: ['read', 'write'], expires_at: at });
    expect(list[0]).toMatchObject({ buckets: null, permissions: ALL, expires_at: null });
  });

  it.each([
    [{ buckets: [] }, /buckets/],
    [{ buckets: ['1'] }, /buckets/],
    [{ permissions: [] }, /permissions/],
    [{ permissions: ['read', 'admin'] }, /permissions/],
    [{ permissions: ['read', 'read'] }, /permissions/],
    [{ expires_in: 0 }, /expires_in/],
    [{ expires_in: 1.5 }, /expires_in/],
    [{ expires_at: 'tomorrow' }, /expires_at/],
    [{ expires_at: '2020-01-01T00:00:00Z' }, /future/],
    [{ expires_at: '2099-01-01T00:00:00Z', expires_in: 60 }, /not both/],
  ])('refuses %j with 400', async (body, message) => {
    const response = await createKey(body);
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatch(message);
  });

  it("refuses a bucket that is not the owner's (400), without saying whose it is", async () => {
    const other = await signUp(server.url);
    const theirs = (
      await json(await withKey(other.apiKey, '/api/v1/buckets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"theirs"}' }))
    ).data.id;
    const response = await createKey({ buckets: [theirs] });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toBe(`buckets: bucket ${theirs} not found`);
    expect((await createKey({ buckets: [999_999] })).status).toBe(400);
  });
});

describe('a read-only key', () => {
  it('is refused with 403 naming the permission on every writing route, and changes nothing', async () => {
    const { id } = await newBucket();
    const key = await keyWith({ permissions: ['read'] });
    const expected: Record<string, string> = { PUT: 'write', POST: 'write', DELETE: 'delete' };
    for (const [method, path, body] of bucketRoutes(id)) {
      if (method === 'GET' || method === 'HEAD') continue;
      const permission = path.endsWith('/signed-url') || path.endsWith('/visibility') || /\/buckets?\/\d+(\/delete)?$/.test(path) ? 'manage' : expected[method];
      const response = await withKey(key, path, { method, body, headers: jsonHeaders(body) });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(await json(response), `${method} ${path}`).toEqual({ error: `This API key does not allow ${permission}`, code: 'Forbidden' });
    }
    const create = await withKey(key, '/api/v1/buckets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"nope"}' });
    expect(create.status).toBe(403);
    expect((await json(create)).error).toBe('This API key does not allow manage');

    // Nothing changed, and reading works.
    const files = await json(await withKey(key, `/api/v1/buckets/${id}/files`));
    expect(files.data.map((f: { filename: string }) => f.filename)).toEqual(['a/file.txt']);
    expect(await (await withKey(key, `/api/v1/buckets/${id}/files/a/file.txt`)).text()).toBe('hello');
    expect((await json(await withKey(key, `/api/v1/buckets/${id}`))).data).toMatchObject({ public: false, object_count: 1 });
  });

  it('a write-only key uploads but cannot read or list', async () => {
    const { id } = await newBucket();
    const key = await keyWith({ permissions: ['write'] });
    expect((await withKey(key, `/api/v1/buckets/${id}/files/w.txt`, { method: 'PUT', body: 'w' })).status).toBe(201);
    for (const path of [`/api/v1/buckets/${id}/files/w.txt`, `/api/v1/buckets/${id}/files`, '/api/v1/buckets']) {
      const response = await withKey(key, path);
      expect(response.status, path).toBe(403);
      expect((await json(response)).error).toBe('This API key does not allow read');
    }
  });
});

describe('a key limited to one bucket', () => {
  it('gets 404 Bucket not found on every route of another bucket, lists only its own, and cannot create buckets', async () => {
    const mine = await newBucket();
    const other = await newBucket();
    const key = await keyWith({ buckets: [mine.id] });
    for (const [method, path, body] of bucketRoutes(other.id)) {
      const response = await withKey(key, path, { method, body, headers: jsonHeaders(body) });
      expect(response.status, `${method} ${path}`).toBe(404);
      if (method !== 'HEAD') expect(await json(response), `${method} ${path}`).toEqual({ error: 'Bucket not found', code: 'BucketNotFound' });
    }
    // The other bucket is whole.
    expect((await json(await withKey(user.apiKey, `/api/v1/buckets/${other.id}`))).data).toMatchObject({ object_count: 1, public: false });

    const listed = await json(await withKey(key, '/api/v1/buckets'));
    expect(listed.data.map((b: { id: number }) => b.id)).toEqual([mine.id]);
    expect(listed.buckets).toEqual(listed.data);

    const create = await withKey(key, '/api/v1/buckets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"outside"}' });
    expect(create.status).toBe(403);

    // Its own bucket works on every route.
    expect((await withKey(key, `/api/v1/buckets/${mine.id}/files/own.txt`, { method: 'PUT', body: 'o' })).status).toBe(201);
    expect(await (await withKey(key, `/api/v1/buckets/${mine.id}/files/own.txt`)).text()).toBe('o');
  });

  it('reads no other bucket through /storage urls, not even a public one', async () => {
    const mine = await newBucket();
    const open = await newBucket(undefined, true);
    const key = await keyWith({ buckets: [mine.id] });
    expect((await withKey(key, `/storage/${mine.storageName}/a/file.txt`)).status).toBe(200);
    const refused = await withKey(key, `/storage/${open.storageName}/a/file.txt`);
    expect(refused.status).toBe(404);
    expect((await json(refused)).error).toBe('Bucket not found');
    // Without the key, the public bucket is open to anyone.
    expect((await fetch(`${server.url}/storage/${open.storageName}/a/file.txt`)).status).toBe(200);
  });
});

describe('an expiring key', () => {
  it('works until it expires, then gets 401 like a revoked key', async () => {
    const { id } = await newBucket();
    const key = await keyWith({ expires_in: 1 });
    expect((await withKey(key, `/api/v1/buckets/${id}/files`)).status).toBe(200);
    server.clock.advance(1100);
    for (const path of [`/api/v1/buckets/${id}/files`, '/api/v1/buckets', `/storage/x/y`]) {
      const response = await withKey(key, path);
      expect(response.status, path).toBe(401);
      expect((await json(response)).error).toBe('Unauthorized');
    }
  });
});
