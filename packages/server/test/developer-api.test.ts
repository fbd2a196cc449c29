/**
 * The Developer API, row by row (service.md "Developer API" table), under both
 * base paths and with every alias, against a real server on a real port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await signUp(server.url);
  bob = await signUp(server.url);
});
afterAll(() => server.close());

function call(user: TestUser | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(user ? { 'x-api-key': user.apiKey } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function createBucket(user: TestUser, name: string, extra: Record<string, unknown> = {}) {
  const response = await call(user, 'POST', '/api/v1/buckets', { name, ...extra });
  expect(response.status).toBe(201);
  return (await json(response)).data as { id: number; name: string; public: boolean };
}

const bucketShape = {
  id: expect.any(Number),
  name: expect.any(String),
  public: expect.any(Boolean),
  object_count: expect.any(Number),
  total_bytes: expect.any(Number),
  created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
  max_file_bytes: null,
  allowed_types: null,
  versioning: 'unversioned',
  noncurrent_bytes: 0,
  object_lock: false,
  default_retention: null,
};

describe.each(['/api/v1/buckets', '/api/v1/bucket'])('Developer API at %s', (base) => {
  const suffix = base.endsWith('s') ? 'p' : 's';

  it('POST {dev} creates a private bucket by default (201, object_count 0, total_bytes 0)', async () => {
    const response = await call(alice, 'POST', base, { name: `docs-${suffix}` });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body).toEqual({ data: { ...bucketShape, name: `docs-${suffix}`, public: false, object_count: 0, total_bytes: 0 } });
  });

  it('POST {dev}/create is an alias, and visibility/public make it public', async () => {
    const a = await json(await call(alice, 'POST', `${base}/create`, { name: `pub-a-${suffix}`, visibility: 'public' }));
    const b = await json(await call(alice, 'POST', `${base}/create`, { name: `pub-b-${suffix}`, public: true }));
    expect(a.data.public).toBe(true);
    expect(b.data.public).toBe(true);
  });

  it('GET {dev} and GET {dev}/list list own buckets in ascending id order, data and buckets equal', async () => {
    for (const path of [base, `${base}/list`]) {
      const response = await call(alice, 'GET', path);
      expect(response.status).toBe(200);
      const body = await json(response);
      expect(body.buckets).toEqual(body.data);
      const ids = body.data.map((b: { id: number }) => b.id);
      expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y));
      expect(body.data.every((b: object) => expect.objectContaining(bucketShape).asymmetricMatch(b))).toBe(true);
    }
  });

  it('GET {dev}/:id returns the bucket; DELETE {dev}/:id and {dev}/:id/delete soft-delete it', async () => {
    for (const [i, deletePath] of [(id: number) => `${base}/${id}`, (id: number) => `${base}/${id}/delete`].entries()) {
      const bucket = await createBucket(alice, `gone-${suffix}-${i}`);
      const got = await json(await call(alice, 'GET', `${base}/${bucket.id}`));
      expect(got.data).toMatchObject({ id: bucket.id, name: `gone-${suffix}-${i}` });
      const deleted = await call(alice, 'DELETE', deletePath(bucket.id));
      expect(deleted.status).toBe(200);
      expect(await json(deleted)).toEqual({ message: 'Bucket deleted successfully' });
      const after = await call(alice, 'GET', `${base}/${bucket.id}`);
      expect(after.status).toBe(404);
      expect(await json(after)).toMatchObject({ error: 'Bucket not found' });
      const again = await call(alice, 'DELETE', deletePath(bucket.id));
      expect(again.status).toBe(404);
      const listed = await json(await call(alice, 'GET', base));
      expect(listed.data.map((b: { id: number }) => b.id)).not.toContain(bucket.id);
    }
  });

  it('POST {dev}/:id/visibility moves private -> public -> private', async () => {
    const bucket = await createBucket(alice, `vis-${suffix}`);
    const toPublic = await call(alice, 'POST', `${base}/${bucket.id}/visibility`, { visibility: 'public' });
    expect(toPublic.status).toBe(200);
    expect(await json(toPublic)).toEqual({ message: 'Visibility updated' });
    expect((await json(await call(alice, 'GET', `${base}/${bucket.id}`))).data.public).toBe(true);
    await call(alice, 'POST', `${base}/${bucket.id}/visibility`, { public: false });
    expect((await json(await call(alice, 'GET', `${base}/${bucket.id}`))).data.public).toBe(false);
    for (const bad of [{}, { visibility: 'open' }, { public: 'yes' }, { visibility: 'public', public: false }]) {
      const response = await call(alice, 'POST', `${base}/${bucket.id}/visibility`, bad);
      expect(response.status).toBe(400);
      expect(typeof (await json(response)).error).toBe('string');
    }
  });

  it('files: POST multipart, PUT raw, GET, HEAD, list, DELETE and DELETE .../delete', async () => {
    const bucket = await createBucket(alice, `files-${suffix}`);
    const form = new FormData();
    form.append('file', new Blob(['hello multipart'], { type: 'text/plain' }), 'hello.txt');
    const posted = await fetch(`${server.url}${base}/${bucket.id}/files`, { method: 'POST', headers: { 'x-api-key': alice.apiKey }, body: form });
    expect(posted.status).toBe(201);
    expect(await json(posted)).toEqual({ data: { filename: 'hello.txt', size: 15, updated: false } });

    const put = await call(alice, 'PUT', `${base}/${bucket.id}/files/data.bin`, undefined, { 'content-type': 'application/x-custom' });
    expect(put.status).toBe(201);
    expect(await json(put)).toEqual({ data: { filename: 'data.bin', size: 0, updated: false } });
    const put2 = await fetch(`${server.url}${base}/${bucket.id}/files/data.bin`, {
      method: 'PUT',
      headers: { 'x-api-key': alice.apiKey, 'content-type': 'application/x-custom' },
      body: new Uint8Array([1, 2, 3, 4]),
    });
    expect(await json(put2)).toEqual({ data: { filename: 'data.bin', size: 4, updated: true } });

    const get = await call(alice, 'GET', `${base}/${bucket.id}/files/hello.txt`);
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toBe('text/plain');
    expect(get.headers.get('content-length')).toBe('15');
    expect(await get.text()).toBe('hello multipart');

    const head = await call(alice, 'HEAD', `${base}/${bucket.id}/files/data.bin`);
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/x-custom');
    expect(head.headers.get('content-length')).toBe('4');
    expect(head.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
    expect(new Date(head.headers.get('last-modified')!).getTime()).not.toBeNaN();
    expect(await head.text()).toBe('');

    const list = await json(await call(alice, 'GET', `${base}/${bucket.id}/files`));
    expect(list.objects).toEqual(list.data);
    expect(list.next_cursor).toBeNull();
    expect(list.data.map((o: { filename: string }) => o.filename)).toEqual(['data.bin', 'hello.txt']);
    expect(list.data[1]).toEqual({
      id: `${bucket.id}/hello.txt`,
      bucket_id: bucket.id,
      storage_name: expect.any(String),
      filename: 'hello.txt',
      size: 15,
      content_type: 'text/plain',
      url: expect.stringMatching(new RegExp(`^${server.url}/storage/files-${suffix}(-[0-9a-f]{12})?/hello\\.txt$`)),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    const del = await call(alice, 'DELETE', `${base}/${bucket.id}/files/hello.txt`);
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ message: 'File deleted successfully' });
    const del2 = await call(alice, 'DELETE', `${base}/${bucket.id}/files/data.bin/delete`);
    expect(await json(del2)).toEqual({ message: 'File deleted successfully' });
    const missing = await call(alice, 'GET', `${base}/${bucket.id}/files/hello.txt`);
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ error: 'File not found' });
    const b = await json(await call(alice, 'GET', `${base}/${bucket.id}`));
    expect(b.data).toMatchObject({ object_count: 0, total_bytes: 0 });
  });
});

describe('authentication', () => {
  it('every Developer API endpoint refuses a missing or invalid key with 401 Unauthorized', async () => {
    const bucket = await createBucket(alice, 'auth-check');
    const paths: [string, string][] = [
      ['GET', '/api/v1/buckets'],
      ['POST', '/api/v1/buckets'],
      ['GET', '/api/v1/buckets/list'],
      ['POST', '/api/v1/buckets/create'],
      ['GET', `/api/v1/buckets/${bucket.id}`],
      ['DELETE', `/api/v1/buckets/${bucket.id}`],
      ['DELETE', `/api/v1/bucket/${bucket.id}/delete`],
      ['POST', `/api/v1/buckets/${bucket.id}/visibility`],
      ['GET', `/api/v1/buckets/${bucket.id}/files`],
      ['POST', `/api/v1/buckets/${bucket.id}/files`],
      ['PUT', `/api/v1/buckets/${bucket.id}/files/x.txt`],
      ['GET', `/api/v1/buckets/${bucket.id}/files/x.txt`],
      ['HEAD', `/api/v1/buckets/${bucket.id}/files/x.txt`],
      ['DELETE', `/api/v1/buckets/${bucket.id}/files/x.txt`],
      ['DELETE', `/api/v1/buckets/${bucket.id}/files/x.txt/delete`],
    ];
    for (const [method, path] of paths) {
      for (const headers of [{}, { 'x-api-key': 'pail_wrong' }, { authorization: 'Bearer nonsense' }] as Array<Record<string, string>>) {
        const response = await fetch(`${server.url}${path}`, { method, headers });
        expect(response.status, `${method} ${path}`).toBe(401);
        if (method !== 'HEAD') expect(await json(response)).toMatchObject({ error: 'Unauthorized' });
      }
    }
    // The bucket is untouched.
    expect((await call(alice, 'GET', `/api/v1/buckets/${bucket.id}`)).status).toBe(200);
  });

  it('accepts Authorization: Bearer <key> as well as x-api-key', async () => {
    const response = await fetch(`${server.url}/api/v1/buckets`, { headers: { authorization: `Bearer ${alice.apiKey}` } });
    expect(response.status).toBe(200);
  });

  it('a session token does not open the Developer API', async () => {
    const response = await fetch(`${server.url}/api/v1/buckets`, { headers: { authorization: `Bearer ${alice.token}` } });
    expect(response.status).toBe(401);
  });
});

describe('isolation', () => {
  it("another owner's bucket is 404 Bucket not found for every operation, never 403", async () => {
    const bucket = await createBucket(alice, 'alice-private');
    await call(alice, 'PUT', `/api/v1/buckets/${bucket.id}/files/secret.txt`, undefined, { 'content-type': 'text/plain' });
    const attempts: [string, string][] = [
      ['GET', `/api/v1/buckets/${bucket.id}`],
      ['DELETE', `/api/v1/buckets/${bucket.id}`],
      ['POST', `/api/v1/buckets/${bucket.id}/visibility`],
      ['GET', `/api/v1/buckets/${bucket.id}/files`],
      ['PUT', `/api/v1/buckets/${bucket.id}/files/evil.txt`],
      ['GET', `/api/v1/buckets/${bucket.id}/files/secret.txt`],
      ['DELETE', `/api/v1/buckets/${bucket.id}/files/secret.txt`],
    ];
    for (const [method, path] of attempts) {
      const response = await call(bob, method, path, method === 'POST' ? { visibility: 'public' } : undefined);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await json(response)).toMatchObject({ error: 'Bucket not found' });
    }
    const head = await call(bob, 'HEAD', `/api/v1/buckets/${bucket.id}/files/secret.txt`);
    expect(head.status).toBe(404);
    const bobs = await json(await call(bob, 'GET', '/api/v1/buckets'));
    expect(bobs.data.map((b: { id: number }) => b.id)).not.toContain(bucket.id);
    const mine = await json(await call(alice, 'GET', `/api/v1/buckets/${bucket.id}`));
    expect(mine.data).toMatchObject({ public: false, object_count: 1 });
  });

  it('bucket names are unique per owner among live buckets; a deleted name can be reused', async () => {
    await createBucket(alice, 'shared-name');
    await createBucket(bob, 'shared-name');
    const dup = await call(alice, 'POST', '/api/v1/buckets', { name: 'shared-name' });
    expect(dup.status).toBe(409);
    expect(await json(dup)).toMatchObject({ error: 'Bucket name already exists' });
    const list = await json(await call(alice, 'GET', '/api/v1/buckets'));
    const old = list.data.find((b: { name: string }) => b.name === 'shared-name');
    await call(alice, 'DELETE', `/api/v1/buckets/${old.id}`);
    const again = await createBucket(alice, 'shared-name');
    expect(again.id).toBeGreaterThan(old.id);
  });
});

describe('public buckets', () => {
  it('files of a public bucket download without a key (GET and HEAD); private ones do not', async () => {
    const bucket = await createBucket(alice, 'open-house', { visibility: 'public' });
    await fetch(`${server.url}/api/v1/buckets/${bucket.id}/files/readme.txt`, {
      method: 'PUT',
      headers: { 'x-api-key': alice.apiKey, 'content-type': 'text/plain' },
      body: 'public bytes',
    });
    const anon = await fetch(`${server.url}/api/v1/buckets/${bucket.id}/files/readme.txt`);
    expect(anon.status).toBe(200);
    expect(await anon.text()).toBe('public bytes');
    expect(anon.headers.get('ratelimit-limit')).toBe(String(server.config.publicRateLimit));
    const anonHead = await fetch(`${server.url}/api/v1/bucket/${bucket.id}/files/readme.txt`, { method: 'HEAD' });
    expect(anonHead.status).toBe(200);
    expect(anonHead.headers.get('content-length')).toBe('12');
    // Listing is not a download: it still needs a key.
    expect((await fetch(`${server.url}/api/v1/buckets/${bucket.id}/files`)).status).toBe(401);

    await call(alice, 'POST', `/api/v1/buckets/${bucket.id}/visibility`, { visibility: 'private' });
    const closed = await fetch(`${server.url}/api/v1/buckets/${bucket.id}/files/readme.txt`);
    expect(closed.status).toBe(401);
    expect(await json(closed)).toMatchObject({ error: 'Unauthorized' });
    const otherKey = await call(bob, 'GET', `/api/v1/buckets/${bucket.id}/files/readme.txt`);
    expect(otherKey.status).toBe(404);
    expect(await json(otherKey)).toMatchObject({ error: 'Bucket not found' });
  });

  it('the url field is served by the server under /storage', async () => {
    const bucket = await createBucket(alice, 'by-url');
    await fetch(`${server.url}/api/v1/buckets/${bucket.id}/files/${encodeURIComponent('photo 1 é.txt')}`, {
      method: 'PUT',
      headers: { 'x-api-key': alice.apiKey, 'content-type': 'text/plain; charset=utf-8' },
      body: 'via url',
    });
    const list = await json(await call(alice, 'GET', `/api/v1/buckets/${bucket.id}/files`));
    const url: string = list.data[0].url;
    expect(url.startsWith(`${server.url}/storage/`)).toBe(true);
    expect((await fetch(url)).status).toBe(401); // private, no credentials
    const withKey = await fetch(url, { headers: { 'x-api-key': alice.apiKey } });
    expect(withKey.status).toBe(200);
    expect(await withKey.text()).toBe('via url');
    const withSession = await fetch(url, { headers: { cookie: alice.cookie } });
    expect(withSession.status).toBe(200);
    expect((await fetch(url, { headers: { 'x-api-key': bob.apiKey } })).status).toBe(404);
    await call(alice, 'POST', `/api/v1/buckets/${bucket.id}/visibility`, { visibility: 'public' });
    const open = await fetch(url);
    expect(open.status).toBe(200);
    expect(open.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await open.text()).toBe('via url');
  });
});

describe('create bucket validation', () => {
  it.each<[body: object, what: string]>([
    [{}, 'missing name'],
    [{ name: 'ab' }, 'too short'],
    [{ name: 'a'.repeat(41) }, 'too long'],
    [{ name: 'Upper' }, 'uppercase'],
    [{ name: '-lead' }, 'leading hyphen'],
    [{ name: 'trail_' }, 'trailing underscore'],
    [{ name: 'has space' }, 'space'],
    [{ name: 'dots.not' }, 'dot'],
    [{ name: 42 }, 'number'],
    [{ name: 'okay', visibility: 'hidden' }, 'bad visibility'],
    [{ name: 'okay', public: 'true' }, 'public not boolean'],
    [{ name: 'okay', visibility: 'public', public: false }, 'contradiction'],
  ])('%j is a 400 (%s)', async (body) => {
    const response = await call(alice, 'POST', '/api/v1/buckets', body);
    expect(response.status).toBe(400);
    const parsed = await json(response);
    expect(typeof parsed.error).toBe('string');
    expect(parsed.error.length).toBeGreaterThan(0);
  });

  it("says what is wrong, in the contract's words", async () => {
    const cases: [unknown, string][] = [
      [{}, 'Bucket name is required'],
      [{ name: 42 }, 'Bucket name must be a string'],
      [{ name: 'ab' }, 'Bucket name must be 3 to 40 characters long'],
      [
        { name: 'My Bucket!' },
        'Bucket name may contain only lowercase letters, digits, hyphens and underscores: it has uppercase letters (M, B), a space and “!”',
      ],
      [{ name: '-photos' }, 'Bucket name must start and end with a lowercase letter or digit'],
      [{ name: 'okay', visibility: 'hidden' }, 'visibility must be "public" or "private"'],
      [{ name: 'okay', public: 'true' }, 'public must be true or false'],
      [{ name: 'okay', visibility: 'public', public: false }, 'visibility and public contradict each other'],
      [[1, 2], 'Body must be a JSON object'],
    ];
    for (const [body, message] of cases) {
      const response = await call(alice, 'POST', '/api/v1/buckets', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await json(response), JSON.stringify(body)).toMatchObject({ error: message, code: 'ValidationError' });
    }
  });

  it('accepts names at the edges of the rule', async () => {
    for (const name of ['abc', 'a'.repeat(40), '0-_9', 'x_y-z']) {
      const response = await call(alice, 'POST', '/api/v1/buckets', { name });
      expect(response.status, name).toBe(201);
    }
  });

  it('refuses bodies that are not JSON objects with 400', async () => {
    for (const body of ['{"name":', '[1,2]', '"photos"', 'null', '']) {
      const response = await fetch(`${server.url}/api/v1/buckets`, {
        method: 'POST',
        headers: { 'x-api-key': alice.apiKey, 'content-type': 'application/json' },
        body,
      });
      expect(response.status, body).toBe(400);
      expect(typeof (await json(response)).error).toBe('string');
    }
  });
});

describe('unknown routes and ids', () => {
  it('unknown routes are 404 {error: "Not found"}', async () => {
    for (const path of ['/api/v2/buckets', '/api/v1/nothing', '/nope.json']) {
      const response = await fetch(`${server.url}${path}`, { headers: { accept: 'application/json' } });
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ error: 'Not found' });
    }
  });

  it('a path that is not valid percent-encoding is a 400 {error, code} with a request id, like every error', async () => {
    for (const path of ['/api/v1/buckets/1/files/%FF', '/storage/some-bucket/%E0%A4%A', '/api/buckets/1/files/bad%']) {
      const response = await fetch(`${server.url}${path}`, { headers: { 'x-api-key': alice.apiKey } });
      expect(response.status, path).toBe(400);
      expect(await json(response), path).toEqual({ error: 'Malformed URL: a path segment is not valid percent-encoding', code: 'ValidationError' });
      expect(response.headers.get('x-request-id'), path).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('non-numeric or unknown bucket ids are Bucket not found', async () => {
    for (const id of ['abc', '0', '999999', '-1', '1.5']) {
      const response = await call(alice, 'GET', `/api/v1/buckets/${id}`);
      expect(response.status, id).toBe(404);
      expect(await json(response)).toMatchObject({ error: 'Bucket not found' });
    }
  });
});
