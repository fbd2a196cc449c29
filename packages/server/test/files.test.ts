/**
 * Files done properly: filename rules, types, overwrite and counts, ETag,
 * Range, conditional requests, pagination, storage and size caps (also under
 * concurrency), and uploads that fail leaving nothing behind.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blake3Hex } from './helpers/blake3.js';
import { json, signUp, type TestUser } from './helpers/client.js';
import { backendKind } from './helpers/backends.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  server = await startTestServer({ env: { MAX_FILE_BYTES: String(2 * 1024 * 1024) } });
  user = await signUp(server.url);
});
afterAll(() => server.close());

/** The default INLINE_MAX_BYTES: files up to this size keep their bytes in the database. */
const INLINE_MAX = 64 * 1024;

const api = (p: string) => `${server.url}/api/v1/buckets${p}`;
const auth = (u: TestUser = user) => ({ 'x-api-key': u.apiKey });

async function newBucket(u: TestUser = user): Promise<number> {
  const response = await fetch(api(''), {
    method: 'POST',
    headers: { ...auth(u), 'content-type': 'application/json' },
    body: JSON.stringify({ name: `b-${randomBytes(4).toString('hex')}` }),
  });
  return (await json(response)).data.id;
}

/** Percent-encodes every dot too, so `.` and `..` reach the server instead of being folded away by URL parsing. */
const encodeName = (filename: string) => encodeURIComponent(filename).replace(/\./g, '%2E');

function put(bucket: number, filename: string, body: BodyInit | null, headers: Record<string, string> = {}, u: TestUser = user) {
  return fetch(api(`/${bucket}/files/${encodeName(filename)}`), { method: 'PUT', headers: { ...auth(u), ...headers }, body });
}

function rawRequest(method: string, pathname: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(server.url);
    const request = http.request({ hostname, port, path: pathname, method, headers: auth() }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** What the blob store really holds under a prefix (files on disk, or S3 objects). */
async function blobKeys(prefix: string, target: TestServer = server): Promise<string[]> {
  const keys: string[] = [];
  for await (const blob of target.app.pail.storage.blobs.list(prefix)) keys.push(blob.key);
  return keys;
}

/** Keys of small files' bytes kept in the database under a prefix. */
async function inlineKeys(prefix: string, target: TestServer = server): Promise<string[]> {
  const rows = await target.app.pail.db.selectFrom('inline_blobs').select('storage_key').where('storage_key', 'like', `${prefix}%`).execute();
  return rows.map((row) => row.storage_key);
}

/** Every stored version's key under a prefix, wherever its bytes are. */
async function storedKeys(prefix: string, target: TestServer = server): Promise<string[]> {
  return [...(await blobKeys(prefix, target)), ...(await inlineKeys(prefix, target))].sort();
}

async function bucketInfo(bucket: number, u: TestUser = user) {
  return (await json(await fetch(api(`/${bucket}`), { headers: auth(u) }))).data;
}

async function listAll(bucket: number, query = '') {
  return json(await fetch(api(`/${bucket}/files${query}`), { headers: auth() }));
}

describe('filenames', () => {
  it('accepts unicode, spaces and 255-byte names, and lists them as given', async () => {
    const bucket = await newBucket();
    const names = ['résumé final.pdf', '日本語.txt', 'a'.repeat(255), 'with%percent', 'emoji-😀.png', 'quote\'"s', 'plus+and&amp'];
    for (const name of names) {
      const response = await put(bucket, name, 'x', { 'content-type': 'text/plain' });
      expect(response.status, name).toBe(201);
      expect((await json(response)).data.filename).toBe(name);
    }
    const listed = (await listAll(bucket)).data.map((o: { filename: string }) => o.filename);
    expect(listed.sort()).toEqual([...names].sort());
    for (const name of names) {
      const got = await fetch(api(`/${bucket}/files/${encodeURIComponent(name)}`), { headers: auth() });
      expect(got.status, name).toBe(200);
    }
  });

  it.each([
    ['a'.repeat(256), 'over 255 bytes'],
    ['é'.repeat(128), '256 bytes of UTF-8'],
    ['..', 'dot-dot'],
    ['.', 'dot'],
    ['back\\slash', 'backslash'],
    ['tab\there', 'control character'],
    ['nul\u0000x', 'NUL'],
    ['/leading', 'a leading slash'],
    ['double//slash', 'an empty folder name'],
    ['a/../b', 'a .. folder'],
    ['a/./b', 'a . folder'],
    [`${'d'.repeat(250)}/`.repeat(5) + 'x', 'over 1024 bytes in all'],
    [`ok/${'s'.repeat(256)}`, 'a segment over 255 bytes'],
    ['marker/', 'a folder marker with bytes in it'],
  ])('refuses %j with 400 (%s) and stores nothing', async (name) => {
    const bucket = await newBucket();
    // node:http, because fetch's URL parsing folds `.`/`..` segments (even percent-encoded) away.
    const response = await rawRequest('PUT', `/api/v1/buckets/${bucket}/files/${encodeName(name)}`, 'x');
    expect(response.status).toBe(400);
    expect(typeof JSON.parse(response.body).error).toBe('string');
    expect(await bucketInfo(bucket)).toMatchObject({ object_count: 0, total_bytes: 0 });
  });

  it('never writes outside the data directory, whatever the name', async () => {
    const bucket = await newBucket();
    await put(bucket, '..%2F..%2Fescape.txt', 'x');
    const response = await put(bucket, '....//x', 'x');
    expect([400, 404]).toContain(response.status);
    expect((await readdir(server.dataDir, { recursive: true })).filter((f) => f.includes('escape'))).toEqual([]);
    expect(await readdir(path.dirname(server.dataDir))).not.toContain('escape.txt');
    // Blob keys are made by the server, never from the filename.
    for (const key of await storedKeys('')) expect(key).toMatch(/^[a-z0-9_-]+\/[0-9a-f-]{36}$/);
  });
});

describe('content types', () => {
  it('multipart: the part type wins; missing or octet-stream falls back to the extension', async () => {
    const bucket = await newBucket();
    const send = async (filename: string, type?: string) => {
      const form = new FormData();
      form.append('file', new Blob(['data'], type ? { type } : {}), filename);
      expect((await fetch(api(`/${bucket}/files`), { method: 'POST', headers: auth(), body: form })).status).toBe(201);
      return (await fetch(api(`/${bucket}/files/${filename}`), { method: 'HEAD', headers: auth() })).headers.get('content-type');
    };
    expect(await send('pic.png', 'image/webp')).toBe('image/webp');
    expect(await send('page.html')).toBe('text/html');
    expect(await send('blob.unknownext')).toBe('application/octet-stream');
  });

  it('multipart: a part without its own Content-Type (as Python requests sends it) is typed from its extension', async () => {
    const bucket = await newBucket();
    // requests.post(url, files={'file': (name, data)}) sends exactly this: no Content-Type line in the part.
    const send = async (filename: string) => {
      const boundary = 'a1b2c3d4e5f6';
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n\r\n`),
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const response = await fetch(api(`/${bucket}/files`), {
        method: 'POST',
        headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      expect(response.status).toBe(201);
      return (await fetch(api(`/${bucket}/files/${filename}`), { method: 'HEAD', headers: auth() })).headers.get('content-type');
    };
    expect(await send('photo.png')).toBe('image/png');
    expect(await send('notes.txt')).toBe('text/plain');
    expect(await send('README')).toBe('text/plain');
  });

  it('PUT: the request Content-Type sets the type; none means a guess from the name', async () => {
    const bucket = await newBucket();
    await put(bucket, 'a.json', '{}', { 'content-type': 'application/vnd.custom+json' });
    const typeOf = async (name: string) => (await fetch(api(`/${bucket}/files/${name}`), { method: 'HEAD', headers: auth() })).headers.get('content-type');
    expect(await typeOf('a.json')).toBe('application/vnd.custom+json');
    // fetch adds text/plain for string bodies; a Uint8Array body carries no type.
    await put(bucket, 'b.css', new Uint8Array([1]));
    expect(await typeOf('b.css')).toBe('text/css');
    const bad = await put(bucket, 'c.txt', 'x', { 'content-type': 'not a type' });
    expect(bad.status).toBe(415);
    expect((await json(bad)).error).toMatch(/Content-Type/);
  });

  it('multipart holds at most a few small text fields: more is a 400 and stores nothing', async () => {
    const bucket = await newBucket();
    const form = new FormData();
    for (let i = 0; i < 20; i++) form.append(`field${i}`, 'x'.repeat(1000));
    form.append('file', new Blob(['kept?']), 'fields.txt');
    const refused = await fetch(api(`/${bucket}/files`), { method: 'POST', headers: auth(), body: form });
    expect(refused.status).toBe(400);
    expect((await json(refused)).error).toBe('Too many fields in the multipart body');
    expect(await bucketInfo(bucket)).toMatchObject({ object_count: 0, total_bytes: 0 });
    // A couple of fields beside the file are fine; a long one is cut to 1 KiB, never buffered whole.
    const fine = new FormData();
    fine.append('note', 'hello');
    fine.append('long', 'y'.repeat(2 * 1024 * 1024));
    fine.append('file', new Blob(['kept']), 'fields.txt');
    expect((await fetch(api(`/${bucket}/files`), { method: 'POST', headers: auth(), body: fine })).status).toBe(201);
    expect(await bucketInfo(bucket)).toMatchObject({ object_count: 1, total_bytes: 4 });
  });

  it('multipart without a part named file is a 400, and so is a non-multipart body', async () => {
    const bucket = await newBucket();
    const form = new FormData();
    form.append('other', new Blob(['x']), 'x.txt');
    form.append('note', 'hello');
    const noFile = await fetch(api(`/${bucket}/files`), { method: 'POST', headers: auth(), body: form });
    expect(noFile.status).toBe(400);
    expect((await json(noFile)).error).toMatch(/file/);
    const notMultipart = await fetch(api(`/${bucket}/files`), { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{}' });
    expect(notMultipart.status).toBe(400);
    const broken = await fetch(api(`/${bucket}/files`), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated',
    });
    expect(broken.status).toBe(400);
    expect(await bucketInfo(bucket)).toMatchObject({ object_count: 0, total_bytes: 0 });
  });
});

describe('overwrite and counts', () => {
  it('overwrite reports updated: true, keeps one object and counts only the new bytes', async () => {
    const bucket = await newBucket();
    const before = (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;
    expect((await json(await put(bucket, 'f.bin', randomBytes(1000)))).data).toEqual({ filename: 'f.bin', size: 1000, updated: false });
    expect((await json(await put(bucket, 'g.bin', randomBytes(10)))).data.updated).toBe(false);
    expect((await json(await put(bucket, 'f.bin', randomBytes(300)))).data).toEqual({ filename: 'f.bin', size: 300, updated: true });
    expect(await bucketInfo(bucket)).toMatchObject({ object_count: 2, total_bytes: 310 });
    const list = await listAll(bucket);
    expect(list.data.reduce((sum: number, o: { size: number }) => sum + o.size, 0)).toBe(310);
    const after = (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;
    expect(after - before).toBe(310);
    // The replaced bytes are gone: only the two live versions remain stored.
    const storageName = list.data[0].url.split('/').slice(-2)[0];
    expect(await storedKeys(`${storageName}/`)).toEqual(list.data.map((o: { storage_name: string }) => o.storage_name).sort());
  });

  it('a 0-byte file is a valid file', async () => {
    const bucket = await newBucket();
    expect((await json(await put(bucket, 'empty', new Uint8Array(0)))).data).toEqual({ filename: 'empty', size: 0, updated: false });
    const got = await fetch(api(`/${bucket}/files/empty`), { headers: auth() });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-length')).toBe('0');
    expect((await got.arrayBuffer()).byteLength).toBe(0);
    expect(await bucketInfo(bucket)).toMatchObject({ object_count: 1, total_bytes: 0 });
  });

  it('bytes round-trip exactly for a multi-megabyte file, multipart and raw', async () => {
    const bucket = await newBucket();
    const bytes = randomBytes(1536 * 1024);
    await put(bucket, 'raw.bin', bytes);
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'multi.bin');
    await fetch(api(`/${bucket}/files`), { method: 'POST', headers: auth(), body: form });
    for (const name of ['raw.bin', 'multi.bin']) {
      const got = Buffer.from(await (await fetch(api(`/${bucket}/files/${name}`), { headers: auth() })).arrayBuffer());
      expect(got.equals(bytes), name).toBe(true);
    }
  });
});

describe('ETag, Range and conditional requests', () => {
  let bucket: number;
  const content = Buffer.from('0123456789abcdefghij');
  beforeAll(async () => {
    bucket = await newBucket();
    await put(bucket, 'r.txt', content, { 'content-type': 'text/plain' });
  });
  const get = (headers: Record<string, string> = {}, method = 'GET') => fetch(api(`/${bucket}/files/r.txt`), { method, headers: { ...auth(), ...headers } });

  it('ETag is the BLAKE3 hash of the content', async () => {
    const response = await get();
    expect(response.headers.get('etag')).toBe(`"${await blake3Hex(content)}"`);
    expect(response.headers.get('accept-ranges')).toBe('bytes');
  });

  it.each([
    ['bytes=0-0', '0', 'bytes 0-0/20'],
    ['bytes=5-9', '56789', 'bytes 5-9/20'],
    ['bytes=15-', 'fghij', 'bytes 15-19/20'],
    ['bytes=-3', 'hij', 'bytes 17-19/20'],
    ['bytes=10-999', 'abcdefghij', 'bytes 10-19/20'],
  ])('Range %s gives 206 with the right bytes', async (range, body, contentRange) => {
    const response = await get({ range });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(contentRange);
    expect(response.headers.get('content-length')).toBe(String(body.length));
    expect(await response.text()).toBe(body);
  });

  it('an unsatisfiable range is 416 with Content-Range */size', async () => {
    const response = await get({ range: 'bytes=20-30' });
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe('bytes */20');
    expect(await json(response)).toMatchObject({ error: expect.any(String) });
  });

  it('If-None-Match with the ETag, and If-Modified-Since a later date, give 304', async () => {
    const etag = (await get()).headers.get('etag')!;
    const lastModified = (await get()).headers.get('last-modified')!;
    const byTag = await get({ 'if-none-match': etag });
    expect(byTag.status).toBe(304);
    expect(byTag.headers.get('etag')).toBe(etag);
    expect((await get({ 'if-none-match': '"other"' })).status).toBe(200);
    expect((await get({ 'if-modified-since': lastModified })).status).toBe(304);
    expect((await get({ 'if-modified-since': new Date(Date.parse(lastModified) - 60_000).toUTCString() })).status).toBe(200);
    expect((await get({ 'if-none-match': etag }, 'HEAD')).status).toBe(304);
  });

  it('If-Range with a stale ETag ignores the Range', async () => {
    const response = await get({ range: 'bytes=0-1', 'if-range': '"stale"' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(content.toString());
  });
});

describe('listing', () => {
  it('pages with limit and cursor, filters by prefix, ascending by filename', async () => {
    const bucket = await newBucket();
    const names = Array.from({ length: 25 }, (_, i) => `${i % 2 ? 'odd' : 'even'}-${String(i).padStart(2, '0')}.txt`);
    for (const name of names) await put(bucket, name, name);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { data: { filename: string }[]; next_cursor: string | null } = await listAll(bucket, `?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.data.length).toBeLessThanOrEqual(10);
      seen.push(...page.data.map((o: { filename: string }) => o.filename));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...names].sort());
    const odd = await listAll(bucket, '?prefix=odd-');
    expect(odd.data.map((o: { filename: string }) => o.filename)).toEqual(names.filter((n) => n.startsWith('odd-')).sort());
    expect(odd.next_cursor).toBeNull();
    const all = await listAll(bucket);
    expect(all.data).toHaveLength(25);
    expect(all.next_cursor).toBeNull();
  });

  it('refuses a bad limit or cursor with 400', async () => {
    const bucket = await newBucket();
    for (const query of ['?limit=0', '?limit=1001', '?limit=abc', '?cursor=%%%', '?cursor=not*valid']) {
      const response = await fetch(api(`/${bucket}/files${query}`), { headers: auth() });
      expect(response.status, query).toBe(400);
    }
  });
});

describe('caps', () => {
  it('a file over MAX_FILE_BYTES is 413 and leaves nothing behind', async () => {
    const bucket = await newBucket();
    const big = randomBytes(2 * 1024 * 1024 + 1);
    const raw = await put(bucket, 'big.bin', big);
    expect(raw.status).toBe(413);
    expect((await json(raw)).error).toMatch(/2 MiB/);
    const form = new FormData();
    form.append('file', new Blob([big]), 'big.bin');
    const multi = await fetch(api(`/${bucket}/files`), { method: 'POST', headers: auth(), body: form });
    expect(multi.status).toBe(413);
    expect(await bucketInfo(bucket)).toMatchObject({ object_count: 0, total_bytes: 0 });
    const { storage_name } = await server.app.pail.db.selectFrom('buckets').select('storage_name').where('id', '=', bucket).executeTakeFirstOrThrow();
    expect(await storedKeys(`${storage_name}/`)).toEqual([]);
    if (server.config.blob.kind === 'fs') expect(await readdir(path.join(server.dataDir, 'blobs', '.tmp'))).toEqual([]);
  });
});

describe('storage cap', () => {
  let capped: TestServer;
  beforeAll(async () => {
    capped = await startTestServer({ env: { PLAN_FREE_STORAGE_BYTES: '100000' } });
  });
  afterAll(() => capped.close());

  it('409 names the plan and its cap; the previous version stays whole', async () => {
    const u = await signUp(capped.url);
    const bucketRes = await fetch(`${capped.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': u.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cap' }),
    });
    const id = (await json(bucketRes)).data.id;
    const url = (name: string) => `${capped.url}/api/v1/buckets/${id}/files/${name}`;
    const first = randomBytes(60000);
    expect((await fetch(url('a.bin'), { method: 'PUT', headers: { 'x-api-key': u.apiKey }, body: first })).status).toBe(201);
    const over = await fetch(url('b.bin'), { method: 'PUT', headers: { 'x-api-key': u.apiKey }, body: randomBytes(50000) });
    expect(over.status).toBe(409);
    expect(await json(over)).toMatchObject({ error: 'Storage limit exceeded: the free plan allows 97.7 KiB' });
    // Replacing a.bin with 90000 bytes fits: its old 60000 bytes stop counting.
    const overwriteTooBig = await fetch(url('a.bin'), { method: 'PUT', headers: { 'x-api-key': u.apiKey }, body: randomBytes(100001) });
    expect(overwriteTooBig.status).toBe(409);
    const kept = Buffer.from(await (await fetch(url('a.bin'), { headers: { 'x-api-key': u.apiKey } })).arrayBuffer());
    expect(kept.equals(first)).toBe(true);
    expect((await fetch(url('a.bin'), { method: 'PUT', headers: { 'x-api-key': u.apiKey }, body: randomBytes(90000) })).status).toBe(201);
    const info = (await json(await fetch(`${capped.url}/api/v1/buckets/${id}`, { headers: { 'x-api-key': u.apiKey } }))).data;
    expect(info).toMatchObject({ object_count: 1, total_bytes: 90000 });
  });

  it('twenty racing uploads can never together pass the cap', async () => {
    const u = await signUp(capped.url);
    const ids: number[] = [];
    for (const name of ['race-a', 'race-b']) {
      const res = await fetch(`${capped.url}/api/v1/buckets`, {
        method: 'POST',
        headers: { 'x-api-key': u.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
      ids.push((await json(res)).data.id);
    }
    // Each 15000 bytes: at most 6 fit in 100000.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${capped.url}/api/v1/buckets/${ids[i % 2]}/files/f${i}.bin`, { method: 'PUT', headers: { 'x-api-key': u.apiKey }, body: randomBytes(15000) }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const accepted = statuses.filter((s) => s === 201).length;
    expect(accepted).toBe(6);
    const me = (await json(await fetch(`${capped.url}/api/auth/me`, { headers: { authorization: `Bearer ${u.token}` } }))).data;
    expect(me.storage_used_bytes).toBe(accepted * 15000);
    let listed = 0;
    for (const id of ids) {
      const info = (await json(await fetch(`${capped.url}/api/v1/buckets/${id}`, { headers: { 'x-api-key': u.apiKey } }))).data;
      const files = (await json(await fetch(`${capped.url}/api/v1/buckets/${id}/files`, { headers: { 'x-api-key': u.apiKey } }))).data;
      expect(info.object_count).toBe(files.length);
      expect(info.total_bytes).toBe(files.reduce((s: number, f: { size: number }) => s + f.size, 0));
      listed += files.length;
    }
    expect(listed).toBe(accepted);
  });
});

describe('bucket deletion', () => {
  it('deletes every stored object, frees the storage, and the bucket is 404 everywhere', async () => {
    const bucket = await newBucket();
    // Small files (bytes in the database) and one large file (bytes in the blob store).
    for (let i = 0; i < 5; i++) await put(bucket, `f${i}`, randomBytes(100));
    await put(bucket, 'large.bin', randomBytes(INLINE_MAX + 1));
    const list = await listAll(bucket);
    const storageName = list.data[0].url.split('/').slice(-2)[0];
    expect((await blobKeys(`${storageName}/`)).length).toBe(1);
    expect((await inlineKeys(`${storageName}/`)).length).toBe(5);
    const meBefore = (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;
    expect((await fetch(api(`/${bucket}`), { method: 'DELETE', headers: auth() })).status).toBe(200);
    const meAfter = (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;
    expect(meBefore - meAfter).toBe(500 + INLINE_MAX + 1);
    expect(await storedKeys(`${storageName}/`)).toEqual([]);
    for (const p of [`/${bucket}/files`, `/${bucket}/files/f1`]) {
      const response = await fetch(api(p), { headers: auth() });
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ error: 'Bucket not found' });
    }
    expect((await fetch(list.data[0].url, { headers: auth() })).status).toBe(404);
    // Uploads into it after the deletion (small, and large enough for the blob store) are refused and leave nothing.
    for (const body of ['x', randomBytes(INLINE_MAX + 1)]) {
      const late = await put(bucket, 'late.bin', body);
      expect(late.status).toBe(404);
      expect(await json(late)).toMatchObject({ error: 'Bucket not found' });
    }
    expect(await storedKeys(`${storageName}/`)).toEqual([]);
  });
});

describe('caches never serve what they should not', () => {
  it('after warm reads, an overwrite serves the new bytes, a delete 404s, and going private refuses strangers', async () => {
    const bucket = await newBucket();
    const first = randomBytes(2000);
    const second = randomBytes(3000);
    await put(bucket, 'hot.bin', first);
    const read = async (headers: Record<string, string> = auth()) => fetch(api(`/${bucket}/files/hot.bin`), { headers });
    for (let i = 0; i < 3; i++) expect(Buffer.from(await (await read()).arrayBuffer()).equals(first)).toBe(true);
    await put(bucket, 'hot.bin', second);
    const afterOverwrite = await read();
    expect(afterOverwrite.headers.get('content-length')).toBe('3000');
    expect(Buffer.from(await afterOverwrite.arrayBuffer()).equals(second)).toBe(true);

    await fetch(api(`/${bucket}/visibility`), { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{"visibility":"public"}' });
    for (let i = 0; i < 3; i++) expect((await read({})).status).toBe(200);
    await fetch(api(`/${bucket}/visibility`), { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{"visibility":"private"}' });
    expect((await read({})).status).toBe(401);

    expect((await fetch(api(`/${bucket}/files/hot.bin`), { method: 'DELETE', headers: auth() })).status).toBe(200);
    const gone = await read();
    expect(gone.status).toBe(404);
    expect(await json(gone)).toMatchObject({ error: 'File not found' });
  });

  it('a revoked key is refused at once, even right after it was used', async () => {
    const fresh = await signUp(server.url);
    for (let i = 0; i < 3; i++) expect((await fetch(api(''), { headers: auth(fresh) })).status).toBe(200);
    const keys = await json(await fetch(`${server.url}/api/keys`, { headers: { authorization: `Bearer ${fresh.token}` } }));
    const revoked = await fetch(`${server.url}/api/keys/${keys.data[0].id}`, { method: 'DELETE', headers: { authorization: `Bearer ${fresh.token}` } });
    expect(revoked.status).toBe(200);
    expect((await fetch(api(''), { headers: auth(fresh) })).status).toBe(401);
  });
});

describe('racing writes to one file', () => {
  it('overwrites and deletes of one name in parallel never fail with 500 and leave counts equal to the listing', async () => {
    const bucket = await newBucket();
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 3 === 1 ? fetch(api(`/${bucket}/files/contested.bin`), { method: 'DELETE', headers: auth() }) : put(bucket, 'contested.bin', randomBytes(100 + i)),
      ),
    );
    for (const response of results) expect([200, 201, 404]).toContain(response.status);
    const info = await bucketInfo(bucket);
    const files = (await listAll(bucket)).data;
    expect(info.object_count).toBe(files.length);
    expect(info.total_bytes).toBe(files.reduce((sum: number, f: { size: number }) => sum + f.size, 0));
    expect(files.length).toBeLessThanOrEqual(1);
  });
});

describe('where the bytes of small and large files live', () => {
  async function upload(via: 'put' | 'multipart', bucket: number, name: string, bytes: Buffer<ArrayBuffer>) {
    if (via === 'put') return put(bucket, name, bytes);
    const form = new FormData();
    form.append('file', new Blob([bytes]), name);
    return fetch(api(`/${bucket}/files`), { method: 'POST', headers: auth(), body: form });
  }

  for (const via of ['put', 'multipart'] as const) {
    it(`${via}: up to INLINE_MAX_BYTES in the database, one byte more in the blob store; both read back exactly`, async () => {
      const bucket = await newBucket();
      const small = randomBytes(INLINE_MAX);
      const large = randomBytes(INLINE_MAX + 1);
      expect((await upload(via, bucket, 'small.bin', small)).status).toBe(201);
      expect((await upload(via, bucket, 'large.bin', large)).status).toBe(201);
      const files = (await listAll(bucket)).data as { filename: string; storage_name: string }[];
      const key = (name: string) => files.find((f) => f.filename === name)!.storage_name;
      const storageName = key('small.bin').split('/')[0]!;
      expect(await inlineKeys(`${storageName}/`)).toEqual([key('small.bin')]);
      expect(await blobKeys(`${storageName}/`)).toEqual([key('large.bin')]);

      for (const [name, bytes] of [
        ['small.bin', small],
        ['large.bin', large],
      ] as const) {
        const response = await fetch(api(`/${bucket}/files/${name}`), { headers: auth() });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-length')).toBe(String(bytes.length));
        expect(response.headers.get('etag')).toBe(`"${await blake3Hex(bytes)}"`);
        expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
        const ranged = await fetch(api(`/${bucket}/files/${name}`), { headers: { ...auth(), range: 'bytes=100-199' } });
        expect(ranged.status).toBe(206);
        expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(100, 200))).toBe(true);
      }
      expect(await bucketInfo(bucket)).toMatchObject({ object_count: 2, total_bytes: 2 * INLINE_MAX + 1 });
    });
  }

  it('replacing a small file by a large one and back leaves only the current bytes, with the counts right', async () => {
    const bucket = await newBucket();
    const versions = [randomBytes(10), randomBytes(INLINE_MAX + 10), randomBytes(20), randomBytes(30)];
    for (const [i, bytes] of versions.entries()) {
      const response = await put(bucket, 'v.bin', bytes);
      expect((await json(response)).data).toEqual({ filename: 'v.bin', size: bytes.length, updated: i > 0 });
      const read = await fetch(api(`/${bucket}/files/v.bin`), { headers: auth() });
      expect(Buffer.from(await read.arrayBuffer()).equals(bytes)).toBe(true);
      const [file] = (await listAll(bucket)).data as { storage_name: string }[];
      const storageName = file!.storage_name.split('/')[0]!;
      expect(await storedKeys(`${storageName}/`)).toEqual([file!.storage_name]);
    }
    expect(await bucketInfo(bucket)).toMatchObject({ object_count: 1, total_bytes: 30 });
    expect((await fetch(api(`/${bucket}/files/v.bin`), { method: 'DELETE', headers: auth() })).status).toBe(200);
    const { storage_name } = await server.app.pail.db.selectFrom('buckets').select('storage_name').where('id', '=', bucket).executeTakeFirstOrThrow();
    expect(await storedKeys(`${storage_name}/`)).toEqual([]);
  });

  // New keys must append to the storage-key indexes, not land on random pages of them (objects.ts).
  it('storage names are unique and sort in upload order, small and large files alike', async () => {
    const bucket = await newBucket();
    const names = ['e.bin', 'd.bin', 'c.bin', 'b.bin', 'a.bin', 'e.bin'];
    const keys: string[] = [];
    for (const [i, name] of names.entries()) {
      // Keys are ordered by the millisecond they were made in.
      await new Promise((resolve) => setTimeout(resolve, 2));
      expect((await put(bucket, name, randomBytes(i === 2 ? INLINE_MAX + 1 : 100))).status).toBe(201);
      const files = (await listAll(bucket)).data as { filename: string; storage_name: string }[];
      keys.push(files.find((f) => f.filename === name)!.storage_name);
    }
    expect(new Set(keys).size).toBe(names.length);
    expect([...keys].sort()).toEqual(keys);
  });

  // Embedded only: a scaled test server gets a fresh PostgreSQL schema each time it starts.
  it.runIf(backendKind() === 'embedded')('small files survive a restart on the same data', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-inline-'));
    try {
      let target = await startTestServer({ dataDir });
      const owner = await signUp(target.url);
      const headers = { 'x-api-key': owner.apiKey };
      const bucketId = (
        await json(
          await fetch(`${target.url}/api/v1/buckets`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"name":"kept"}' }),
        )
      ).data.id;
      const bytes = randomBytes(4096);
      expect((await fetch(`${target.url}/api/v1/buckets/${bucketId}/files/k.bin`, { method: 'PUT', headers, body: bytes })).status).toBe(201);
      await target.close();
      target = await startTestServer({ dataDir });
      try {
        const read = await fetch(`${target.url}/api/v1/buckets/${bucketId}/files/k.bin`, { headers });
        expect(read.status).toBe(200);
        expect(Buffer.from(await read.arrayBuffer()).equals(bytes)).toBe(true);
      } finally {
        await target.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
