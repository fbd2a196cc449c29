/**
 * Zip downloads (issue 36, item 7): a folder or a selection as one zip,
 * streamed. Every zip is read back with yauzl and compared entry by entry,
 * byte for byte, with what was uploaded.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { backendEnv } from './helpers/backends.js';
import { spawnServer, type ServerProcess } from './helpers/process.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { unzip } from './helpers/unzip.js';

const FILES = 1000;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

let server: TestServer;
let user: TestUser;
let api: ReturnType<typeof devApi>;
let bucketId: number;
/** What was uploaded under `many/`, by name relative to it. */
const uploaded = new Map<string, Buffer>();

async function createBucket(owner: TestUser, name: string): Promise<number> {
  const response = await devApi(server.url, owner)('', { method: 'POST', body: JSON.stringify({ name }) });
  expect(response.status).toBe(201);
  return (await json(response)).data.id;
}

async function put(id: number, name: string, bytes: Buffer, owner = user): Promise<void> {
  const path = name.split('/').map(encodeURIComponent).join('/');
  const response = await devApi(server.url, owner)(`/${id}/files/${path}`, { method: 'PUT', body: bytes as BodyInit });
  expect(response.status, name).toBe(201);
}

/** Runs `work` over `items`, `width` at a time. */
async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

async function zipOf(response: Response) {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/zip');
  return unzip(Buffer.from(await response.arrayBuffer()), true);
}

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server.url);
  api = devApi(server.url, user);
  bucketId = await createBucket(user, 'zips');
  const names: string[] = [];
  for (let i = 0; i < FILES; i++) names.push(i % 10 === 0 ? `deep/er/file-${i}.txt` : `file-${String(i).padStart(4, '0')}.bin`);
  // Sizes from empty to past the inline limit, so both kinds of stored bytes are read.
  for (const [i, name] of names.entries()) uploaded.set(name, randomBytes(i === 7 ? 0 : i % 100 === 3 ? 300_000 + i : 1 + ((i * 37) % 5000)));
  uploaded.set('ünïcode ☕ name.txt', Buffer.from('hello ☕'));
  await inParallel([...uploaded], 16, ([name, bytes]) => put(bucketId, `many/${name}`, bytes));
  await put(bucketId, 'outside.txt', Buffer.from('not in the folder'));
  // An empty folder inside: its marker.
  await put(bucketId, 'many/empty/', Buffer.alloc(0));
}, 120_000);
afterAll(() => server?.close());

describe('a folder as a zip', () => {
  it('holds every file under the folder, named relative to it, byte for byte, with its modified time', async () => {
    const response = await api(`/${bucketId}/zip?prefix=many/`);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename=many.zip');
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    const entries = await zipOf(response);
    const files = entries.filter((entry) => !entry.directory);
    expect(files.map((entry) => entry.name).sort()).toEqual([...uploaded.keys()].sort());
    for (const entry of files) expect(entry.sha256, entry.name).toBe(sha256(uploaded.get(entry.name)!));
    expect(entries.filter((entry) => entry.directory).map((entry) => entry.name)).toEqual(['empty/']);

    const listed = await json(await api(`/${bucketId}/files?prefix=many/file-0001.bin`));
    const updatedAt = Date.parse(listed.data[0].updated_at);
    const entry = files.find((e) => e.name === 'file-0001.bin')!;
    expect(Math.abs(entry.modified.getTime() - updatedAt)).toBeLessThan(2000);
  }, 60_000);

  it('takes the folder with or without its trailing slash; the whole bucket without one, named after the bucket', async () => {
    const noSlash = await zipOf(await api(`/${bucketId}/zip?prefix=many/deep`));
    expect(noSlash.map((e) => e.name).sort()).toEqual(
      [...uploaded.keys()]
        .filter((n) => n.startsWith('deep/'))
        .map((n) => n.slice(5))
        .sort(),
    );
    const whole = await api(`/${bucketId}/zip`);
    expect(whole.headers.get('content-disposition')).toBe('attachment; filename=zips.zip');
    const entries = await zipOf(whole);
    expect(entries.filter((e) => !e.directory)).toHaveLength(uploaded.size + 1);
    expect(entries.find((e) => e.name === 'outside.txt')?.bytes?.toString()).toBe('not in the folder');
    expect(entries.find((e) => e.name === 'many/ünïcode ☕ name.txt')?.bytes?.toString()).toBe('hello ☕');
  }, 60_000);

  it('works on the Client API with the session, on the singular alias, and spends one request of the budget', async () => {
    const client = await fetch(`${server.url}/api/buckets/${bucketId}/zip?prefix=many/deep/er/`, { headers: { cookie: user.cookie } });
    expect((await zipOf(client)).length).toBe(FILES / 10);
    const before = Number((await api(`/${bucketId}`)).headers.get('ratelimit-remaining'));
    const singular = await fetch(`${server.url}/api/v1/bucket/${bucketId}/zip?prefix=many/`, { headers: { 'x-api-key': user.apiKey } });
    expect(Number(singular.headers.get('ratelimit-remaining'))).toBe(before - 1);
    expect((await zipOf(singular)).length).toBe(uploaded.size + 1);
    expect(Number((await api(`/${bucketId}`)).headers.get('ratelimit-remaining'))).toBe(before - 2);
  }, 60_000);

  it('names a non-ASCII folder in Content-Disposition as RFC 6266 says', async () => {
    await put(bucketId, 'fötos/a.txt', Buffer.from('a'));
    const response = await api(`/${bucketId}/zip?prefix=${encodeURIComponent('fötos/')}`);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="f?tos.zip"; filename*=UTF-8''f%C3%B6tos.zip`);
    expect((await zipOf(response)).map((e) => e.name)).toEqual(['a.txt']);
  });
});

describe('a selection as a zip', () => {
  it('holds the files and folders chosen, each once, relative to prefix', async () => {
    const response = await api(`/${bucketId}/zip`, {
      method: 'POST',
      body: JSON.stringify({
        prefix: 'many/',
        filenames: ['many/file-0001.bin', 'many/file-0002.bin', 'many/file-0001.bin', 'many/deep/er/file-10.txt', 'many/no-such-file'],
        folders: ['many/deep/', 'many/deep/er/'],
      }),
    });
    expect(response.headers.get('content-disposition')).toBe('attachment; filename=many.zip');
    const entries = await zipOf(response);
    const expected = ['file-0001.bin', 'file-0002.bin', ...[...uploaded.keys()].filter((n) => n.startsWith('deep/'))];
    expect(entries.map((e) => e.name).sort()).toEqual(expected.sort());
    for (const entry of entries) expect(entry.bytes!.equals(uploaded.get(entry.name)!), entry.name).toBe(true);
  });

  it('comes from an HTML form posted with the session cookie (how the dashboard downloads a selection)', async () => {
    const form = new URLSearchParams();
    form.append('prefix', 'many/');
    for (const name of ['many/file-0005.bin', 'many/file-0006.bin']) form.append('filenames', name);
    const response = await fetch(`${server.url}/api/buckets/${bucketId}/zip`, {
      method: 'POST',
      headers: { cookie: user.cookie, origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect((await zipOf(response)).map((e) => e.name)).toEqual(['file-0005.bin', 'file-0006.bin']);
    const crossSite = await fetch(`${server.url}/api/buckets/${bucketId}/zip`, {
      method: 'POST',
      headers: { cookie: user.cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(crossSite.status).toBe(403);
  });

  it('takes a long list of names (a few thousand)', async () => {
    const names = [...uploaded.keys()].map((name) => `many/${name}`);
    const response = await api(`/${bucketId}/zip`, { method: 'POST', body: JSON.stringify({ prefix: 'many/', filenames: names }) });
    expect((await zipOf(response)).length).toBe(uploaded.size);
  }, 60_000);
});

describe('refusals', () => {
  it('400 for an empty selection, a name outside prefix, a bad folder name or an unknown field', async () => {
    const post = (body: unknown) => api(`/${bucketId}/zip`, { method: 'POST', body: JSON.stringify(body) });
    for (const body of [
      {},
      { filenames: [] },
      { filenames: [], folders: [] },
      { prefix: 'many/', filenames: ['outside.txt'] },
      { folders: ['a//b/'] },
      { files: ['a'] },
    ]) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await json(response)).error).toBeTruthy();
    }
    expect((await api(`/${bucketId}/zip?prefix=..%2F`)).status).toBe(400);
  });

  it('404 for a folder or selection that holds no file, before any byte of zip', async () => {
    const empty = await api(`/${bucketId}/zip?prefix=nothing-here/`);
    expect(empty.status).toBe(404);
    expect((await json(empty)).error).toMatch(/Nothing to zip/);
    const missing = await api(`/${bucketId}/zip`, { method: 'POST', body: JSON.stringify({ filenames: ['nope'] }) });
    expect(missing.status).toBe(404);
  });

  it("403 for a key without read permission; 404 for another owner's bucket, a public one too, and for a key limited to other buckets", async () => {
    const createKey = async (body: unknown) =>
      (
        await json(
          await fetch(`${server.url}/api/keys`, {
            method: 'POST',
            headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }),
        )
      ).data.key as string;
    const writeOnly = await createKey({ permissions: ['write'] });
    const refused = await fetch(`${server.url}/api/v1/buckets/${bucketId}/zip?prefix=many/`, { headers: { 'x-api-key': writeOnly } });
    expect(refused.status).toBe(403);
    const post = await fetch(`${server.url}/api/v1/buckets/${bucketId}/zip`, {
      method: 'POST',
      headers: { 'x-api-key': writeOnly, 'content-type': 'application/json' },
      body: JSON.stringify({ filenames: ['outside.txt'] }),
    });
    expect(post.status).toBe(403);

    const otherBucket = await createBucket(user, 'zips-other');
    const limited = await createKey({ buckets: [otherBucket], permissions: ['read'] });
    expect((await fetch(`${server.url}/api/v1/buckets/${bucketId}/zip`, { headers: { 'x-api-key': limited } })).status).toBe(404);

    const stranger = await signUp(server.url);
    expect((await devApi(server.url, stranger)(`/${bucketId}/zip`)).status).toBe(404);
    const strangersPublic = await createBucket(stranger, 'public-zips');
    await devApi(server.url, stranger)(`/${strangersPublic}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'public' }) });
    await put(strangersPublic, 'a.txt', Buffer.from('a'), stranger);
    expect((await api(`/${strangersPublic}/zip`)).status).toBe(404);
    expect((await fetch(`${server.url}/api/v1/buckets/${strangersPublic}/zip`)).status).toBe(401);
  });
});

const MiB = 1024 * 1024;
/** The server's resident memory may grow this much over idle while it zips (issue 36). */
const RSS_GROWTH_LIMIT = 64 * MiB;
const LARGE_FILES = 4;
const LARGE_BYTES = 48 * MiB;

function memoryOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) * 1024;
}
const openFiles = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(process.platform !== 'linux')('a large zip from a server process', () => {
  let proc: ServerProcess;
  let backend: Awaited<ReturnType<typeof backendEnv>>;
  let dataDir: string;
  let owner: TestUser;
  let id: number;
  const hashes = new Map<string, string>();

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-zip-proc-'));
    backend = await backendEnv();
    proc = await spawnServer({ ...backend.env, DATA_DIR: dataDir, PLAN_FREE_STORAGE_BYTES: String(4 * 1024 * MiB), SIGNUP_RATE_LIMIT: '100000' });
    owner = await signUp(proc.url);
    const ownerApi = devApi(proc.url, owner);
    id = (await json(await ownerApi('', { method: 'POST', body: JSON.stringify({ name: 'big-zips' }) }))).data.id;
    const small = Array.from({ length: FILES }, (_, i) => [`big/small/${i}.bin`, randomBytes(1 + ((i * 53) % 4000))] as const);
    await inParallel(small, 16, async ([name, bytes]) => {
      expect((await ownerApi(`/${id}/files/${name}`, { method: 'PUT', body: bytes })).status).toBe(201);
      hashes.set(name.slice('big/'.length), sha256(bytes));
    });
    for (let i = 0; i < LARGE_FILES; i++) {
      const bytes = randomBytes(LARGE_BYTES + i);
      expect((await ownerApi(`/${id}/files/big/large-${i}.bin`, { method: 'PUT', body: bytes })).status).toBe(201);
      hashes.set(`large-${i}.bin`, sha256(bytes));
    }
  }, 300_000);
  afterAll(async () => {
    if (proc && proc.child.exitCode === null) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    await backend?.cleanup();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(`zips ${FILES} files and ${LARGE_FILES} of ${LARGE_BYTES / MiB} MiB byte for byte while the server's RSS stays within idle + 64 MiB`, async () => {
    const pid = proc.child.pid!;
    // Warm: the code paths loaded and the heap grown as any zip grows it, then idle.
    await (await fetch(`${proc.url}/api/v1/buckets/${id}/zip?prefix=big/small/`, { headers: { 'x-api-key': owner.apiKey } })).arrayBuffer();
    await pause(500);
    const idle = memoryOf(pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(pid))), 25);
    const target = path.join(dataDir, 'download.zip');
    try {
      const response = await fetch(`${proc.url}/api/v1/buckets/${id}/zip?prefix=big/`, { headers: { 'x-api-key': owner.apiKey } });
      expect(response.status).toBe(200);
      await pipeline(Readable.fromWeb(response.body! as WebReadableStream), createWriteStream(target));
    } finally {
      clearInterval(sampler);
    }
    console.log(`[pail] zip of ${FILES + LARGE_FILES} files: server RSS ${Math.round(idle / MiB)} MiB idle, peak ${Math.round(peak / MiB)} MiB`);
    expect(peak - idle).toBeLessThan(RSS_GROWTH_LIMIT);
    const entries = await unzip(target);
    expect(entries).toHaveLength(hashes.size);
    for (const entry of entries) expect(entry.sha256, entry.name).toBe(hashes.get(entry.name));
  }, 180_000);

  it('a client that stops reading mid-zip makes the server wait, not buffer; cutting it closes what it read and leaves the server healthy', async () => {
    const pid = proc.child.pid!;
    await pause(300);
    const idle = memoryOf(pid);
    const filesBefore = openFiles(pid);
    const url = new URL(`${proc.url}/api/v1/buckets/${id}/zip?prefix=big/`);
    const socket = net.connect(Number(url.port), url.hostname);
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      socket.on('error', reject);
      socket.on('connect', () => socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nx-api-key: ${owner.apiKey}\r\n\r\n`));
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        // Into the first large file, then no more reading.
        if (received > 8 * MiB) {
          socket.pause();
          resolve();
        }
      });
    });
    let peak = idle;
    for (let i = 0; i < 40; i++) {
      await pause(50);
      peak = Math.max(peak, memoryOf(pid));
    }
    expect(peak - idle).toBeLessThan(RSS_GROWTH_LIMIT);
    socket.destroy();
    // The file the zip was reading is closed once the connection is gone.
    let files = openFiles(pid);
    for (let i = 0; i < 40 && files > filesBefore; i++) {
      await pause(50);
      files = openFiles(pid);
    }
    expect(files).toBeLessThanOrEqual(filesBefore);
    expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
    const again = await fetch(`${proc.url}/api/v1/buckets/${id}/zip?prefix=big/small/`, { headers: { 'x-api-key': owner.apiKey } });
    expect((await unzip(Buffer.from(await again.arrayBuffer()))).length).toBe(FILES);
  }, 60_000);
});
