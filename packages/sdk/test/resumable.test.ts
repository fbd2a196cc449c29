/**
 * Resumable uploads through the SDK (tus, resumable.ts) and the buckets'
 * limits, against a real server with a 20 MiB storage cap: pieces with
 * progress, a pause and a resume from the url, refusals as typed errors.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { Pail, PayloadTooLargeError, StorageLimitExceededError, UnsupportedMediaTypeError } from '../src/index.js';

const MiB = 1024 * 1024;

let server: TestServer;
let user: TestUser;
let pail: Pail;
let counter = 0;
const uniqueName = (label: string) => `${label}-${process.pid}-${++counter}`;

beforeAll(async () => {
  server = await startTestServer({ env: { PLAN_FREE_STORAGE_BYTES: String(20 * MiB) } });
  user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
});
afterAll(() => server?.close());

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

/** The server's offset for an upload (tus HEAD). */
async function offsetOf(url: string): Promise<number> {
  const head = await fetch(url, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0', 'x-api-key': user.apiKey } });
  return Number(head.headers.get('upload-offset'));
}

describe('uploadResumable', () => {
  it('uploads a Buffer in pieces, reporting progress, and the file reads back whole', async () => {
    const bucket = await pail.createBucket(uniqueName('tus'));
    const bytes = randomBytes(5 * MiB + 123);
    const progress: number[] = [];
    const result = await pail.uploadResumable(bucket.id, 'pieces.bin', bytes, {
      chunkSize: MiB,
      contentType: 'application/octet-stream',
      onProgress: (sent, total) => {
        expect(total).toBe(bytes.length);
        progress.push(sent);
      },
    });
    expect(result).toMatchObject({ filename: 'pieces.bin', size: bytes.length });
    expect(progress.at(-1)).toBe(bytes.length);
    expect(new Set(progress).size).toBeGreaterThan(3);
    expect(Buffer.compare(Buffer.from(await pail.downloadFile(bucket.id, 'pieces.bin')), bytes)).toBe(0);
    await pail.deleteFile(bucket.id, 'pieces.bin');
  });

  it('pauses on abort and resumes from the url, sending only what is missing', async () => {
    const bucket = await pail.createBucket(uniqueName('pause'));
    const bytes = randomBytes(6 * MiB);
    let url: string | undefined;
    const controller = new AbortController();
    const paused = await rejection(
      pail.uploadResumable(bucket.id, 'paused.bin', bytes, {
        chunkSize: MiB,
        signal: controller.signal,
        onUploadUrl: (u) => (url = u),
        onProgress: (sent) => {
          if (sent >= 2 * MiB) controller.abort();
        },
      }),
    );
    expect((paused as Error).name).toBe('AbortError');
    expect(url).toMatch(/\/api\/v1\/buckets\/\d+\/uploads\/[^/]+$/);
    const kept = await offsetOf(url!);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(bytes.length);
    // Not there until the last byte arrives.
    expect((await pail.listFiles(bucket.id)).files).toEqual([]);

    let firstSent: number | undefined;
    const resumed = await pail.resumeUpload(bucket.id, url!, 'paused.bin', bytes, {
      chunkSize: MiB,
      onProgress: (sent) => (firstSent ??= sent),
    });
    expect(resumed.size).toBe(bytes.length);
    expect(firstSent).toBeGreaterThanOrEqual(kept);
    expect(Buffer.compare(Buffer.from(await pail.downloadFile(bucket.id, 'paused.bin')), bytes)).toBe(0);
    await pail.deleteFile(bucket.id, 'paused.bin');
  });

  it('streams a Node Readable and a Blob of known size', async () => {
    const bucket = await pail.createBucket(uniqueName('stream'));
    const bytes = randomBytes(3 * MiB + 7);
    const pieces = [bytes.subarray(0, MiB), bytes.subarray(MiB, 2 * MiB + 5), bytes.subarray(2 * MiB + 5)];
    await pail.uploadResumable(bucket.id, 'stream.bin', Readable.from(pieces), { size: bytes.length, chunkSize: MiB });
    expect(Buffer.compare(Buffer.from(await pail.downloadFile(bucket.id, 'stream.bin')), bytes)).toBe(0);

    await pail.uploadResumable(bucket.id, 'blob.txt', new Blob(['hello, blob\n'], { type: 'text/plain' }));
    expect(new TextDecoder().decode(await pail.downloadFile(bucket.id, 'blob.txt'))).toBe('hello, blob\n');

    await expect(pail.uploadResumable(bucket.id, 'nosize.bin', Readable.from(pieces))).rejects.toThrow(/size/);
    await pail.deleteBucket(bucket.id);
  });

  it('turns refusals into typed errors: the type the bucket refuses, its size limit, the storage cap', async () => {
    const images = await pail.createBucket(uniqueName('images'), { allowed_types: ['image/*'], max_file_bytes: 2 * MiB });
    // A text file that claims to be a PNG: the bytes say otherwise.
    const fake = await rejection(pail.uploadResumable(images.id, 'fake.png', Buffer.from('not a png at all\n'), { contentType: 'image/png', retryDelays: [] }));
    expect(fake).toBeInstanceOf(UnsupportedMediaTypeError);
    expect(fake).toMatchObject({ status: 415, code: 'UnsupportedMediaType' });

    const big = await rejection(pail.uploadResumable(images.id, 'big.png', randomBytes(3 * MiB), { contentType: 'image/png' }));
    expect(big).toBeInstanceOf(PayloadTooLargeError);
    expect(big).toMatchObject({ status: 413 });

    const bucket = await pail.createBucket(uniqueName('cap'));
    const started = Date.now();
    const over = await rejection(pail.uploadResumable(bucket.id, 'over.bin', randomBytes(21 * MiB)));
    expect(over).toBeInstanceOf(StorageLimitExceededError);
    expect(over).toMatchObject({ status: 409, code: 'StorageLimitExceeded' });
    // A refusal is not retried: the default retries would wait 9 s in all (a loaded host may take a few to refuse).
    expect(Date.now() - started).toBeLessThan(8000);
    expect((await pail.listFiles(bucket.id)).files).toEqual([]);
  });

  it('terminates an unfinished upload', async () => {
    const bucket = await pail.createBucket(uniqueName('end'));
    const controller = new AbortController();
    let url: string | undefined;
    await rejection(
      pail.uploadResumable(bucket.id, 'ended.bin', randomBytes(3 * MiB), {
        chunkSize: MiB,
        signal: controller.signal,
        onUploadUrl: (u) => (url = u),
        onProgress: (sent) => {
          if (sent >= MiB) controller.abort();
        },
      }),
    );
    await pail.terminateUpload(url!);
    const head = await fetch(url!, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0', 'x-api-key': user.apiKey } });
    expect([404, 410]).toContain(head.status);
  });
});

describe('bucket limits', () => {
  it('creates a bucket with limits and changes and clears them with updateBucket', async () => {
    const created = await pail.createBucket(uniqueName('limits'), { max_file_bytes: 1000, allowed_types: ['text/plain'] });
    expect(created).toMatchObject({ max_file_bytes: 1000, allowed_types: ['text/plain'] });
    const plain = await pail.createBucket(uniqueName('plain'));
    expect(plain).toMatchObject({ max_file_bytes: null, allowed_types: null });

    const changed = await pail.updateBucket(created.id, { max_file_bytes: 5000 });
    expect(changed).toMatchObject({ max_file_bytes: 5000, allowed_types: ['text/plain'] });
    const cleared = await pail.updateBucket(created.id, { max_file_bytes: null, allowed_types: null });
    expect(cleared).toMatchObject({ max_file_bytes: null, allowed_types: null });
    expect(await pail.getBucket(created.id)).toEqual(cleared);
  });
});
