/**
 * Folders (decisions.md, "Folders"): a `/` in a name, literal or `%2F`, on
 * every file route of both APIs and on `/storage/…` urls; the delete alias
 * beside folder paths; `url` with literal slashes; listing with
 * `delimiter=/`, paged through files and folders together.
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

const APIS = {
  developer: { base: '/api/v1/buckets', auth: () => ({ 'x-api-key': user.apiKey }) },
  client: { base: '/api/buckets', auth: () => ({ authorization: `Bearer ${user.token}` }) },
} as const;
type ApiName = keyof typeof APIS;

const call = (api: ApiName, pathname: string, init: RequestInit = {}) =>
  fetch(`${server.url}${APIS[api].base}${pathname}`, { ...init, headers: { ...APIS[api].auth(), ...(init.headers as Record<string, string>) } });

async function newBucket(api: ApiName = 'developer'): Promise<{ id: number; storageName: string }> {
  const response = await call(api, '', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: `f-${randomBytes(4).toString('hex')}` }),
  });
  const id = (await json(response)).data.id as number;
  const put = await call(api, `/${id}/files/probe`, { method: 'PUT', body: 'x' });
  expect(put.status).toBe(201);
  const listed = await json(await call(api, `/${id}/files`));
  const url = new URL(listed.data[0].url as string);
  await call(api, `/${id}/files/probe`, { method: 'DELETE' });
  return { id, storageName: url.pathname.split('/')[2]! };
}

async function names(bucket: number): Promise<string[]> {
  return (await json(await call('developer', `/${bucket}/files`))).data.map((f: { filename: string }) => f.filename);
}

describe.each(['developer', 'client'] as const)('folders on the %s API', (api) => {
  it('PUT, GET, HEAD and DELETE take a name with literal slashes or %2F alike', async () => {
    const { id } = await newBucket(api);
    const put = await call(api, `/${id}/files/photos/2026/cat.jpg`, { method: 'PUT', body: 'meow' });
    expect(put.status).toBe(201);
    expect((await json(put)).data).toEqual({ filename: 'photos/2026/cat.jpg', size: 4, updated: false });

    // Bytes without a Content-Type: the type is guessed from the name's extension.
    const replaced = await call(api, `/${id}/files/photos%2F2026%2Fcat.jpg`, { method: 'PUT', body: new TextEncoder().encode('purr') });
    expect((await json(replaced)).data).toEqual({ filename: 'photos/2026/cat.jpg', size: 4, updated: true });

    for (const path of ['photos/2026/cat.jpg', 'photos%2F2026%2Fcat.jpg', 'photos/2026%2Fcat.jpg']) {
      const got = await call(api, `/${id}/files/${path}`);
      expect(got.status, path).toBe(200);
      expect(got.headers.get('content-type')).toBe('image/jpeg');
      expect(await got.text()).toBe('purr');
      const head = await call(api, `/${id}/files/${path}`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe('4');
    }
    expect((await call(api, `/${id}/files/photos/2026`)).status).toBe(404);

    const deleted = await call(api, `/${id}/files/photos%2F2026/cat.jpg`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(await json(deleted)).toEqual({ message: 'File deleted successfully' });
    expect(await names(id)).toEqual([]);
  });

  it('lists with delimiter=/ : files directly under the prefix in data, folders beside them', async () => {
    const { id } = await newBucket(api);
    for (const name of ['a.txt', 'docs/readme.md', 'docs/v1/spec.md', 'docs/v2/', 'photos/2026/cat.jpg', 'z.txt']) {
      const body = name.endsWith('/') ? '' : 'x';
      expect((await call(api, `/${id}/files/${name}`, { method: 'PUT', body })).status, name).toBe(201);
    }
    const root = await json(await call(api, `/${id}/files?delimiter=/`));
    expect(root.data.map((f: { filename: string }) => f.filename)).toEqual(['a.txt', 'z.txt']);
    expect(root.objects).toEqual(root.data);
    expect(root.folders).toEqual(['docs/', 'photos/']);
    expect(root.next_cursor).toBeNull();

    const docs = await json(await call(api, `/${id}/files?delimiter=/&prefix=docs/`));
    expect(docs.data.map((f: { filename: string }) => f.filename)).toEqual(['docs/readme.md']);
    expect(docs.folders).toEqual(['docs/v1/', 'docs/v2/']);

    // A marker is not a file inside its own folder...
    const v2 = await json(await call(api, `/${id}/files?delimiter=/&prefix=docs/v2/`));
    expect(v2).toEqual({ data: [], objects: [], folders: [], next_cursor: null });
    // ...but an object like any other without a delimiter, where folders is [].
    const flat = await json(await call(api, `/${id}/files?prefix=docs/`));
    expect(flat.data.map((f: { filename: string }) => f.filename)).toEqual(['docs/readme.md', 'docs/v1/spec.md', 'docs/v2/']);
    expect(flat.folders).toEqual([]);
    expect(flat.data.find((f: { filename: string }) => f.filename === 'docs/v2/').size).toBe(0);
  });
});

describe('folders', () => {
  it('pages through files and folders together, one entry at a time', async () => {
    const { id } = await newBucket();
    // Folders with many names each, so a page boundary falls inside a folder, and names that sort between them.
    const stored = ['a', 'b/1', 'b/2', 'b/3', 'b.txt', 'b0', 'c/d/e', 'c/x', 'd/', 'e'];
    for (let i = 0; i < 30; i++) stored.push(`big/${String(i).padStart(2, '0')}`);
    for (const name of stored) {
      expect((await call('developer', `/${id}/files/${name}`, { method: 'PUT', body: name.endsWith('/') ? '' : 'x' })).status, name).toBe(201);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?delimiter=/&limit=1${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await json(await call('developer', `/${id}/files${query}`));
      expect(page.data.length + page.folders.length).toBe(1);
      seen.push(...page.data.map((f: { filename: string }) => f.filename), ...page.folders);
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null && pages < 50);
    expect(seen).toEqual(['a', 'b.txt', 'b/', 'b0', 'big/', 'c/', 'd/', 'e']);

    // Pages of 3 give the same sequence.
    const all = await json(await call('developer', `/${id}/files?delimiter=/`));
    expect([...all.data.map((f: { filename: string }) => f.filename), ...all.folders].sort()).toEqual([...seen].sort());
    const first = await json(await call('developer', `/${id}/files?delimiter=/&limit=3`));
    expect([first.data.map((f: { filename: string }) => f.filename), first.folders]).toEqual([['a', 'b.txt'], ['b/']]);
    const second = await json(await call('developer', `/${id}/files?delimiter=/&limit=3&cursor=${first.next_cursor}`));
    expect([second.data.map((f: { filename: string }) => f.filename), second.folders]).toEqual([['b0'], ['big/', 'c/']]);
  });

  it('refuses another delimiter with 400', async () => {
    const { id } = await newBucket();
    const response = await call('developer', `/${id}/files?delimiter=-`);
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatch(/delimiter/);
  });

  it('the delete alias beside folder paths: …/a/b/delete deletes a/b; a file named a/delete is deleted with %2F', async () => {
    const { id } = await newBucket();
    for (const name of ['a/b', 'a/delete', 'delete']) expect((await call('developer', `/${id}/files/${name}`, { method: 'PUT', body: 'x' })).status).toBe(201);

    expect((await call('developer', `/${id}/files/a/b/delete`, { method: 'DELETE' })).status).toBe(200);
    expect(await names(id)).toEqual(['a/delete', 'delete']);

    expect((await call('developer', `/${id}/files/a%2Fdelete`, { method: 'DELETE' })).status).toBe(200);
    expect(await names(id)).toEqual(['delete']);

    // The singular alias too, and a file named `delete` on its own needs no escaping.
    expect((await fetch(`${server.url}/api/v1/bucket/${id}/files/delete`, { method: 'DELETE', headers: { 'x-api-key': user.apiKey } })).status).toBe(200);
    expect(await names(id)).toEqual([]);

    // The Client API has no alias: a path ending in /delete names that file.
    expect((await call('client', `/${id}/files/x/delete`, { method: 'PUT', body: 'x' })).status).toBe(201);
    expect((await call('client', `/${id}/files/x/delete`, { method: 'DELETE' })).status).toBe(200);
    expect(await names(id)).toEqual([]);
  });

  it('url keeps the slashes literal, each segment percent-encoded, and /storage serves it', async () => {
    const { id, storageName } = await newBucket();
    const name = 'my photos/été 2026/cat #1.jpg';
    const encoded = name.split('/').map(encodeURIComponent).join('/');
    expect((await call('developer', `/${id}/files/${encodeURIComponent(name)}`, { method: 'PUT', body: 'meow' })).status).toBe(201);
    const listed = await json(await call('developer', `/${id}/files`));
    expect(listed.data[0].url).toBe(`${server.url}/storage/${storageName}/${encoded}`);
    for (const url of [listed.data[0].url, `${server.url}/storage/${storageName}/${encodeURIComponent(name)}`]) {
      const got = await fetch(url, { headers: { 'x-api-key': user.apiKey } });
      expect(got.status, url).toBe(200);
      expect(await got.text()).toBe('meow');
    }
    expect((await fetch(listed.data[0].url)).status).toBe(401);
  });

  it('a multipart part named with a path is stored under its base name', async () => {
    const { id } = await newBucket();
    for (const sent of ['dir/sub/report.pdf', 'C:\\Users\\me\\report.pdf']) {
      const form = new FormData();
      form.append('file', new Blob(['%PDF-1.4']), sent);
      const response = await call('developer', `/${id}/files`, { method: 'POST', body: form });
      expect(response.status, sent).toBe(201);
      expect((await json(response)).data.filename).toBe('report.pdf');
    }
    expect(await names(id)).toEqual(['report.pdf']);
  });

  it('a folder marker must be empty: 400 with bytes, stored and counted when empty', async () => {
    const { id } = await newBucket();
    const full = await call('developer', `/${id}/files/empty/`, { method: 'PUT', body: 'x' });
    expect(full.status).toBe(400);
    expect((await json(full)).error).toMatch(/folder marker/);
    const chunked = await call('developer', `/${id}/files/empty/`, {
      method: 'PUT',
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new Uint8Array(100_000));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(400);
    expect(await names(id)).toEqual([]);

    expect((await call('developer', `/${id}/files/empty/`, { method: 'PUT', body: '' })).status).toBe(201);
    const bucket = await json(await call('developer', `/${id}`));
    expect(bucket.data).toMatchObject({ object_count: 1, total_bytes: 0 });
    expect((await json(await call('developer', `/${id}/files?delimiter=/`))).folders).toEqual(['empty/']);
  });
});
