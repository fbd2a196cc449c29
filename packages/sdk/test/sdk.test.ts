/**
 * The SDK against real servers: one with default settings for the calls
 * themselves, one with tiny storage and file caps, one with a tiny rate limit.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import {
  BucketNameTakenError,
  BucketNotFoundError,
  FileNotFoundError,
  NotFoundError,
  Pail,
  PailError,
  PayloadTooLargeError,
  RangeNotSatisfiableError,
  RateLimitError,
  StorageLimitExceededError,
  UnauthorizedError,
  ValidationError,
} from '../src/index.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const sdkDir = path.resolve(here, '..');
const repoRoot = path.resolve(sdkDir, '../..');

let server: TestServer;
let pail: Pail;
let tmp: string;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function bytesEqual(actual: Uint8Array, expected: Uint8Array): void {
  expect(actual.byteLength).toBe(expected.byteLength);
  expect(Buffer.compare(Buffer.from(actual), Buffer.from(expected))).toBe(0);
}

let bucketCounter = 0;
const uniqueName = (label: string) => `${label}-${process.pid}-${++bucketCounter}`;

beforeAll(async () => {
  server = await startTestServer();
  const user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pail-sdk-test-'));
});

afterAll(async () => {
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('buckets', () => {
  it('creates, lists, gets, changes visibility of and deletes buckets', async () => {
    const priv = await pail.createBucket(uniqueName('private'));
    expect(priv).toMatchObject({ public: false, object_count: 0, total_bytes: 0 });
    expect(typeof priv.id).toBe('number');
    const pub = await pail.createBucket(uniqueName('public'), { public: true });
    expect(pub.public).toBe(true);
    const vis = await pail.createBucket(uniqueName('vis'), { visibility: 'public' });
    expect(vis.public).toBe(true);

    const listed = await pail.listBuckets();
    const ids = listed.map((b) => b.id);
    expect(ids).toEqual(expect.arrayContaining([priv.id, pub.id, vis.id]));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);

    expect(await pail.getBucket(priv.id)).toEqual(priv);
    expect((await pail.getBucket(String(priv.id))).name).toBe(priv.name);

    await pail.setVisibility(priv.id, 'public');
    expect((await pail.getBucket(priv.id)).public).toBe(true);
    await pail.setVisibility(priv.id, 'private');
    expect((await pail.getBucket(priv.id)).public).toBe(false);

    await pail.deleteBucket(vis.id);
    const gone = await rejection(pail.getBucket(vis.id));
    expect(gone).toBeInstanceOf(BucketNotFoundError);
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone).toBeInstanceOf(PailError);
    expect(gone).toMatchObject({ status: 404, code: 'BucketNotFound', message: 'Bucket not found', body: { error: 'Bucket not found' } });
    expect((await pail.listBuckets()).map((b) => b.id)).not.toContain(vis.id);
  });

  it('throws BucketNotFoundError from every bucket call on a missing bucket', async () => {
    const missing = 987654;
    for (const call of [
      () => pail.getBucket(missing),
      () => pail.deleteBucket(missing),
      () => pail.setVisibility(missing, 'public'),
      () => pail.listFiles(missing),
      () => pail.uploadFile(missing, 'a.txt', 'x'),
      () => pail.uploadMultipart(missing, 'a.txt', 'x'),
      () => pail.downloadFile(missing, 'a.txt'),
      () => pail.downloadStream(missing, 'a.txt'),
      () => pail.headFile(missing, 'a.txt'),
      () => pail.deleteFile(missing, 'a.txt'),
    ]) {
      const error = await rejection(call());
      expect(error).toBeInstanceOf(BucketNotFoundError);
      expect((error as BucketNotFoundError).status).toBe(404);
    }
  });

  it('throws ValidationError for a bad name and BucketNameTakenError for a duplicate', async () => {
    const bad = await rejection(pail.createBucket('Not A Valid Name!'));
    expect(bad).toBeInstanceOf(ValidationError);
    expect(bad).toMatchObject({ status: 400, code: 'ValidationError' });
    expect((bad as Error).message).toMatch(/Bucket name/);

    const name = uniqueName('dup');
    await pail.createBucket(name);
    const taken = await rejection(pail.createBucket(name));
    expect(taken).toBeInstanceOf(BucketNameTakenError);
    expect(taken).toMatchObject({ status: 409, code: 'BucketNameTaken', message: 'Bucket name already exists' });
  });

  it('throws UnauthorizedError for a wrong or missing key', async () => {
    const wrong = new Pail({ baseUrl: server.url, apiKey: 'pail_not_a_real_key' });
    const error = await rejection(wrong.listBuckets());
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ status: 401, code: 'Unauthorized', message: 'Unauthorized' });
    expect(await rejection(wrong.createBucket('whatever'))).toBeInstanceOf(UnauthorizedError);
    expect(await rejection(new Pail({ baseUrl: `${server.url}/` }).listBuckets())).toBeInstanceOf(UnauthorizedError);
  });

  it('accepts the Developer API base as baseUrl too', async () => {
    const apiKey = (await signUp(server.url)).apiKey;
    const bucket = await new Pail({ baseUrl: `${server.url}/api/v1/buckets/`, apiKey }).createBucket('via-api-base');
    expect((await new Pail({ baseUrl: `${server.url}/api/v1/bucket`, apiKey }).getBucket(bucket.id)).name).toBe('via-api-base');
  });
});

describe('uploads and downloads', () => {
  let bucketId: number;
  beforeAll(async () => {
    bucketId = (await pail.createBucket(uniqueName('files'))).id;
  });

  it('uploads from a Buffer, a Uint8Array, an ArrayBuffer and a string', async () => {
    const buffer = randomBytes(10_000);
    expect(await pail.uploadFile(bucketId, 'buffer.bin', buffer)).toEqual({ filename: 'buffer.bin', size: 10_000, updated: false });
    bytesEqual(await pail.downloadFile(bucketId, 'buffer.bin'), buffer);

    const u8 = new Uint8Array([0, 1, 2, 253, 254, 255]);
    await pail.uploadFile(bucketId, 'u8.bin', u8);
    bytesEqual(await pail.downloadFile(bucketId, 'u8.bin'), u8);

    const view = new Uint8Array([9, 8, 7, 6, 5]).subarray(1, 4);
    await pail.uploadFile(bucketId, 'ab.bin', view.slice().buffer);
    bytesEqual(await pail.downloadFile(bucketId, 'ab.bin'), view);

    const text = 'héllo wörld ✓';
    const result = await pail.uploadFile(bucketId, 'text.txt', text);
    expect(result.size).toBe(Buffer.byteLength(text));
    expect(new TextDecoder().decode(await pail.downloadFile(bucketId, 'text.txt'))).toBe(text);
  });

  it('uploads from a Blob, using its type as the Content-Type', async () => {
    const bytes = randomBytes(5000);
    await pail.uploadFile(bucketId, 'blob.png', new Blob([bytes], { type: 'image/png' }));
    bytesEqual(await pail.downloadFile(bucketId, 'blob.png'), bytes);
    expect((await pail.headFile(bucketId, 'blob.png')).contentType).toBe('image/png');

    await pail.uploadFile(bucketId, 'blob2.bin', new Blob([bytes], { type: 'image/png' }), { contentType: 'application/x-custom' });
    expect((await pail.headFile(bucketId, 'blob2.bin')).contentType).toBe('application/x-custom');
  });

  it('lets the server guess the type from the extension when none is given', async () => {
    await pail.uploadFile(bucketId, 'data.json', '{"a":1}');
    expect((await pail.headFile(bucketId, 'data.json')).contentType).toMatch(/^application\/json/);
    await pail.uploadFile(bucketId, 'page.html', new Uint8Array([60, 112, 62]));
    expect((await pail.headFile(bucketId, 'page.html')).contentType).toMatch(/^text\/html/);
  });

  it('uploads from a file path, streamed, with both spellings', async () => {
    const file = path.join(tmp, 'big.bin');
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    await writeFile(file, bytes);
    expect(await pail.uploadFile(bucketId, 'from-path.bin', { path: file })).toEqual({ filename: 'from-path.bin', size: bytes.length, updated: false });
    bytesEqual(await pail.downloadFile(bucketId, 'from-path.bin'), bytes);

    expect(await pail.uploadFileFromPath(bucketId, 'from-path.bin', file)).toMatchObject({ size: bytes.length, updated: true });
    const missing = await rejection(pail.uploadFileFromPath(bucketId, 'x.bin', path.join(tmp, 'does-not-exist')));
    expect((missing as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('uploads from a Node Readable, an fs.ReadStream and a web ReadableStream', async () => {
    const bytes = randomBytes(2 * 1024 * 1024 + 5);
    const chunks = function* () {
      for (let i = 0; i < bytes.length; i += 64 * 1024) yield bytes.subarray(i, i + 64 * 1024);
    };
    expect(await pail.uploadFile(bucketId, 'readable.bin', Readable.from(chunks()))).toMatchObject({ size: bytes.length });
    bytesEqual(await pail.downloadFile(bucketId, 'readable.bin'), bytes);

    const file = path.join(tmp, 'stream-src.bin');
    await writeFile(file, bytes);
    expect(await pail.uploadFile(bucketId, 'fs-stream.bin', createReadStream(file))).toMatchObject({ size: bytes.length });
    bytesEqual(await pail.downloadFile(bucketId, 'fs-stream.bin'), bytes);

    const web = Readable.toWeb(Readable.from(chunks())) as unknown as ReadableStream<Uint8Array>;
    expect(await pail.uploadFile(bucketId, 'web-stream.bin', web)).toMatchObject({ size: bytes.length });
    bytesEqual(await pail.downloadFile(bucketId, 'web-stream.bin'), bytes);

    // Text chunks (a Readable with an encoding) are sent as UTF-8.
    await pail.uploadFile(bucketId, 'text-stream.txt', Readable.from(['ab', 'cé']));
    expect(new TextDecoder().decode(await pail.downloadFile(bucketId, 'text-stream.txt'))).toBe('abcé');

    // An empty stream is a valid 0-byte file.
    expect(await pail.uploadFile(bucketId, 'empty.bin', Readable.from([]))).toMatchObject({ size: 0 });
    expect((await pail.downloadFile(bucketId, 'empty.bin')).byteLength).toBe(0);
  });

  it('uploads with multipart from bytes, a Blob and a path', async () => {
    const bytes = randomBytes(4096);
    expect(await pail.uploadMultipart(bucketId, 'multi.bin', bytes)).toEqual({ filename: 'multi.bin', size: 4096, updated: false });
    bytesEqual(await pail.downloadFile(bucketId, 'multi.bin'), bytes);

    await pail.uploadMultipart(bucketId, 'multi.txt', new Blob(['hello'], { type: 'text/plain' }));
    expect((await pail.headFile(bucketId, 'multi.txt')).contentType).toMatch(/^text\/plain/);

    const file = path.join(tmp, 'multi-src.bin');
    await writeFile(file, bytes);
    expect(await pail.uploadMultipart(bucketId, 'multi.bin', { path: file }, { contentType: 'application/x-thing' })).toMatchObject({ updated: true });
    expect((await pail.headFile(bucketId, 'multi.bin')).contentType).toBe('application/x-thing');

    await expect(pail.uploadMultipart(bucketId, 'nope.bin', Readable.from([bytes]))).rejects.toThrow(TypeError);
  });

  it('reports updated: true when a file is replaced', async () => {
    expect((await pail.uploadFile(bucketId, 'replace.txt', 'one')).updated).toBe(false);
    expect(await pail.uploadFile(bucketId, 'replace.txt', 'second')).toEqual({ filename: 'replace.txt', size: 6, updated: true });
    expect(new TextDecoder().decode(await pail.downloadFile(bucketId, 'replace.txt'))).toBe('second');
  });

  it('percent-encodes awkward filenames', async () => {
    const name = 'my fïle #1?&%.txt';
    await pail.uploadFile(bucketId, name, 'odd');
    expect(new TextDecoder().decode(await pail.downloadFile(bucketId, name))).toBe('odd');
    const { files } = await pail.listFiles(bucketId, { prefix: 'my f' });
    expect(files.map((f) => f.filename)).toEqual([name]);
    await pail.deleteFile(bucketId, name);

    // A `/` makes folders now (folders.test.ts); an empty folder name is still refused, by the server.
    const bad = await rejection(pail.uploadFile(bucketId, 'a//b.txt', 'x'));
    expect(bad).toBeInstanceOf(ValidationError);
    // Names a URL path cannot carry are refused before any request, as the server would.
    for (const name of ['', '.', '..']) {
      expect(await rejection(pail.uploadFile(bucketId, name, 'x'))).toMatchObject({ status: 400, code: 'ValidationError' });
      expect(await rejection(pail.downloadFile(bucketId, name))).toBeInstanceOf(ValidationError);
    }
    expect(await rejection(pail.getBucket(''))).toBeInstanceOf(BucketNotFoundError);
    expect(await rejection(pail.getBucket('..'))).toBeInstanceOf(BucketNotFoundError);
  });

  it('downloads as a stream, to a path, and by range', async () => {
    const bytes = randomBytes(300_000);
    await pail.uploadFile(bucketId, 'ranged.bin', bytes);

    bytesEqual(await readAll(await pail.downloadStream(bucketId, 'ranged.bin')), bytes);
    bytesEqual(await pail.downloadFile(bucketId, 'ranged.bin', { range: { start: 10, end: 19 } }), bytes.subarray(10, 20));
    bytesEqual(await pail.downloadFile(bucketId, 'ranged.bin', { range: { start: 299_990 } }), bytes.subarray(299_990));
    bytesEqual(await pail.downloadFile(bucketId, 'ranged.bin', { range: { suffix: 5 } }), bytes.subarray(-5));
    bytesEqual(await readAll(await pail.downloadStream(bucketId, 'ranged.bin', { range: { start: 1000, end: 250_000 } })), bytes.subarray(1000, 250_001));

    const outside = await rejection(pail.downloadFile(bucketId, 'ranged.bin', { range: { start: 400_000 } }));
    expect(outside).toBeInstanceOf(RangeNotSatisfiableError);
    expect(outside).toMatchObject({ status: 416 });
    await expect(pail.downloadFile(bucketId, 'ranged.bin', { range: { start: 5, end: 2 } })).rejects.toThrow(RangeError);

    const target = path.join(tmp, 'downloaded.bin');
    expect(await pail.downloadToPath(bucketId, 'ranged.bin', target)).toBe(bytes.length);
    bytesEqual(await readFile(target), bytes);
    expect(await pail.downloadToPath(bucketId, 'ranged.bin', target, { range: { start: 0, end: 9 } })).toBe(10);
    bytesEqual(await readFile(target), bytes.subarray(0, 10));
    // A target that cannot be opened: the download is cancelled. (A small file, received whole
    // before the cancel: cancelling a body mid-way, then making another request, leaves a
    // client connection open that never sends a request, and the test server's close() waits
    // for Node's 60 s headers timeout on it.)
    await pail.uploadFile(bucketId, 'tiny.txt', 'tiny');
    expect(await rejection(pail.downloadToPath(bucketId, 'tiny.txt', path.join(tmp, 'no-such-dir', 'x.bin')))).toMatchObject({ code: 'ENOENT' });
    expect(await rejection(pail.downloadToPath(bucketId, 'missing.bin', path.join(tmp, 'never.bin')))).toBeInstanceOf(FileNotFoundError);
    await expect(readFile(path.join(tmp, 'never.bin'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reads metadata with headFile and tells a missing file from a missing bucket', async () => {
    await pail.uploadFile(bucketId, 'meta.txt', 'twelve bytes', { contentType: 'text/plain' });
    const meta = await pail.headFile(bucketId, 'meta.txt');
    expect(meta.size).toBe(12);
    expect(meta.contentType).toBe('text/plain');
    expect(meta.etag).toMatch(/^"[^"]+"$/);
    expect(meta.lastModified).toBeInstanceOf(Date);
    expect(Math.abs(meta.lastModified.getTime() - Date.now())).toBeLessThan(60_000);

    const noFile = await rejection(pail.headFile(bucketId, 'no-such-file.txt'));
    expect(noFile).toBeInstanceOf(FileNotFoundError);
    expect(noFile).toMatchObject({ status: 404, code: 'FileNotFound' });
    const noBucket = await rejection(pail.headFile(123456, 'meta.txt'));
    expect(noBucket).toBeInstanceOf(BucketNotFoundError);
  });

  it('throws FileNotFoundError for missing files and deletes files', async () => {
    await pail.uploadFile(bucketId, 'doomed.txt', 'bye');
    await pail.deleteFile(bucketId, 'doomed.txt');
    for (const call of [
      () => pail.downloadFile(bucketId, 'doomed.txt'),
      () => pail.downloadStream(bucketId, 'doomed.txt'),
      () => pail.deleteFile(bucketId, 'doomed.txt'),
    ]) {
      const error = await rejection(call());
      expect(error).toBeInstanceOf(FileNotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'FileNotFound', message: 'File not found' });
    }
  });

  it('downloads from a public bucket without a key, but not from a private one', async () => {
    const pub = await pail.createBucket(uniqueName('pub'), { public: true });
    await pail.uploadFile(pub.id, 'open.txt', 'for everyone');
    const anonymous = new Pail({ baseUrl: server.url });
    expect(new TextDecoder().decode(await anonymous.downloadFile(pub.id, 'open.txt'))).toBe('for everyone');
    expect((await anonymous.headFile(pub.id, 'open.txt')).size).toBe(12);
    expect(await rejection(anonymous.downloadFile(bucketId, 'meta.txt'))).toBeInstanceOf(UnauthorizedError);
  });
});

describe('listing files', () => {
  it('pages with listFiles and walks every page with iterateFiles', async () => {
    const { id } = await pail.createBucket(uniqueName('list'));
    const names = ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt', 'other.bin'];
    for (const name of [...names].reverse()) await pail.uploadFile(id, name, name);

    const all = await pail.listFiles(id);
    expect(all.files.map((f) => f.filename)).toEqual(names);
    expect(all.nextCursor).toBeNull();
    expect(all.files[0]).toMatchObject({ id: `${id}/a.txt`, bucket_id: id, filename: 'a.txt', size: 5 });
    expect(typeof all.files[0]?.url).toBe('string');

    const first = await pail.listFiles(id, { limit: 2 });
    expect(first.files.map((f) => f.filename)).toEqual(['a.txt', 'b.txt']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await pail.listFiles(id, { limit: 2, cursor: first.nextCursor! });
    expect(second.files.map((f) => f.filename)).toEqual(['c.txt', 'd.txt']);

    const walked: string[] = [];
    for await (const file of pail.iterateFiles(id, { pageSize: 2 })) walked.push(file.filename);
    expect(walked).toEqual(names);

    const txt: string[] = [];
    for await (const file of pail.iterateFiles(id, { prefix: 'o' })) txt.push(file.filename);
    expect(txt).toEqual(['other.bin']);
    expect((await pail.listFiles(id, { prefix: 'zzz' })).files).toEqual([]);

    expect(await rejection(pail.listFiles(id, { limit: 0 }))).toBeInstanceOf(ValidationError);
    expect((await pail.getBucket(id)).object_count).toBe(names.length);
  });
});

describe('storage and file-size limits', () => {
  let limited: TestServer;
  let client: Pail;
  beforeAll(async () => {
    limited = await startTestServer({ env: { PLAN_FREE_STORAGE_BYTES: '1000', MAX_FILE_BYTES: '600' } });
    client = new Pail({ baseUrl: limited.url, apiKey: (await signUp(limited.url)).apiKey });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('throws PayloadTooLargeError over the per-file limit', async () => {
    const { id } = await client.createBucket('big');
    const tooBig = await rejection(client.uploadFile(id, 'big.bin', randomBytes(601)));
    expect(tooBig).toBeInstanceOf(PayloadTooLargeError);
    expect(tooBig).toMatchObject({ status: 413, code: 'PayloadTooLarge' });
    const streamed = await rejection(client.uploadFile(id, 'big.bin', Readable.from([randomBytes(400), randomBytes(400)])));
    expect(streamed).toBeInstanceOf(PayloadTooLargeError);
    expect((await client.listFiles(id)).files).toEqual([]);
  });

  it('throws StorageLimitExceededError naming the cap, from bytes and from streams', async () => {
    const { id } = await client.createBucket('cap');
    await client.uploadFile(id, 'one.bin', randomBytes(400));
    await client.uploadFile(id, 'two.bin', randomBytes(400));
    const over = await rejection(client.uploadFile(id, 'three.bin', randomBytes(400)));
    expect(over).toBeInstanceOf(StorageLimitExceededError);
    expect(over).toMatchObject({ status: 409, code: 'StorageLimitExceeded' });
    expect((over as Error).message).toMatch(/^Storage limit exceeded: the free plan allows/);

    const streamed = await rejection(client.uploadFile(id, 'three.bin', Readable.from([randomBytes(300), randomBytes(100)])));
    expect(streamed).toBeInstanceOf(StorageLimitExceededError);
    const multipart = await rejection(client.uploadMultipart(id, 'three.bin', randomBytes(400)));
    expect(multipart).toBeInstanceOf(StorageLimitExceededError);
    expect((await client.getBucket(id)).total_bytes).toBe(800);
  });
});

describe('rate limits', () => {
  const LIMIT = 4;
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ env: { PLAN_FREE_RATE_LIMIT: String(LIMIT) } });
  });
  afterAll(async () => {
    await limited?.close();
  });

  /** A client for a new user (a fresh budget), with that budget already spent. */
  async function exhausted(options: Partial<ConstructorParameters<typeof Pail>[0]> = {}) {
    const apiKey = (await signUp(limited.url)).apiKey;
    const plain = new Pail({ baseUrl: limited.url, apiKey });
    for (let i = 0; i < LIMIT; i++) await plain.listBuckets();
    return new Pail({ baseUrl: limited.url, apiKey, ...options });
  }

  it('throws RateLimitError with retryAfterSeconds once the budget is spent', async () => {
    const client = await exhausted();
    const error = await rejection(client.listBuckets());
    expect(error).toBeInstanceOf(RateLimitError);
    const limit = error as RateLimitError;
    expect(limit).toMatchObject({ status: 429, code: 'RateLimited', message: 'Rate limit exceeded', limit: LIMIT, remaining: 0 });
    expect(limit.retryAfterSeconds).toBeGreaterThan(0);
    expect(limit.retryAfterSeconds).toBeLessThanOrEqual(60);

    // HEAD has no body: the status alone still gives the right class.
    const head = await rejection(client.headFile(1, 'x.txt'));
    expect(head).toBeInstanceOf(RateLimitError);
    expect((head as RateLimitError).retryAfterSeconds).toBeGreaterThan(0);

    // A streamed upload refused before its body is read still reports the 429.
    const upload = await rejection(client.uploadFile(1, 'x.bin', Readable.from([randomBytes(1000)])));
    expect(upload).toBeInstanceOf(RateLimitError);
  });

  it('schedules a retry after Retry-After when retryOn429 is on', async () => {
    const retries: { attempt: number; delayMs: number; error: RateLimitError }[] = [];
    const controller = new AbortController();
    const client = await exhausted({
      retryOn429: {
        maxRetries: 2,
        onRetry: (info) => {
          retries.push(info);
          // The real window is a minute long: check the plan, then stop waiting.
          controller.abort(new Error('stop waiting'));
        },
      },
    });
    const started = Date.now();
    await expect(client.listBuckets({ signal: controller.signal })).rejects.toThrow('stop waiting');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(retries).toHaveLength(1);
    expect(retries[0]?.attempt).toBe(1);
    expect(retries[0]?.delayMs).toBe((retries[0]?.error.retryAfterSeconds ?? 0) * 1000);
    expect(retries[0]?.delayMs).toBeGreaterThan(0);
  });

  it('gives up at once when Retry-After is longer than maxDelaySeconds', async () => {
    let retried = 0;
    const client = await exhausted({ retryOn429: { maxDelaySeconds: 0.5, onRetry: () => retried++ } });
    const started = Date.now();
    const error = await rejection(client.listBuckets());
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterSeconds).toBeGreaterThan(0.5);
    expect(retried).toBe(0);
    // Waiting would take Retry-After, many seconds here (a budget of 4 requests a minute).
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  /** fetch that answers the first `times` calls itself with a 429 and passes the rest to the server. */
  function flaky(times: number, retryAfter: string | null) {
    const calls: string[] = [];
    const fetchImpl: typeof fetch = async (input, init) => {
      calls.push(`${init?.method ?? 'GET'} ${input instanceof Request ? input.url : String(input)}`);
      if (calls.length <= times) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (retryAfter !== null) headers['retry-after'] = retryAfter;
        return new Response(JSON.stringify({ error: 'Rate limit exceeded', code: 'RateLimited' }), { status: 429, headers });
      }
      return fetch(input, init);
    };
    return { calls, fetchImpl };
  }

  it('waits Retry-After, resends the body and succeeds', async () => {
    const apiKey = (await signUp(limited.url)).apiKey;
    const { calls, fetchImpl } = flaky(1, '1');
    const client = new Pail({ baseUrl: limited.url, apiKey, fetch: fetchImpl, retryOn429: true });
    const { id } = await new Pail({ baseUrl: limited.url, apiKey }).createBucket('retry');

    const bytes = randomBytes(2048);
    const started = Date.now();
    expect(await client.uploadFile(id, 'retried.bin', bytes)).toMatchObject({ size: 2048, updated: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(calls).toHaveLength(2);
    bytesEqual(await new Pail({ baseUrl: limited.url, apiKey }).downloadFile(id, 'retried.bin'), bytes);
  });

  it('retries a path upload, and an HTTP-date Retry-After', async () => {
    const apiKey = (await signUp(limited.url)).apiKey;
    const { id } = await new Pail({ baseUrl: limited.url, apiKey }).createBucket('retry-path');
    const file = path.join(tmp, 'retry-src.bin');
    const bytes = randomBytes(100_000);
    await writeFile(file, bytes);
    const { calls, fetchImpl } = flaky(1, new Date(Date.now() - 1000).toUTCString());
    const client = new Pail({ baseUrl: limited.url, apiKey, fetch: fetchImpl, retryOn429: { maxRetries: 1 } });
    expect(await client.uploadFile(id, 'from-path.bin', { path: file })).toMatchObject({ size: bytes.length });
    expect(calls).toHaveLength(2);
  });

  it('stops after maxRetries and throws the last RateLimitError', async () => {
    const apiKey = (await signUp(limited.url)).apiKey;
    const { calls, fetchImpl } = flaky(100, '0');
    const client = new Pail({ baseUrl: limited.url, apiKey, fetch: fetchImpl, retryOn429: { maxRetries: 3 } });
    const error = await rejection(client.listBuckets());
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterSeconds).toBe(0);
    expect(calls).toHaveLength(4);
  });

  it('never retries a one-shot stream, nor when retryOn429 is off', async () => {
    const apiKey = (await signUp(limited.url)).apiKey;
    const stream = flaky(1, '0');
    const retrying = new Pail({ baseUrl: limited.url, apiKey, fetch: stream.fetchImpl, retryOn429: true });
    expect(await rejection(retrying.uploadFile(1, 'x.bin', Readable.from([Buffer.from('abc')])))).toBeInstanceOf(RateLimitError);
    expect(stream.calls).toHaveLength(1);

    const off = flaky(1, '0');
    const plain = new Pail({ baseUrl: limited.url, apiKey, fetch: off.fetchImpl });
    expect(await rejection(plain.listBuckets())).toBeInstanceOf(RateLimitError);
    expect(off.calls).toHaveLength(1);
  });
});

/**
 * A fresh project, as a new user would have: a directory of its own with the
 * SDK compiled into node_modules/@pail/sdk (straight from src/, so the repo's
 * dist/, which other builds may be rewriting, plays no part).
 */
let freshProject: Promise<string> | undefined;
function makeFreshProject(): Promise<string> {
  return (freshProject ??= (async () => {
    const dir = path.join(tmp, 'fresh-project');
    const pkg = path.join(dir, 'node_modules/@pail/sdk');
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
    const flags = ['--noCheck', '--composite', 'false', '--incremental', 'false', '--declaration', 'false', '--sourceMap', 'false'];
    await run(process.execPath, [tsc, '-p', path.join(sdkDir, 'tsconfig.json'), '--outDir', path.join(pkg, 'dist'), ...flags], { cwd: repoRoot });
    await writeFile(path.join(pkg, 'package.json'), await readFile(path.join(sdkDir, 'package.json')));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'fresh-project', private: true }));
    return dir;
  })());
}

// Backend-independent and slow-ish: the embedded project runs them, once.
describe.skipIf(process.env.PAIL_TEST_BACKEND === 'scaled')('the package, in a child process', () => {
  it('streams a large upload and download in bounded memory', async () => {
    const SIZE = 64 * 1024 * 1024;
    const big = path.join(tmp, 'large.bin');
    const handle = await (await import('node:fs/promises')).open(big, 'w');
    const chunk = randomBytes(1024 * 1024);
    for (let i = 0; i < SIZE / chunk.length; i++) await handle.write(chunk);
    await handle.close();
    const project = await makeFreshProject();
    const script = path.join(project, 'memory.mjs');
    await writeFile(
      script,
      `
      import { createReadStream } from 'node:fs';
      import { Pail } from '@pail/sdk';
      const [url, apiKey, file, out] = process.argv.slice(2);
      const pail = new Pail({ baseUrl: url, apiKey });
      // The peak of live ArrayBuffer memory in each phase, sampled after a collection.
      const peaks = {};
      let phase = 'start';
      const sample = () => { gc(); peaks[phase] = Math.max(peaks[phase] ?? 0, Math.round(process.memoryUsage().arrayBuffers / 1e5) / 10); };
      const watch = setInterval(sample, 50);
      const during = async (name, work) => { sample(); phase = name; try { return await work(); } finally { sample(); } };
      const { id } = await pail.createBucket('memory');
      const results = {};
      results.path = (await during('path', () => pail.uploadFile(id, 'a.bin', { path: file }))).size;
      results.stream = (await during('stream', () => pail.uploadFile(id, 'b.bin', createReadStream(file)))).size;
      results.multipart = (await during('multipart', () => pail.uploadMultipart(id, 'c.bin', { path: file }))).size;
      results.downloadStream = await during('downloadStream', async () => {
        // A stream not read at once must survive a garbage collection meanwhile.
        const stream = await pail.downloadStream(id, 'a.bin');
        gc();
        await new Promise((resolve) => setTimeout(resolve, 100));
        gc();
        let read = 0;
        for await (const part of stream) read += part.byteLength;
        return read;
      });
      results.downloadToPath = await during('downloadToPath', () => pail.downloadToPath(id, 'b.bin', out));
      clearInterval(watch);
      results.peakArrayBuffersMB = peaks;
      console.log(JSON.stringify(results));
      `,
    );
    const user = await signUp(server.url);
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', '--no-concurrent-array-buffer-sweeping', script, server.url, user.apiKey, big, path.join(tmp, 'large-copy.bin')],
      { cwd: project },
    );
    const results = JSON.parse(stdout);
    expect(results).toMatchObject({ path: SIZE, stream: SIZE, multipart: SIZE, downloadStream: SIZE, downloadToPath: SIZE });
    // Holding the file (the failure this guards against) would be 64 MB or
    // more in one phase. The child frees dead buffers inside each gc()
    // (--no-concurrent-array-buffer-sweeping), so a sample counts live memory
    // only: 0.1-0.5 MB in every phase, alone or with every core busy. (With
    // V8's background sweeping, dead buffers were counted too, 5-62 MB
    // depending on the machine's load.) Once, in a full Node 24 run, the
    // form-data upload peaked at 11.2 MB, and once, on Node 24 with a Chromium
    // suite running beside it, the multipart upload at 16.3 MB; neither was seen
    // again alone. The limit is half the file: holding it would be 64 MB or more.
    for (const [phase, peakMB] of Object.entries(results.peakArrayBuffersMB as Record<string, number>)) {
      expect(peakMB, `${phase}: live ArrayBuffer MB`).toBeLessThan(32);
    }
    await rm(big);
    await rm(path.join(tmp, 'large-copy.bin'));
  }, 120_000);

  it('runs the README example, pasted into a fresh script as a new user would: it uploads and downloads a file', async () => {
    const readme = await readFile(path.join(sdkDir, 'README.md'), 'utf8');
    const quickStart = readme.slice(readme.indexOf('## Quick start'));
    const pasted = /```js\n([\s\S]*?)```/.exec(quickStart)?.[1];
    expect(pasted).toContain("import { Pail } from '@pail/sdk';");
    // examples/quickstart.mjs is the same script, for running from the repo.
    expect(await readFile(path.join(sdkDir, 'examples/quickstart.mjs'), 'utf8')).toBe(pasted);

    const project = await makeFreshProject();
    await writeFile(path.join(project, 'quickstart.mjs'), pasted!);
    const user = await signUp(server.url);
    const { stdout } = await run(process.execPath, ['quickstart.mjs'], {
      cwd: project,
      env: { ...process.env, PAIL_URL: server.url, PAIL_API_KEY: user.apiKey },
    });
    expect(stdout).toMatch(/^created bucket \d+ \(quickstart-\d+\)$/m);
    expect(stdout).toContain('uploaded hello.txt: 12 bytes');
    expect(stdout).toContain('listed hello.txt (12 bytes, text/plain)');
    expect(stdout).toContain('downloaded 12 bytes: Hello, Pail!');

    // Without a key it says what to do instead of failing with a stack trace.
    const { PAIL_API_KEY: _unused, ...withoutKey } = process.env;
    const failed = (await rejection(run(process.execPath, ['quickstart.mjs'], { cwd: project, env: { ...withoutKey, PAIL_URL: server.url } }))) as {
      stderr: string;
      code: number;
    };
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('Set PAIL_API_KEY');
  }, 60_000);
});
