/**
 * The Client API (service.md, "Client API"): every row of its table under
 * /api/buckets, authenticated by the session cookie or the login token, with
 * the same behaviour and bodies as the Developer API. Also: which credential
 * opens which API, and the CSRF guard on cookie-authenticated writes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

type Mode = 'token' | 'cookie';

/**
 * fetch against the Client API as `user`. In cookie mode it behaves like the
 * dashboard in a browser: the cookie, plus the service's own Origin on writes.
 */
function clientApi(user: Pick<TestUser, 'token' | 'cookie'>, mode: Mode = 'token') {
  return (pathname: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    const auth: Record<string, string> =
      mode === 'token'
        ? { authorization: `Bearer ${user.token}` }
        : { cookie: user.cookie, ...(method === 'GET' || method === 'HEAD' ? {} : { origin: server.url }) };
    const jsonType = typeof init.body === 'string' ? { 'content-type': 'application/json' } : {};
    return fetch(`${server.url}/api/buckets${pathname}`, { ...init, headers: { ...auth, ...jsonType, ...(init.headers ?? {}) } as Record<string, string> });
  };
}

async function createBucket(api: ReturnType<typeof clientApi>, name: string, extra: Record<string, unknown> = {}) {
  const response = await api('', { method: 'POST', body: JSON.stringify({ name, ...extra }) });
  expect(response.status).toBe(201);
  return (await json(response)).data as { id: number; name: string; public: boolean; object_count: number; total_bytes: number; created_at: string };
}

function multipart(bytes: Uint8Array | string, filename: string, type = 'application/octet-stream', field = 'file'): FormData {
  const form = new FormData();
  form.append(field, new Blob([bytes as BlobPart], { type }), filename);
  return form;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

beforeAll(async () => {
  server = await startTestServer();
  alice = await signUp(server.url);
  bob = await signUp(server.url);
});

afterAll(async () => {
  await server?.close();
});

describe('which credential opens the Client API', () => {
  it('refuses a request without credentials with 401 Unauthorized', async () => {
    const response = await fetch(`${server.url}/api/buckets`);
    expect(response.status).toBe(401);
    expect((await json(response)).error).toBe('Unauthorized');
  });

  it('accepts the session cookie and the login token (Authorization: Bearer)', async () => {
    for (const mode of ['cookie', 'token'] as const) {
      const response = await clientApi(alice, mode)('');
      expect(response.status, mode).toBe(200);
      const body = await json(response);
      expect(body.data).toEqual(body.buckets);
    }
  });

  it('does not open for an API key, in either header', async () => {
    for (const headers of [{ 'x-api-key': alice.apiKey }, { authorization: `Bearer ${alice.apiKey}` }] as Array<Record<string, string>>) {
      const response = await fetch(`${server.url}/api/buckets`, { headers });
      expect(response.status).toBe(401);
      expect((await json(response)).error).toBe('Unauthorized');
    }
    // Not for writes either, and nothing is created.
    const create = await fetch(`${server.url}/api/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': alice.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'made-with-a-key' }),
    });
    expect(create.status).toBe(401);
    const list = await json(await devApi(server.url, alice)(''));
    expect(list.data.map((b: { name: string }) => b.name)).not.toContain('made-with-a-key');
  });

  it('refuses a malformed, tampered or foreign token', async () => {
    const [header, payload] = alice.token.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(43)}`;
    for (const token of ['nonsense', forged, `${alice.token}x`]) {
      const response = await fetch(`${server.url}/api/buckets`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status, token).toBe(401);
    }
    const badCookie = await fetch(`${server.url}/api/buckets`, { headers: { cookie: 'pail_session=nonsense' } });
    expect(badCookie.status).toBe(401);
  });

  it('does not let a session token or cookie open the Developer API', async () => {
    for (const headers of [{ authorization: `Bearer ${alice.token}` }, { 'x-api-key': alice.token }, { cookie: alice.cookie }] as Array<
      Record<string, string>
    >) {
      const response = await fetch(`${server.url}/api/v1/buckets`, { headers });
      expect(response.status).toBe(401);
      expect((await json(response)).error).toBe('Unauthorized');
    }
  });

  it('does not let a session token open even a public file on the Developer API', async () => {
    const bucket = await createBucket(clientApi(alice), 'token-on-dev-public', { visibility: 'public' });
    const put = await clientApi(alice)(`/${bucket.id}/files/a.txt`, { method: 'PUT', body: 'hi', headers: { 'content-type': 'text/plain' } });
    expect(put.status).toBe(201);
    // Anonymous is fine for a public bucket...
    expect((await fetch(`${server.url}/api/v1/buckets/${bucket.id}/files/a.txt`)).status).toBe(200);
    // ...but a credential that is not an API key is an invalid key.
    const withToken = await fetch(`${server.url}/api/v1/buckets/${bucket.id}/files/a.txt`, { headers: { authorization: `Bearer ${alice.token}` } });
    expect(withToken.status).toBe(401);
  });
});

describe.each(['token', 'cookie'] as const)('buckets through the Client API (%s)', (mode) => {
  const api = () => clientApi(alice, mode);

  it('POST /api/buckets creates a private bucket by default: 201 {data: StorageBucket}', async () => {
    const response = await api()('', { method: 'POST', body: JSON.stringify({ name: `photos-${mode}` }) });
    expect(response.status).toBe(201);
    const { data } = await json(response);
    expect(Object.keys(data).sort()).toEqual([
      'allowed_types',
      'created_at',
      'default_retention',
      'id',
      'max_file_bytes',
      'name',
      'noncurrent_bytes',
      'object_count',
      'object_lock',
      'public',
      'total_bytes',
      'versioning',
    ]);
    expect(data).toMatchObject({
      max_file_bytes: null,
      allowed_types: null,
      versioning: 'unversioned',
      noncurrent_bytes: 0,
      object_lock: false,
      default_retention: null,
    });
    expect(data).toMatchObject({ name: `photos-${mode}`, public: false, object_count: 0, total_bytes: 0 });
    expect(typeof data.id).toBe('number');
    expect(data.created_at).toMatch(ISO);
  });

  it('POST /api/buckets honours visibility and public', async () => {
    expect((await createBucket(api(), `vis-public-${mode}`, { visibility: 'public' })).public).toBe(true);
    expect((await createBucket(api(), `bool-public-${mode}`, { public: true })).public).toBe(true);
    expect((await createBucket(api(), `vis-private-${mode}`, { visibility: 'private' })).public).toBe(false);
  });

  it('POST /api/buckets refuses bad input with 400 {error} and a duplicate with 409', async () => {
    for (const body of [
      {},
      { name: 'ab' },
      { name: 'Upper-Case' },
      { name: 'ok-name', visibility: 'secret' },
      { name: 'ok-name', public: 'yes' },
      { name: 'ok-name', visibility: 'public', public: false },
    ]) {
      const response = await api()('', { method: 'POST', body: JSON.stringify(body) });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(typeof (await json(response)).error).toBe('string');
    }
    const notJson = await api()('', { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    await createBucket(api(), `dup-${mode}`);
    const dup = await api()('', { method: 'POST', body: JSON.stringify({ name: `dup-${mode}` }) });
    expect(dup.status).toBe(409);
    expect((await json(dup)).error).toBe('Bucket name already exists');
  });

  it('GET /api/buckets lists own buckets in ascending id order, data repeated as buckets', async () => {
    const a = await createBucket(api(), `list-a-${mode}`);
    const b = await createBucket(api(), `list-b-${mode}`);
    const response = await api()('');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.buckets).toEqual(body.data);
    const ids = body.data.map((x: { id: number }) => x.id);
    expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y));
    expect(ids).toContain(a.id);
    expect(ids).toContain(b.id);
    expect(body.data.find((x: { id: number }) => x.id === a.id)).toEqual(a);
  });

  it('GET /api/buckets/:id returns the bucket; missing, foreign or malformed ids are 404 Bucket not found', async () => {
    const bucket = await createBucket(api(), `get-${mode}`);
    const response = await api()(`/${bucket.id}`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ data: bucket });

    const foreign = await createBucket(clientApi(bob), `bobs-${mode}`);
    for (const id of [String(foreign.id), '999999', 'abc', '0', '9999999999999999', '99999999999999999999']) {
      const missing = await api()(`/${id}`);
      expect(missing.status, id).toBe(404);
      expect((await json(missing)).error).toBe('Bucket not found');
    }
    // Bob's bucket is not in Alice's list either.
    const list = await json(await api()(''));
    expect(list.data.map((x: { id: number }) => x.id)).not.toContain(foreign.id);
  });

  it('POST and PATCH /api/buckets/:id/visibility switch visibility: 200 {message: Visibility updated}', async () => {
    const bucket = await createBucket(api(), `visibility-${mode}`);
    const steps: Array<[string, Record<string, unknown>, boolean]> = [
      ['POST', { visibility: 'public' }, true],
      ['PATCH', { visibility: 'private' }, false],
      ['PATCH', { public: true }, true],
      ['POST', { public: false }, false],
    ];
    for (const [method, body, expected] of steps) {
      const response = await api()(`/${bucket.id}/visibility`, { method, body: JSON.stringify(body) });
      expect(response.status, `${method} ${JSON.stringify(body)}`).toBe(200);
      expect(await json(response)).toEqual({ message: 'Visibility updated' });
      expect((await json(await api()(`/${bucket.id}`))).data.public).toBe(expected);
    }
    for (const method of ['POST', 'PATCH']) {
      for (const body of [{}, { visibility: 'hidden' }, { public: 'true' }]) {
        const response = await api()(`/${bucket.id}/visibility`, { method, body: JSON.stringify(body) });
        expect(response.status, `${method} ${JSON.stringify(body)}`).toBe(400);
        expect(typeof (await json(response)).error).toBe('string');
      }
      const missing = await api()('/999999/visibility', { method, body: JSON.stringify({ visibility: 'public' }) });
      expect(missing.status).toBe(404);
      expect((await json(missing)).error).toBe('Bucket not found');
    }
  });

  it('DELETE /api/buckets/:id soft-deletes: 200 {message}, then 404 everywhere, and the name is free again', async () => {
    const bucket = await createBucket(api(), `doomed-${mode}`);
    expect((await api()(`/${bucket.id}/files/x.txt`, { method: 'PUT', body: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const response = await api()(`/${bucket.id}`, { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ message: 'Bucket deleted successfully' });

    for (const [path, init] of [
      [`/${bucket.id}`, {}],
      [`/${bucket.id}/files`, {}],
      [`/${bucket.id}/objects`, {}],
      [`/${bucket.id}/files/x.txt`, {}],
      [`/${bucket.id}`, { method: 'DELETE' }],
      [`/${bucket.id}/visibility`, { method: 'PATCH', body: JSON.stringify({ visibility: 'public' }) }],
    ] as const) {
      const after = await api()(path, init);
      expect(after.status, `${init && 'method' in init ? init.method : 'GET'} ${path}`).toBe(404);
      expect((await json(after)).error).toBe('Bucket not found');
    }
    const list = await json(await api()(''));
    expect(list.data.map((x: { id: number }) => x.id)).not.toContain(bucket.id);
    const again = await createBucket(api(), `doomed-${mode}`);
    expect(again.id).toBeGreaterThan(bucket.id);
  });
});

describe.each(['token', 'cookie'] as const)('files through the Client API (%s)', (mode) => {
  const api = () => clientApi(alice, mode);

  it('POST /:id/files and POST /:id/upload take a multipart file: 201 {data: {filename, size, updated}}', async () => {
    const bucket = await createBucket(api(), `multipart-${mode}`);
    const first = await api()(`/${bucket.id}/files`, { method: 'POST', body: multipart('hello', 'hello.txt', 'text/plain') });
    expect(first.status).toBe(201);
    expect(await json(first)).toEqual({ data: { filename: 'hello.txt', size: 5, updated: false } });

    const alias = await api()(`/${bucket.id}/upload`, { method: 'POST', body: multipart('via alias', 'alias.txt', 'text/plain') });
    expect(alias.status).toBe(201);
    expect(await json(alias)).toEqual({ data: { filename: 'alias.txt', size: 9, updated: false } });

    // Replacing through the alias reports updated and the old bytes stop counting.
    const replaced = await api()(`/${bucket.id}/upload`, { method: 'POST', body: multipart('hi', 'hello.txt', 'text/plain') });
    expect(replaced.status).toBe(201);
    expect(await json(replaced)).toEqual({ data: { filename: 'hello.txt', size: 2, updated: true } });

    const got = await api()(`/${bucket.id}`);
    expect((await json(got)).data).toMatchObject({ object_count: 2, total_bytes: 2 + 9 });

    const download = await api()(`/${bucket.id}/files/hello.txt`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/plain');
    expect(await download.text()).toBe('hi');
  });

  it('multipart without a part named file is 400 {error}, on both paths', async () => {
    const bucket = await createBucket(api(), `multipart-bad-${mode}`);
    for (const path of ['files', 'upload']) {
      const response = await api()(`/${bucket.id}/${path}`, { method: 'POST', body: multipart('x', 'x.txt', 'text/plain', 'other') });
      expect(response.status, path).toBe(400);
      expect(typeof (await json(response)).error).toBe('string');
    }
    expect((await json(await api()(`/${bucket.id}`))).data.object_count).toBe(0);
  });

  it('PUT /:id/files/:filename stores the raw body; GET gives the same bytes back; HEAD gives the metadata', async () => {
    const bucket = await createBucket(api(), `raw-${mode}`);
    const bytes = new Uint8Array(70_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) % 256;
    const name = 'photo ü #1.png';
    const path = `/${bucket.id}/files/${encodeURIComponent(name)}`;

    const put = await api()(path, { method: 'PUT', body: bytes, headers: { 'content-type': 'image/png' } });
    expect(put.status).toBe(201);
    expect(await json(put)).toEqual({ data: { filename: name, size: bytes.length, updated: false } });

    const get = await api()(path);
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toBe('image/png');
    expect(get.headers.get('content-length')).toBe(String(bytes.length));
    expect(get.headers.get('etag')).toBeTruthy();
    expect(get.headers.get('last-modified')).toBeTruthy();
    expect(new Uint8Array(await get.arrayBuffer())).toEqual(bytes);

    const head = await api()(path, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('image/png');
    expect(head.headers.get('content-length')).toBe(String(bytes.length));
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect(head.headers.get('last-modified')).toBe(get.headers.get('last-modified'));
    expect(head.headers.get('accept-ranges')).toBe('bytes');
    expect((await head.arrayBuffer()).byteLength).toBe(0);

    // Replacing with PUT reports updated and serves the new bytes.
    const smaller = new TextEncoder().encode('replaced');
    const again = await api()(path, { method: 'PUT', body: smaller, headers: { 'content-type': 'application/x-custom' } });
    expect(again.status).toBe(201);
    expect(await json(again)).toEqual({ data: { filename: name, size: smaller.length, updated: true } });
    const after = await api()(path);
    expect(after.headers.get('content-type')).toBe('application/x-custom');
    expect(new Uint8Array(await after.arrayBuffer())).toEqual(smaller);
    expect((await json(await api()(`/${bucket.id}`))).data).toMatchObject({ object_count: 1, total_bytes: smaller.length });
  });

  it('PUT without Content-Type guesses from the extension; a 0-byte body is a file', async () => {
    const bucket = await createBucket(api(), `raw-guess-${mode}`);
    const put = await api()(`/${bucket.id}/files/notes.txt`, { method: 'PUT', body: new TextEncoder().encode('plain') });
    expect(put.status).toBe(201);
    const head = await api()(`/${bucket.id}/files/notes.txt`, { method: 'HEAD' });
    expect(head.headers.get('content-type')).toMatch(/^text\/plain/);

    const empty = await api()(`/${bucket.id}/files/empty.bin`, {
      method: 'PUT',
      body: new Uint8Array(0),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(empty.status).toBe(201);
    expect(await json(empty)).toEqual({ data: { filename: 'empty.bin', size: 0, updated: false } });
    const got = await api()(`/${bucket.id}/files/empty.bin`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-length')).toBe('0');
    expect((await got.arrayBuffer()).byteLength).toBe(0);
  });

  it('GET /:id/files and its alias /:id/objects list files ascending by name, data repeated as objects', async () => {
    const bucket = await createBucket(api(), `listing-${mode}`);
    for (const name of ['b.txt', 'a.txt', 'c d.txt']) {
      const put = await api()(`/${bucket.id}/files/${encodeURIComponent(name)}`, { method: 'PUT', body: name, headers: { 'content-type': 'text/plain' } });
      expect(put.status).toBe(201);
    }
    const files = await api()(`/${bucket.id}/files`);
    const objects = await api()(`/${bucket.id}/objects`);
    expect(files.status).toBe(200);
    expect(objects.status).toBe(200);
    const body = await json(files);
    expect(await json(objects)).toEqual(body);
    expect(body.objects).toEqual(body.data);
    expect(body.next_cursor).toBeNull();
    expect(body.data.map((o: { filename: string }) => o.filename)).toEqual(['a.txt', 'b.txt', 'c d.txt']);
    const [first] = body.data;
    expect(Object.keys(first).sort()).toEqual(['bucket_id', 'content_type', 'created_at', 'filename', 'id', 'size', 'storage_name', 'updated_at', 'url']);
    expect(first).toMatchObject({ id: `${bucket.id}/a.txt`, bucket_id: bucket.id, filename: 'a.txt', size: 5, content_type: 'text/plain' });
    expect(first.created_at).toMatch(ISO);
    expect(first.updated_at).toBe(first.created_at);
    expect(first.url.startsWith(`${server.url}/storage/`)).toBe(true);
    expect(first.url.endsWith('/a.txt')).toBe(true);

    const page = await json(await api()(`/${bucket.id}/objects?limit=2`));
    expect(page.data.map((o: { filename: string }) => o.filename)).toEqual(['a.txt', 'b.txt']);
    expect(typeof page.next_cursor).toBe('string');
  });

  it('DELETE /:id/files/:filename removes the file: 200 {message}, then 404 File not found', async () => {
    const bucket = await createBucket(api(), `delete-file-${mode}`);
    await api()(`/${bucket.id}/files/gone.txt`, { method: 'PUT', body: 'bye', headers: { 'content-type': 'text/plain' } });
    const response = await api()(`/${bucket.id}/files/gone.txt`, { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ message: 'File deleted successfully' });

    const get = await api()(`/${bucket.id}/files/gone.txt`);
    expect(get.status).toBe(404);
    expect(await json(get)).toMatchObject({ error: 'File not found' });
    expect((await api()(`/${bucket.id}/files/gone.txt`, { method: 'HEAD' })).status).toBe(404);
    const again = await api()(`/${bucket.id}/files/gone.txt`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect((await json(again)).error).toBe('File not found');
    expect((await json(await api()(`/${bucket.id}`))).data).toMatchObject({ object_count: 0, total_bytes: 0 });
  });

  it("another user's bucket is 404 Bucket not found for every file operation", async () => {
    const foreign = await createBucket(clientApi(bob), `bob-files-${mode}`);
    await clientApi(bob)(`/${foreign.id}/files/secret.txt`, { method: 'PUT', body: 'secret', headers: { 'content-type': 'text/plain' } });
    const attempts: Array<[string, RequestInit]> = [
      [`/${foreign.id}/files`, {}],
      [`/${foreign.id}/objects`, {}],
      [`/${foreign.id}/files/secret.txt`, {}],
      [`/${foreign.id}/files/secret.txt`, { method: 'DELETE' }],
      [`/${foreign.id}/files/secret.txt`, { method: 'PUT', body: 'overwrite', headers: { 'content-type': 'text/plain' } }],
      [`/${foreign.id}/files`, { method: 'POST', body: multipart('x', 'x.txt') }],
      [`/${foreign.id}/upload`, { method: 'POST', body: multipart('x', 'x.txt') }],
      [`/${foreign.id}`, { method: 'DELETE' }],
    ];
    for (const [path, init] of attempts) {
      const response = await api()(path, init as never);
      expect(response.status, `${init.method ?? 'GET'} ${path}`).toBe(404);
      expect((await json(response)).error).toBe('Bucket not found');
    }
    const head = await api()(`/${foreign.id}/files/secret.txt`, { method: 'HEAD' });
    expect(head.status).toBe(404);
    // Bob's file is untouched.
    const bobs = await clientApi(bob)(`/${foreign.id}/files/secret.txt`);
    expect(await bobs.text()).toBe('secret');
  });
});

describe('the Client API and the Developer API are one implementation', () => {
  it('give the same JSON for the same bucket: get bucket, list buckets, list files', async () => {
    const client = clientApi(alice);
    const dev = devApi(server.url, alice);
    const bucket = await createBucket(client, 'mirror');
    // Files uploaded through either API.
    expect((await client(`/${bucket.id}/files/one.txt`, { method: 'PUT', body: 'one', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    expect((await dev(`/${bucket.id}/files/two.json`, { method: 'PUT', body: '{"two":2}', headers: { 'content-type': 'application/json' } })).status).toBe(201);
    expect((await dev(`/${bucket.id}/files`, { method: 'POST', body: multipart('three', 'three.txt', 'text/plain') })).status).toBe(201);

    const pairs: Array<[string, string]> = [
      [`/${bucket.id}`, `/${bucket.id}`],
      ['', ''],
      [`/${bucket.id}/files`, `/${bucket.id}/files`],
      [`/${bucket.id}/objects`, `/${bucket.id}/files`],
      [`/${bucket.id}/files?limit=1`, `/${bucket.id}/files?limit=1`],
      ['/999999', '/999999'],
      [`/${bucket.id}/files/none.txt`, `/${bucket.id}/files/none.txt`],
    ];
    for (const [clientPath, devPath] of pairs) {
      const fromClient = await client(clientPath);
      const fromDev = await dev(devPath);
      expect(fromClient.status, clientPath).toBe(fromDev.status);
      expect(await json(fromClient), clientPath).toEqual(await json(fromDev));
    }
    const got = await json(await client(`/${bucket.id}`));
    expect(got.data).toMatchObject({ object_count: 3, total_bytes: 3 + 9 + 5 });
  });

  it('give the same bytes and headers for a download and a HEAD', async () => {
    const client = clientApi(alice);
    const dev = devApi(server.url, alice);
    const bucket = await createBucket(client, 'mirror-bytes');
    const bytes = new Uint8Array(4096).map((_, i) => (i * 13) % 256);
    expect((await dev(`/${bucket.id}/files/data.bin`, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/x-test' } })).status).toBe(201);
    for (const method of ['GET', 'HEAD']) {
      const fromClient = await client(`/${bucket.id}/files/data.bin`, { method });
      const fromDev = await dev(`/${bucket.id}/files/data.bin`, { method });
      expect(fromClient.status).toBe(200);
      expect(fromDev.status).toBe(200);
      for (const header of ['content-type', 'content-length', 'etag', 'last-modified', 'accept-ranges']) {
        expect(fromClient.headers.get(header), `${method} ${header}`).toBe(fromDev.headers.get(header));
      }
      const [a, b] = [new Uint8Array(await fromClient.arrayBuffer()), new Uint8Array(await fromDev.arrayBuffer())];
      expect(a).toEqual(b);
      if (method === 'GET') expect(a).toEqual(bytes);
    }
    // A range through the Client API works as on the Developer API.
    const ranged = await client(`/${bucket.id}/files/data.bin`, { headers: { range: 'bytes=10-19' } });
    expect(ranged.status).toBe(206);
    expect(new Uint8Array(await ranged.arrayBuffer())).toEqual(bytes.subarray(10, 20));
  });

  it('give the same messages for visibility, file delete and bucket delete', async () => {
    const client = clientApi(alice);
    const dev = devApi(server.url, alice);
    const viaClient = await createBucket(client, 'same-messages-a');
    const viaDev = await createBucket(client, 'same-messages-b');
    for (const [api, id] of [
      [client, viaClient.id],
      [dev, viaDev.id],
    ] as const) {
      await api(`/${id}/files/f.txt`, { method: 'PUT', body: 'f', headers: { 'content-type': 'text/plain' } });
    }
    const results = await Promise.all(
      (
        [
          [client, viaClient.id],
          [dev, viaDev.id],
        ] as const
      ).map(async ([api, id]) => {
        const visibility = await json(await api(`/${id}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'public' }) }));
        const deleteFile = await json(await api(`/${id}/files/f.txt`, { method: 'DELETE' }));
        const deleteBucket = await json(await api(`/${id}`, { method: 'DELETE' }));
        return { visibility, deleteFile, deleteBucket };
      }),
    );
    expect(results[0]).toEqual(results[1]);
  });

  it('share the data: a bucket made through one is seen through the other', async () => {
    const bucket = await createBucket(clientApi(alice), 'shared-view');
    const fromDev = await devApi(server.url, alice)(`/${bucket.id}`);
    expect(fromDev.status).toBe(200);
    expect(await json(fromDev)).toEqual({ data: bucket });
  });
});

describe('CSRF: cookie-authenticated writes from another origin are refused', () => {
  let bucketId: number;

  beforeAll(async () => {
    const api = clientApi(alice);
    bucketId = (await createBucket(api, 'csrf-target')).id;
    await api(`/${bucketId}/files/keep.txt`, { method: 'PUT', body: 'keep', headers: { 'content-type': 'text/plain' } });
  });

  function writes(): Array<[string, string, RequestInit & { headers?: Record<string, string> }]> {
    return [
      ['POST', '', { body: JSON.stringify({ name: 'csrf-made' }), headers: { 'content-type': 'application/json' } }],
      ['DELETE', `/${bucketId}`, {}],
      ['POST', `/${bucketId}/visibility`, { body: JSON.stringify({ visibility: 'public' }), headers: { 'content-type': 'application/json' } }],
      ['PATCH', `/${bucketId}/visibility`, { body: JSON.stringify({ visibility: 'public' }), headers: { 'content-type': 'application/json' } }],
      ['POST', `/${bucketId}/files`, { body: multipart('evil', 'evil.txt') }],
      ['POST', `/${bucketId}/upload`, { body: multipart('evil', 'evil.txt') }],
      ['PUT', `/${bucketId}/files/evil.txt`, { body: 'evil', headers: { 'content-type': 'text/plain' } }],
      ['PUT', `/${bucketId}/files/keep.txt`, { body: 'evil', headers: { 'content-type': 'text/plain' } }],
      ['DELETE', `/${bucketId}/files/keep.txt`, {}],
    ];
  }

  async function unchanged() {
    const api = clientApi(alice);
    const bucket = await json(await api(`/${bucketId}`));
    expect(bucket.data).toMatchObject({ public: false, object_count: 1, total_bytes: 4 });
    expect(await (await api(`/${bucketId}/files/keep.txt`)).text()).toBe('keep');
    const list = await json(await api(''));
    expect(list.data.map((b: { name: string }) => b.name)).not.toContain('csrf-made');
  }

  it.each([
    ['a foreign Origin', { origin: 'https://evil.example' }],
    ['Origin: null', { origin: 'null' }],
    ['the same host on another port', { origin: 'http://127.0.0.1:1' }],
    ['no Origin but Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
  ])('refuses every state-changing request with %s: 403 Cross-site request refused', async (_label, extra) => {
    for (const [method, path, init] of writes()) {
      const response = await fetch(`${server.url}/api/buckets${path}`, {
        ...init,
        method,
        headers: { cookie: alice.cookie, ...init.headers, ...extra },
      });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect((await json(response)).error).toBe('Cross-site request refused');
    }
    await unchanged();
  });

  it('refuses cross-site key management and logout by cookie too', async () => {
    const headers = { cookie: alice.cookie, origin: 'https://evil.example' };
    const create = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'stolen' }),
    });
    expect(create.status).toBe(403);
    expect((await json(create)).error).toBe('Cross-site request refused');
    const keys = await json(await fetch(`${server.url}/api/keys`, { headers: { authorization: `Bearer ${alice.token}` } }));
    expect(keys.data.map((k: { name: string }) => k.name)).not.toContain('stolen');
    const [key] = keys.data;
    const revoke = await fetch(`${server.url}/api/keys/${key.id}`, { method: 'DELETE', headers });
    expect(revoke.status).toBe(403);
    expect((await devApi(server.url, alice)('')).status).toBe(200);
    const logout = await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers });
    expect(logout.status).toBe(403);
    expect((await fetch(`${server.url}/api/auth/me`, { headers: { cookie: alice.cookie } })).status).toBe(200);
  });

  it('allows reads by cookie from anywhere, and writes by cookie from the own origin', async () => {
    const read = await fetch(`${server.url}/api/buckets/${bucketId}`, { headers: { cookie: alice.cookie, origin: 'https://evil.example' } });
    expect(read.status).toBe(200);
    const ownOrigin = await fetch(`${server.url}/api/buckets/${bucketId}/files/own.txt`, {
      method: 'PUT',
      body: 'own',
      headers: { cookie: alice.cookie, origin: server.url, 'sec-fetch-site': 'same-origin', 'content-type': 'text/plain' },
    });
    expect(ownOrigin.status).toBe(201);
    // A non-browser client (no Origin, no Sec-Fetch-Site) carries no ambient-cookie risk.
    const noOrigin = await fetch(`${server.url}/api/buckets/${bucketId}/files/own.txt`, { method: 'DELETE', headers: { cookie: alice.cookie } });
    expect(noOrigin.status).toBe(200);
  });

  it('does not apply to the bearer token, which a browser never sends by itself', async () => {
    const response = await fetch(`${server.url}/api/buckets/${bucketId}/files/bearer.txt`, {
      method: 'PUT',
      body: 'bearer',
      headers: { authorization: `Bearer ${alice.token}`, origin: 'https://app.example', 'content-type': 'text/plain' },
    });
    expect(response.status).toBe(201);
    const cleanup = await clientApi(alice)(`/${bucketId}/files/bearer.txt`, { method: 'DELETE' });
    expect(cleanup.status).toBe(200);
  });
});
