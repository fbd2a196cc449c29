/**
 * S3 multipart uploads under Pail's rules (spec/s3-api.md): unfinished
 * uploads expire with their parts, many uploads racing into one cap never
 * pass it together, a completion racing an abort or another completion of
 * the same upload ends it once, and CompleteMultipartUpload honours
 * If-None-Match: *.
 * (Crash safety: s3-multipart-crash.test.ts.)
 */
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  AbortMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeUpload } from '../src/domain/multipart-complete.js';
import { expireMultipartUploads } from '../src/domain/multipart-expiry.js';
import type { StoragePorts } from '../src/domain/ports.js';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

const MiB = 1024 * 1024;

let expiring: TestServer;
let racing: TestServer;

beforeAll(async () => {
  [expiring, racing] = await Promise.all([
    startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(12 * MiB), MULTIPART_EXPIRY_SECONDS: '1' } }),
    // Room for every racing upload to be in flight at once: the cap alone decides who is refused.
    startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(30 * MiB), MAX_UPLOADS_PER_USER: '100' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([expiring?.close(), racing?.close()]);
});

function s3Of(on: TestServer, user: TestUser): S3Client {
  return sdkClient(on.s3Url!, user);
}

async function setUp(on: TestServer): Promise<{ user: TestUser; s3: S3Client; bucket: string }> {
  const user = await signUp(on.url);
  const s3 = s3Of(on, user);
  const bucket = `mps-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return { user, s3, bucket };
}

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode };
    throw error;
  }
  throw new Error('expected the command to fail');
}

const begin = async (s3: S3Client, bucket: string, key: string) => (await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))).UploadId!;

const putPart = async (s3: S3Client, bucket: string, key: string, uploadId: string, partNumber: number, body: Buffer) =>
  (await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body }))).ETag!;

const complete = (s3: S3Client, bucket: string, key: string, uploadId: string, etags: string[], extra: { IfNoneMatch?: string } = {}) =>
  s3.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: key,
      UploadId: uploadId,
      MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
      ...extra,
    }),
  );

async function bytesOf(s3: S3Client, bucket: string, key: string): Promise<Buffer> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await object.Body!.transformToByteArray());
}

/** Blob keys under the bucket's storage name, in whichever blob store the server uses. */
async function blobsOf(on: TestServer, bucket: string): Promise<string[]> {
  const { storage_name } = await on.app.pail.db.selectFrom('buckets').select('storage_name').where('name', '=', bucket).executeTakeFirstOrThrow();
  const keys: string[] = [];
  for await (const blob of on.app.pail.storage.blobs.list(`${storage_name}/`)) keys.push(blob.key);
  return keys;
}

describe('unfinished multipart uploads expire', () => {
  it('an upload older than MULTIPART_EXPIRY_SECONDS goes with its parts and their bytes; a younger one stays', async () => {
    const { s3, bucket } = await setUp(expiring);
    const old = await begin(s3, bucket, 'old.bin');
    await putPart(s3, bucket, 'old.bin', old, 1, randomBytes(5 * MiB));
    await putPart(s3, bucket, 'old.bin', old, 2, randomBytes(5 * MiB));
    // 10 MiB of a 12 MiB cap is kept: 5 MiB more does not fit.
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'later', Body: randomBytes(5 * MiB) })))).toEqual({
      name: 'QuotaExceeded',
      status: 403,
    });
    expect(await blobsOf(expiring, bucket)).toHaveLength(2);

    expiring.clock.advance(1100);
    const young = await begin(s3, bucket, 'young.bin');
    const youngPart = await putPart(s3, bucket, 'young.bin', young, 1, randomBytes(1000));
    // Two sweeps at once, as two instances would run them: the upload is removed once.
    const removed = await Promise.all([
      expireMultipartUploads(expiring.app.pail.storage, expiring.config.multipartExpirySeconds),
      expireMultipartUploads(expiring.app.pail.storage, expiring.config.multipartExpirySeconds),
    ]);
    expect(removed[0] + removed[1]).toBe(1);

    const uploads = (await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
    expect(uploads.map((upload) => [upload.Key, upload.UploadId])).toEqual([['young.bin', young]]);
    expect(await s3Error(s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'old.bin', UploadId: old })))).toEqual({ name: 'NoSuchUpload', status: 404 });
    // The expired parts' blobs are gone (the young upload's one part remains) and their bytes count no longer.
    expect(await blobsOf(expiring, bucket)).toHaveLength(1);
    const later = randomBytes(5 * MiB);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'later', Body: later }));
    expect((await bytesOf(s3, bucket, 'later')).equals(later)).toBe(true);
    // The young upload still completes.
    await complete(s3, bucket, 'young.bin', young, [youngPart]);
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents?.map((o) => [o.Key, o.Size])).toEqual([
      ['later', 5 * MiB],
      ['young.bin', 1000],
    ]);
  });
});

describe('multipart uploads racing into one cap', () => {
  it('20 uploads of 2 × 5 MiB at once never pass a 30 MiB cap together; every refusal is QuotaExceeded; usage equals the listing', async () => {
    const { user, s3, bucket } = await setUp(racing);
    const cap = 30 * MiB;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, async (_, index) => {
        const key = `race-${index}.bin`;
        const uploadId = await begin(s3, bucket, key);
        const etags = [];
        for (const partNumber of [1, 2]) etags.push(await putPart(s3, bucket, key, uploadId, partNumber, randomBytes(5 * MiB)));
        await complete(s3, bucket, key, uploadId, etags);
        return key;
      }),
    );
    const refusals = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => outcome.reason as unknown);
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(S3ServiceException);
      const error = refusal as S3ServiceException;
      expect({ name: error.name, status: error.$metadata.httpStatusCode }).toEqual({ name: 'QuotaExceeded', status: 403 });
    }
    expect(refusals.length).toBeGreaterThan(0);
    // (How many complete depends on the interleaving: uploads that each keep one part can leave none room for a second.)
    const completed = outcomes.filter((outcome) => outcome.status === 'fulfilled').length;

    const objects = (await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? [];
    expect(objects).toHaveLength(completed);
    const stored = objects.reduce((total, object) => total + object.Size!, 0);
    expect(stored).toBe(completed * 10 * MiB);
    let kept = 0;
    for (const upload of (await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []) {
      const parts = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: upload.Key!, UploadId: upload.UploadId! }));
      kept += (parts.Parts ?? []).reduce((total, part) => total + part.Size!, 0);
    }
    expect(stored + kept).toBeLessThanOrEqual(cap);

    const me = (await json(await fetch(`${racing.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
    expect(me.storage_used_bytes).toBe(stored);
    const buckets = (await json(await fetch(`${racing.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } }))).data as {
      name: string;
      object_count: number;
      total_bytes: number;
    }[];
    expect(buckets.find((b) => b.name === bucket)).toMatchObject({ object_count: completed, total_bytes: stored });
  });
});

describe('a completion racing an abort and a second completion', () => {
  it('exactly one of the three succeeds; the object is whole or absent, the upload and its part blobs gone, the counts exact', async () => {
    const { user, s3, bucket } = await setUp(racing);
    const sizes = new Map<string, number>();
    for (const round of [0, 1, 2, 3]) {
      const key = `contested-${round}.bin`;
      const parts = [randomBytes(5 * MiB), randomBytes(1000 + round)];
      const uploadId = await begin(s3, bucket, key);
      const etags = [await putPart(s3, bucket, key, uploadId, 1, parts[0]!), await putPart(s3, bucket, key, uploadId, 2, parts[1]!)];
      const abort = () => s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
      // The abort goes first, last or between, so it lands before, during and after the completions' reads.
      const contenders = [() => complete(s3, bucket, key, uploadId, etags), () => complete(s3, bucket, key, uploadId, etags)];
      contenders.splice(round % 3, 0, abort);
      const outcomes = await Promise.allSettled(contenders.map((run) => run()));
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') continue;
        const error = outcome.reason as S3ServiceException;
        expect({ name: error.name, status: error.$metadata.httpStatusCode }).toEqual({ name: 'NoSuchUpload', status: 404 });
      }
      const aborted = outcomes[round % 3]!.status === 'fulfilled';
      if (aborted) {
        expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })))).toEqual({ name: 'NoSuchKey', status: 404 });
      } else {
        expect((await bytesOf(s3, bucket, key)).equals(Buffer.concat(parts))).toBe(true);
        sizes.set(key, 5 * MiB + 1000 + round);
      }
    }
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).toEqual([]);
    const stored = [...sizes.values()].reduce((total, size) => total + size, 0);
    const me = (await json(await fetch(`${racing.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
    expect(me.storage_used_bytes).toBe(stored);
    const buckets = (await json(await fetch(`${racing.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } }))).data as {
      name: string;
      object_count: number;
      total_bytes: number;
    }[];
    expect(buckets.find((b) => b.name === bucket)).toMatchObject({ object_count: sizes.size, total_bytes: stored });
    // One blob per object: no part blob was left behind, none of an object's was taken.
    expect(await blobsOf(racing, bucket)).toHaveLength(sizes.size);
  });
});

describe('an abort between a completion reading its parts and its commit', () => {
  it('ends the upload: the completion is refused with NoSuchUpload, and nothing is kept or counted', async () => {
    const { user, s3, bucket } = await setUp(racing);
    const uploadId = await begin(s3, bucket, 'late.bin');
    const etags = [
      await putPart(s3, bucket, 'late.bin', uploadId, 1, randomBytes(5 * MiB)),
      await putPart(s3, bucket, 'late.bin', uploadId, 2, randomBytes(10)),
    ];
    const storage = racing.app.pail.storage;
    // The completion's commit waits at a gate, with every byte read and stored, while the abort runs.
    let arrived!: () => void;
    let open!: () => void;
    const atGate = new Promise<void>((resolve) => (arrived = resolve));
    const gate = new Promise<void>((resolve) => (open = resolve));
    const ports: StoragePorts = {
      ...storage,
      writes: { ...storage.writes, commitUpload: async (input) => (arrived(), await gate, storage.writes.commitUpload(input)) },
    };
    const db = racing.app.pail.db;
    const owner = await db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    const identity = await db.selectFrom('buckets').select(['id', 'owner_id', 'storage_name']).where('name', '=', bucket).executeTakeFirstOrThrow();
    const completing = completeUpload(ports, {
      owner,
      bucket: identity,
      uploadId,
      filename: 'late.bin',
      parts: etags.map((etag, index) => ({ etag, partNumber: index + 1 })),
    }).then(
      () => 'completed',
      (error: Error) => error.message,
    );
    await atGate;
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'late.bin', UploadId: uploadId }));
    open();
    expect(await completing).toMatch(/^The specified multipart upload does not exist/);
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'late.bin' })))).toEqual({ name: 'NoSuchKey', status: 404 });
    const me = (await json(await fetch(`${racing.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
    expect(me.storage_used_bytes).toBe(0);
    expect(await blobsOf(racing, bucket)).toEqual([]);
  });
});

describe('CompleteMultipartUpload with If-None-Match: *', () => {
  it('is refused with 412 when the key exists (the upload stays), and completes when it does not', async () => {
    const { s3, bucket } = await setUp(racing);
    const existing = randomBytes(2000);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'taken', Body: existing }));
    const part = randomBytes(3000);
    const uploadId = await begin(s3, bucket, 'taken');
    const etag = await putPart(s3, bucket, 'taken', uploadId, 1, part);
    expect(await s3Error(complete(s3, bucket, 'taken', uploadId, [etag], { IfNoneMatch: '*' }))).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect((await bytesOf(s3, bucket, 'taken')).equals(existing)).toBe(true);
    const parts = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'taken', UploadId: uploadId }));
    expect(parts.Parts?.map((p) => p.PartNumber)).toEqual([1]);

    const fresh = await begin(s3, bucket, 'fresh');
    const freshEtag = await putPart(s3, bucket, 'fresh', fresh, 1, part);
    await complete(s3, bucket, 'fresh', fresh, [freshEtag], { IfNoneMatch: '*' });
    expect((await bytesOf(s3, bucket, 'fresh')).equals(part)).toBe(true);
    // Without the condition the refused upload still completes, replacing the object.
    await complete(s3, bucket, 'taken', uploadId, [etag]);
    expect((await bytesOf(s3, bucket, 'taken')).equals(part)).toBe(true);
  });
});
