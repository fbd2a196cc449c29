/**
 * Moving and renaming files and folders, and deleting a folder with
 * everything in it (domain/moves.ts, domain/folder-deletion.ts), on both
 * APIs: what is kept (bytes, type, metadata, ETag), the counts and usage of
 * both buckets, every refusal (key limits, names, names taken, another
 * owner's bucket, the target bucket's limits), and a folder move cut by a
 * SIGKILL of the real server process, which leaves every file under exactly
 * one name and finishes when asked again.
 */
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendEnv, type BackendEnv } from './helpers/backends.js';
import { json, signUp, type TestUser } from './helpers/client.js';
import { spawnServer, type ServerProcess } from './helpers/process.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  user = await signUp(server.url);
});
afterAll(() => server.close());

const APIS = {
  developer: { base: '/api/v1/buckets', auth: (owner: TestUser) => ({ 'x-api-key': owner.apiKey }) },
  client: { base: '/api/buckets', auth: (owner: TestUser) => ({ authorization: `Bearer ${owner.token}` }) },
} as const;
type ApiName = keyof typeof APIS;

function call(api: ApiName, pathname: string, init: RequestInit = {}, owner = user): Promise<Response> {
  const headers = { ...APIS[api].auth(owner), ...(typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}) };
  return fetch(`${server.url}${APIS[api].base}${pathname}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });
}

const move = (api: ApiName, bucket: number, body: Record<string, unknown>, owner = user) =>
  call(api, `/${bucket}/move`, { method: 'POST', body: JSON.stringify(body) }, owner);

async function newBucket(owner = user, limits: Record<string, unknown> = {}): Promise<{ id: number; name: string }> {
  const name = `m-${randomBytes(4).toString('hex')}`;
  const response = await call('developer', '', { method: 'POST', body: JSON.stringify({ name, ...limits }) }, owner);
  expect(response.status).toBe(201);
  return { id: (await json(response)).data.id as number, name };
}

async function put(bucket: number, filename: string, body: string | Uint8Array, contentType = 'text/plain', owner = user): Promise<void> {
  const response = await call(
    'developer',
    `/${bucket}/files/${filename}`,
    { method: 'PUT', body: body as BodyInit, headers: { 'content-type': contentType } },
    owner,
  );
  expect(response.status, filename).toBe(201);
}

async function counts(bucket: number): Promise<{ object_count: number; total_bytes: number }> {
  const { object_count, total_bytes } = (await json(await call('developer', `/${bucket}`))).data;
  return { object_count, total_bytes };
}

async function used(owner = user): Promise<number> {
  const me = await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${owner.token}` } });
  return (await json(me)).data.storage_used_bytes as number;
}

async function names(bucket: number, prefix = ''): Promise<string[]> {
  const listed = await json(await call('developer', `/${bucket}/files?prefix=${encodeURIComponent(prefix)}`));
  return listed.data.map((file: { filename: string }) => file.filename);
}

async function createKey(body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${server.url}/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'limited', ...body }),
  });
  expect(response.status).toBe(201);
  return (await json(response)).data.key as string;
}

const withKey = (key: string, pathname: string, init: RequestInit = {}) =>
  fetch(`${server.url}/api/v1/buckets${pathname}`, {
    ...init,
    headers: { 'x-api-key': key, ...(typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}) },
  });

describe.each(['developer', 'client'] as const)('moving files on the %s API', (api) => {
  it('renames a file: its bytes, type, metadata and ETag kept, its old name 404, the counts unchanged', async () => {
    const bucket = await newBucket();
    const s3 = sdkClient(server.s3Url!, user);
    const bytes = randomBytes(300_000);
    await s3.send(
      new PutObjectCommand({ Bucket: bucket.name, Key: 'docs/report.bin', Body: bytes, ContentType: 'application/x-report', Metadata: { author: 'ada' } }),
    );
    const before = await call(api, `/${bucket.id}/files/docs/report.bin`, { method: 'HEAD' });
    const etag = before.headers.get('etag');
    expect(etag).toBe(`"${createHash('md5').update(bytes).digest('hex')}"`);
    const countsBefore = await counts(bucket.id);
    const usedBefore = await used();

    const moved = await move(api, bucket.id, { from: 'docs/report.bin', to: 'archive/2026 report.bin' });
    expect(moved.status).toBe(200);
    expect(await json(moved)).toEqual({
      data: { moved: 1, bucket_id: bucket.id, from: 'docs/report.bin', to_bucket_id: bucket.id, to: 'archive/2026 report.bin' },
    });

    expect((await call(api, `/${bucket.id}/files/docs/report.bin`)).status).toBe(404);
    const got = await call(api, `/${bucket.id}/files/archive/2026%20report.bin`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/x-report');
    expect(got.headers.get('etag')).toBe(etag);
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket.name, Key: 'archive/2026 report.bin' }));
    expect(head.Metadata).toEqual({ author: 'ada' });
    expect(head.ETag).toBe(etag);
    expect(await names(bucket.id)).toEqual(['archive/2026 report.bin']);
    expect(await counts(bucket.id)).toEqual(countsBefore);
    expect(await used()).toBe(usedBefore);

    // The name order follows the new name (its natural sort key moves with it).
    await put(bucket.id, 'b10.txt', 'x');
    await put(bucket.id, 'b9.txt', 'x');
    await move(api, bucket.id, { from: 'b10.txt', to: 'a1.txt' });
    const sorted = await json(await call('developer', `/${bucket.id}/files?sort=name`));
    expect(sorted.data.map((file: { filename: string }) => file.filename)).toEqual(['a1.txt', 'archive/2026 report.bin', 'b9.txt']);
  });

  it("moves a file into another of the owner's buckets: both buckets' counts and bytes, and the usage, exact", async () => {
    const a = await newBucket();
    const b = await newBucket();
    await put(a.id, 'x.txt', 'twelve bytes');
    await put(a.id, 'stays.txt', 'abc');
    await put(b.id, 'other.txt', 'hello');
    const usedBefore = await used();

    const moved = await move(api, a.id, { from: 'x.txt', to: 'in/x.txt', to_bucket_id: b.id });
    expect(moved.status).toBe(200);
    expect((await json(moved)).data).toEqual({ moved: 1, bucket_id: a.id, from: 'x.txt', to_bucket_id: b.id, to: 'in/x.txt' });
    expect(await counts(a.id)).toEqual({ object_count: 1, total_bytes: 3 });
    expect(await counts(b.id)).toEqual({ object_count: 2, total_bytes: 17 });
    expect(await used()).toBe(usedBefore);
    expect(await names(a.id)).toEqual(['stays.txt']);
    const got = await call(api, `/${b.id}/files/in/x.txt`);
    expect(await got.text()).toBe('twelve bytes');
    // Its url names the bucket it is in now.
    const listed = (await json(await call(api, `/${b.id}/files?prefix=in/`))).data[0];
    expect(listed.bucket_id).toBe(b.id);
    expect(await (await fetch(listed.url as string, { headers: APIS[api].auth(user) })).text()).toBe('twelve bytes');
  });

  it('moves a folder of 100 files with its marker and subfolders to another bucket; asked again, it has nothing left to move', async () => {
    const a = await newBucket();
    const b = await newBucket();
    const files = Array.from({ length: 100 }, (_, i) => `photos/${i % 3 === 0 ? 'raw/' : ''}img-${String(i).padStart(3, '0')}.txt`);
    await put(a.id, 'photos/', '');
    for (let i = 0; i < files.length; i += 20) await Promise.all(files.slice(i, i + 20).map((name) => put(a.id, name, `bytes of ${name}`)));
    await put(a.id, 'photos-not-in-it.txt', 'x');
    const bytes = files.reduce((sum, name) => sum + `bytes of ${name}`.length, 0);
    const usedBefore = await used();

    const moved = await move(api, a.id, { from: 'photos/', to: 'albums/2026/', to_bucket_id: b.id });
    expect(moved.status).toBe(200);
    expect((await json(moved)).data.moved).toBe(101);
    expect(await names(a.id)).toEqual(['photos-not-in-it.txt']);
    const expected = ['albums/2026/', ...files.map((name) => name.replace('photos/', 'albums/2026/'))].sort();
    expect(await names(b.id)).toEqual(expected);
    expect(await counts(a.id)).toEqual({ object_count: 1, total_bytes: 1 });
    expect(await counts(b.id)).toEqual({ object_count: 101, total_bytes: bytes });
    expect(await used()).toBe(usedBefore);
    expect(await (await call(api, `/${b.id}/files/albums/2026/raw/img-099.txt`)).text()).toBe('bytes of photos/raw/img-099.txt');

    const again = await move(api, a.id, { from: 'photos/', to: 'albums/2026/', to_bucket_id: b.id });
    expect(again.status).toBe(200);
    expect((await json(again)).data.moved).toBe(0);

    // Renamed back within the bucket, and a folder onto an existing folder marker merges.
    await put(b.id, 'back/', '');
    const back = await move(api, b.id, { from: 'albums/2026/', to: 'back/' });
    expect((await json(back)).data.moved).toBe(101);
    expect(await counts(b.id)).toEqual({ object_count: 101, total_bytes: bytes });
  });

  it('with overwrite: true, a name taken is replaced: the replaced bytes leave the counts and the usage', async () => {
    const a = await newBucket();
    const b = await newBucket();
    await put(a.id, 'new.txt', 'new!');
    await put(b.id, 'old.txt', 'old version, longer');
    const usedBefore = await used();
    const refused = await move(api, a.id, { from: 'new.txt', to: 'old.txt', to_bucket_id: b.id });
    expect(refused.status).toBe(409);
    expect(await json(refused)).toEqual({ error: 'A file named old.txt is there already; move with overwrite: true to replace it', code: 'FileExists' });
    expect(await names(a.id)).toEqual(['new.txt']);

    const moved = await move(api, a.id, { from: 'new.txt', to: 'old.txt', to_bucket_id: b.id, overwrite: true });
    expect(moved.status).toBe(200);
    expect(await (await call(api, `/${b.id}/files/old.txt`)).text()).toBe('new!');
    expect(await counts(a.id)).toEqual({ object_count: 0, total_bytes: 0 });
    expect(await counts(b.id)).toEqual({ object_count: 1, total_bytes: 4 });
    expect(await used()).toBe(usedBefore - 'old version, longer'.length);

    // Within one bucket: the overwritten file leaves its count and bytes.
    await put(b.id, 'other.txt', 'xyz');
    expect((await move(api, b.id, { from: 'other.txt', to: 'old.txt', overwrite: true })).status).toBe(200);
    expect(await names(b.id)).toEqual(['old.txt']);
    expect(await counts(b.id)).toEqual({ object_count: 1, total_bytes: 3 });
    expect(await used()).toBe(usedBefore - 'old version, longer'.length + 'xyz'.length - 'new!'.length);
  });

  it('deletes a folder with everything in it in one request: 200 with how many, the counts and usage exact', async () => {
    const bucket = await newBucket();
    await put(bucket.id, 'trash/', '');
    for (let i = 0; i < 30; i++) await put(bucket.id, `trash/${i % 2 ? 'deep/' : ''}f${i}.txt`, 'abcd');
    await put(bucket.id, 'trash.txt', 'kept');
    await put(bucket.id, 'trashy/kept.txt', 'kept');
    const usedBefore = await used();

    const deleted = await call(api, `/${bucket.id}/folders/trash/`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(await json(deleted)).toEqual({ data: { deleted: 31, prefix: 'trash/' } });
    expect(await names(bucket.id)).toEqual(['trash.txt', 'trashy/kept.txt']);
    expect(await counts(bucket.id)).toEqual({ object_count: 2, total_bytes: 8 });
    expect(await used()).toBe(usedBefore - 30 * 4);

    // Without the trailing slash it is the same folder; nothing left is 0.
    const again = await call(api, `/${bucket.id}/folders/trash`, { method: 'DELETE' });
    expect(await json(again)).toEqual({ data: { deleted: 0, prefix: 'trash/' } });
    expect((await call(api, `/${bucket.id}/folders/`, { method: 'DELETE' })).status).toBe(400);
  });

  it("refuses bad names (400), another owner's buckets (404) and a file that is not there (404)", async () => {
    const bucket = await newBucket();
    await put(bucket.id, 'a.txt', 'a');
    await put(bucket.id, 'dir/b.txt', 'b');
    const refusals: [Record<string, unknown>, number, string][] = [
      [{ from: 'a.txt', to: 'x/../y.txt' }, 400, 'to: Filename must not contain . or .. as a folder or file name'],
      [{ from: 'a.txt', to: '' }, 400, 'to: Filename is required'],
      [{ from: 'a.txt', to: 'a.txt' }, 400, 'from and to are the same name'],
      [{ from: 'a.txt', to: 'b/' }, 400, 'to must not end in / when from is a file (a name ending in / is a folder)'],
      [{ from: 'dir/', to: 'b.txt' }, 400, 'to must end in / when from is a folder'],
      [{ from: 'dir/', to: 'dir/inner/' }, 400, 'A folder cannot move into itself, nor onto a folder that holds it'],
      [{ from: 'a.txt' }, 400, 'to is required: the new name'],
      [{ from: 'missing.txt', to: 'c.txt' }, 404, 'File not found'],
    ];
    for (const [body, status, error] of refusals) {
      const response = await move(api, bucket.id, body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect((await json(response)).error).toBe(error);
    }
    const stranger = await signUp(server.url);
    const theirs = await newBucket(stranger);
    await put(theirs.id, 'theirs.txt', 't', 'text/plain', stranger);
    expect((await move(api, bucket.id, { from: 'a.txt', to: 'a.txt', to_bucket_id: theirs.id })).status).toBe(404);
    expect((await move(api, theirs.id, { from: 'theirs.txt', to: 'mine.txt' })).status).toBe(404);
    expect((await call(api, `/${theirs.id}/folders/x/`, { method: 'DELETE' })).status).toBe(404);
    expect(await names(bucket.id)).toEqual(['a.txt', 'dir/b.txt']);
  });

  it('holds the target bucket to its limits: max_file_bytes 413, allowed_types 415, and a folder with one file refused moves none', async () => {
    const source = await newBucket();
    const small = await newBucket(user, { max_file_bytes: 10 });
    const images = await newBucket(user, { allowed_types: ['image/*'] });
    await put(source.id, 'big.txt', 'more than ten bytes');
    await put(source.id, 'dir/ok.txt', 'ok');
    await put(source.id, 'dir/too-big.txt', 'more than ten bytes');
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082',
      'hex',
    );
    await put(source.id, 'pic.bin', png, 'application/octet-stream');

    const tooBig = await move(api, source.id, { from: 'big.txt', to: 'big.txt', to_bucket_id: small.id });
    expect(tooBig.status).toBe(413);
    const folder = await move(api, source.id, { from: 'dir/', to: 'dir/', to_bucket_id: small.id });
    expect(folder.status).toBe(413);
    expect(await names(small.id)).toEqual([]);
    expect(await names(source.id, 'dir/')).toEqual(['dir/ok.txt', 'dir/too-big.txt']);

    const text = await move(api, source.id, { from: 'dir/ok.txt', to: 'ok.txt', to_bucket_id: images.id });
    expect(text.status).toBe(415);
    // A generic type takes the type its bytes show, as an upload's would.
    const picture = await move(api, source.id, { from: 'pic.bin', to: 'pic.png', to_bucket_id: images.id });
    expect(picture.status).toBe(200);
    expect((await call(api, `/${images.id}/files/pic.png`, { method: 'HEAD' })).headers.get('content-type')).toBe('image/png');
    // Within one bucket its limits are not asked again.
    expect((await move(api, source.id, { from: 'big.txt', to: 'renamed.txt' })).status).toBe(200);
  });
});

describe("API keys' limits", () => {
  it('a move needs read, write and delete; a folder deletion delete; a key limited to some buckets reaches no other (404)', async () => {
    const a = await newBucket();
    const b = await newBucket();
    await put(a.id, 'f.txt', 'f');
    await put(a.id, 'dir/g.txt', 'g');
    const body = (extra: Record<string, unknown> = {}) => ({ method: 'POST', body: JSON.stringify({ from: 'f.txt', to: 'g.txt', ...extra }) });

    const readOnly = await createKey({ permissions: ['read'] });
    const refused = await withKey(readOnly, `/${a.id}/move`, body());
    expect(refused.status).toBe(403);
    expect((await json(refused)).error).toBe('This API key does not allow write');
    const noDelete = await createKey({ permissions: ['read', 'write'] });
    expect((await json(await withKey(noDelete, `/${a.id}/move`, body()))).error).toBe('This API key does not allow delete');
    const writeDelete = await createKey({ permissions: ['write', 'delete'] });
    expect((await json(await withKey(writeDelete, `/${a.id}/move`, body()))).error).toBe('This API key does not allow read');
    expect((await withKey(readOnly, `/${a.id}/folders/dir/`, { method: 'DELETE' })).status).toBe(403);

    const onlyA = await createKey({ buckets: [a.id] });
    expect((await withKey(onlyA, `/${a.id}/move`, body({ to_bucket_id: b.id }))).status).toBe(404);
    const onlyB = await createKey({ buckets: [b.id] });
    expect((await withKey(onlyB, `/${a.id}/move`, body({ to_bucket_id: b.id }))).status).toBe(404);
    expect((await withKey(onlyB, `/${a.id}/folders/dir/`, { method: 'DELETE' })).status).toBe(404);
    expect(await names(a.id)).toEqual(['dir/g.txt', 'f.txt']);

    const both = await createKey({ buckets: [a.id, b.id], permissions: ['read', 'write', 'delete'] });
    expect((await withKey(both, `/${a.id}/move`, body({ to_bucket_id: b.id }))).status).toBe(200);
    expect((await json(await withKey(both, `/${a.id}/folders/dir/`, { method: 'DELETE' }))).data.deleted).toBe(1);
    expect(await names(b.id)).toEqual(['g.txt']);
    expect(await names(a.id)).toEqual([]);
  });
});

describe('a folder move cut by a crash', () => {
  const FILES = 100;
  let backend: BackendEnv;
  let dataDir: string;
  let proc: ServerProcess | null = null;

  beforeAll(async () => {
    backend = await backendEnv();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-move-crash-'));
  });
  afterAll(async () => {
    proc?.child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
    await backend.cleanup();
  });

  const start = async () => (proc = await spawnServer({ DATA_DIR: dataDir, ...backend.env }));

  it('SIGKILL mid-way leaves every file under exactly one name with its bytes; the same move again finishes it', async () => {
    await start();
    const owner = await signUp(proc!.url);
    const api = (pathname: string, init: RequestInit = {}) =>
      fetch(`${proc!.url}/api/v1/buckets${pathname}`, {
        ...init,
        headers: { 'x-api-key': owner.apiKey, ...(typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}) },
      });
    const bucket = (await json(await api('', { method: 'POST', body: JSON.stringify({ name: 'crash' }) }))).data.id as number;
    const files = Array.from({ length: FILES }, (_, i) => ({ name: `f${String(i).padStart(3, '0')}.bin`, bytes: randomBytes(100 + i * 100) }));
    for (let i = 0; i < FILES; i += 20) {
      await Promise.all(
        files
          .slice(i, i + 20)
          .map(async (file) => expect((await api(`/${bucket}/files/old/${file.name}`, { method: 'PUT', body: file.bytes })).status).toBe(201)),
      );
    }
    const totalBytes = files.reduce((sum, file) => sum + file.bytes.length, 0);
    const listed = async (prefix: string) => {
      const body = await json(await api(`/${bucket}/files?prefix=${prefix}`));
      return (body.data as { filename: string }[]).map((file) => file.filename.slice(prefix.length));
    };

    /** Every file under exactly one of the two names, with its own bytes; the bucket's counts exact. */
    async function checkEachOnce(): Promise<number> {
      const [old, moved] = [new Set(await listed('old/')), new Set(await listed('new/'))];
      for (const file of files) {
        expect(old.has(file.name) !== moved.has(file.name), file.name).toBe(true);
        const got = await api(`/${bucket}/files/${old.has(file.name) ? 'old' : 'new'}/${file.name}`);
        expect(Buffer.from(await got.arrayBuffer()).equals(file.bytes), file.name).toBe(true);
      }
      expect(old.size + moved.size).toBe(FILES);
      const { object_count, total_bytes } = (await json(await api(`/${bucket}`))).data;
      expect({ object_count, total_bytes }).toEqual({ object_count: FILES, total_bytes: totalBytes });
      return moved.size;
    }

    // Killed once the listing shows the first files under the new name; tried again (moved back first) until the cut lands mid-way.
    let cutMidway = false;
    for (let attempt = 0; attempt < 5 && !cutMidway; attempt++) {
      const request = api(`/${bucket}/move`, { method: 'POST', body: JSON.stringify({ from: 'old/', to: 'new/' }) }).catch(() => null);
      while ((await listed('new/')).length === 0) {
        /* polling until the first files moved */
      }
      proc!.child.kill('SIGKILL');
      await proc!.exited;
      await request;
      await start();
      const moved = await checkEachOnce();
      cutMidway = moved > 0 && moved < FILES;
      if (!cutMidway) expect((await api(`/${bucket}/move`, { method: 'POST', body: JSON.stringify({ from: 'new/', to: 'old/' }) })).status).toBe(200);
    }
    expect(cutMidway).toBe(true);

    const rest = await api(`/${bucket}/move`, { method: 'POST', body: JSON.stringify({ from: 'old/', to: 'new/' }) });
    expect(rest.status).toBe(200);
    const left = FILES - (await listed('new/')).length;
    expect(left).toBe(0);
    expect((await json(rest)).data.moved).toBeGreaterThan(0);
    expect(await checkEachOnce()).toBe(FILES);
    expect(await listed('old/')).toEqual([]);
  });
});
