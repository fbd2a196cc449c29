/**
 * S3 multipart uploads (issue 24) through the real AWS SDK: the commands one
 * by one, lib-storage's Upload streaming a large body, aborting, listing,
 * S3's refusals, and the storage cap counting kept parts.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

const MiB = 1024 * 1024;
const CAPPED_BYTES = 12 * MiB;

let server: TestServer;
let capped: TestServer;

beforeAll(async () => {
  [server, capped] = await Promise.all([
    startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(200 * MiB) } }),
    startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(CAPPED_BYTES) } }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), capped?.close()]);
});

function s3Of(on: TestServer, user: TestUser): S3Client {
  return sdkClient(on.s3Url!, user);
}

/** A fresh user with a bucket of their own on `on`. */
async function setUp(on: TestServer = server): Promise<{ s3: S3Client; bucket: string }> {
  const user = await signUp(on.url);
  const s3 = s3Of(on, user);
  const bucket = `mp-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return { s3, bucket };
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

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const multipartEtag = (parts: Buffer[]) =>
  `"${createHash('md5')
    .update(Buffer.concat(parts.map((part) => Buffer.from(md5(part), 'hex'))))
    .digest('hex')}-${parts.length}"`;

async function bytesOf(s3: S3Client, bucket: string, key: string): Promise<Buffer> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await object.Body!.transformToByteArray());
}

async function begin(s3: S3Client, bucket: string, key: string): Promise<string> {
  return (await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))).UploadId!;
}

const putPart = async (s3: S3Client, bucket: string, key: string, uploadId: string, partNumber: number, body: Buffer) =>
  (await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body }))).ETag!;

describe('S3 multipart uploads', () => {
  it('Create, three 5 MiB parts and a small last one, Complete: the object has every byte and the multipart ETag', async () => {
    const { s3, bucket } = await setUp();
    const key = 'big/café ☕.bin';
    const created = await s3.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: 'application/x-test', Metadata: { colour: 'blue' } }),
    );
    const uploadId = created.UploadId!;
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(1234)];
    const etags: string[] = [];
    for (const [index, part] of parts.entries()) {
      const etag = await putPart(s3, bucket, key, uploadId, index + 1, part);
      expect(etag).toBe(`"${md5(part)}"`);
      etags.push(etag);
    }
    const listed = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
    expect(listed.Parts?.map((part) => [part.PartNumber, part.Size, part.ETag])).toEqual(parts.map((part, index) => [index + 1, part.length, etags[index]]));
    const completed = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
      }),
    );
    expect(completed.ETag).toBe(multipartEtag(parts));
    expect(completed.ETag).toMatch(/-4"$/);
    expect((await bytesOf(s3, bucket, key)).equals(Buffer.concat(parts))).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(head).toMatchObject({ ETag: completed.ETag, ContentType: 'application/x-test', Metadata: { colour: 'blue' }, ContentLength: 15 * MiB + 1234 });
    // The upload is over: its id names nothing any more.
    expect(await s3Error(s3.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId })))).toEqual({ name: 'NoSuchUpload', status: 404 });
  });

  it('three parts end with -3, and a part uploaded again replaces the first', async () => {
    const { s3, bucket } = await setUp();
    const uploadId = await begin(s3, bucket, 'three');
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(100)];
    await putPart(s3, bucket, 'three', uploadId, 2, randomBytes(5 * MiB));
    const etags = [];
    for (const [index, part] of parts.entries()) etags.push(await putPart(s3, bucket, 'three', uploadId, index + 1, part));
    const listed = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'three', UploadId: uploadId }));
    expect(listed.Parts?.map((part) => part.ETag)).toEqual(etags);
    const completed = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'three',
        UploadId: uploadId,
        MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
      }),
    );
    expect(completed.ETag).toBe(multipartEtag(parts));
    expect(completed.ETag).toMatch(/-3"$/);
    expect((await bytesOf(s3, bucket, 'three')).equals(Buffer.concat(parts))).toBe(true);
  });

  it("lib-storage's Upload streams a ~20 MB body in parts", async () => {
    const { s3, bucket } = await setUp();
    const size = 20 * 1000 * 1000;
    const hash = createHash('md5');
    let sent = 0;
    const body = Readable.from(
      (function* () {
        while (sent < size) {
          const chunk = randomBytes(Math.min(MiB, size - sent));
          sent += chunk.length;
          hash.update(chunk);
          yield chunk;
        }
      })(),
    );
    const upload = new Upload({ client: s3, params: { Bucket: bucket, Key: 'streamed.bin', Body: body }, partSize: 5 * MiB, queueSize: 3 });
    const result = await upload.done();
    expect(result.ETag).toMatch(/-4"$/);
    const stored = await bytesOf(s3, bucket, 'streamed.bin');
    expect(stored.length).toBe(size);
    expect(md5(stored)).toBe(hash.digest('hex'));
  });

  it('ListMultipartUploads shows an unfinished upload; Abort removes it and its parts', async () => {
    const { s3, bucket } = await setUp();
    const uploadId = await begin(s3, bucket, 'docs/unfinished.txt');
    await putPart(s3, bucket, 'docs/unfinished.txt', uploadId, 1, randomBytes(1000));
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    expect(uploads.Uploads?.map((upload) => [upload.Key, upload.UploadId])).toEqual([['docs/unfinished.txt', uploadId]]);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'other/' }))).Uploads ?? []).toEqual([]);
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'docs/unfinished.txt', UploadId: uploadId }));
    expect(await s3Error(s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'docs/unfinished.txt', UploadId: uploadId })))).toEqual({
      name: 'NoSuchUpload',
      status: 404,
    });
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).toEqual([]);
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).KeyCount).toBe(0);
    expect(await s3Error(s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'docs/unfinished.txt', UploadId: uploadId })))).toEqual({
      name: 'NoSuchUpload',
      status: 404,
    });
  });

  it('ListMultipartUploads with a delimiter rolls keys up into common prefixes, each once, paged with key-marker', async () => {
    const { s3, bucket } = await setUp();
    const keys = ['a.txt', 'docs/1.txt', 'docs/2.txt', 'docs/2.txt', 'docs/sub/3.txt', 'm.txt', 'photos/x.jpg', 'z.txt'];
    for (const key of keys) await begin(s3, bucket, key);
    const all = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Delimiter: '/' }));
    expect(all.Uploads?.map((upload) => upload.Key)).toEqual(['a.txt', 'm.txt', 'z.txt']);
    expect(all.CommonPrefixes?.map((entry) => entry.Prefix)).toEqual(['docs/', 'photos/']);
    expect(all).toMatchObject({ Delimiter: '/', IsTruncated: false });

    const inDocs = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Delimiter: '/', Prefix: 'docs/' }));
    expect(inDocs.Uploads?.map((upload) => upload.Key)).toEqual(['docs/1.txt', 'docs/2.txt', 'docs/2.txt']);
    expect(inDocs.CommonPrefixes?.map((entry) => entry.Prefix)).toEqual(['docs/sub/']);

    // Two entries a page (uploads and prefixes alike), every entry exactly once.
    const seen: string[] = [];
    let marker: { KeyMarker?: string; UploadIdMarker?: string } = {};
    for (let pages = 0; pages < 10; pages++) {
      const page = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Delimiter: '/', MaxUploads: 2, ...marker }));
      seen.push(...(page.Uploads ?? []).map((upload) => upload.Key!), ...(page.CommonPrefixes ?? []).map((entry) => entry.Prefix!));
      if (!page.IsTruncated) break;
      marker = { KeyMarker: page.NextKeyMarker, UploadIdMarker: page.NextUploadIdMarker };
    }
    expect(seen.sort()).toEqual(['a.txt', 'docs/', 'm.txt', 'photos/', 'z.txt']);
  });

  it('refuses a too-small part that is not the last (EntityTooSmall), a wrong ETag (InvalidPart), parts out of order (InvalidPartOrder), part 10001', async () => {
    const { s3, bucket } = await setUp();
    const uploadId = await begin(s3, bucket, 'refused');
    const first = await putPart(s3, bucket, 'refused', uploadId, 1, randomBytes(1024));
    const second = await putPart(s3, bucket, 'refused', uploadId, 2, randomBytes(1024));
    const complete = (Parts: { ETag: string; PartNumber: number }[]) =>
      s3Error(s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'refused', UploadId: uploadId, MultipartUpload: { Parts } })));
    expect(
      await complete([
        { ETag: first, PartNumber: 1 },
        { ETag: second, PartNumber: 2 },
      ]),
    ).toEqual({ name: 'EntityTooSmall', status: 400 });
    expect(await complete([{ ETag: `"${'0'.repeat(32)}"`, PartNumber: 1 }])).toEqual({ name: 'InvalidPart', status: 400 });
    expect(await complete([{ ETag: first, PartNumber: 3 }])).toEqual({ name: 'InvalidPart', status: 400 });
    expect(
      await complete([
        { ETag: second, PartNumber: 2 },
        { ETag: first, PartNumber: 1 },
      ]),
    ).toEqual({ name: 'InvalidPartOrder', status: 400 });
    expect(await s3Error(s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'refused', UploadId: uploadId, PartNumber: 10001, Body: 'x' })))).toMatchObject({
      status: 400,
    });
    expect(await s3Error(s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'refused', UploadId: 'no-such-upload', PartNumber: 1, Body: 'x' })))).toEqual({
      name: 'NoSuchUpload',
      status: 404,
    });
    // Nothing was stored; the upload is still there, and a single (last) small part completes it.
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).KeyCount).toBe(0);
    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'refused', UploadId: uploadId, MultipartUpload: { Parts: [{ ETag: first, PartNumber: 1 }] } }),
    );
    expect((await bytesOf(s3, bucket, 'refused')).length).toBe(1024);
  });
});

describe('S3 multipart uploads and the storage cap', () => {
  it('a part that would pass the cap is refused (QuotaExceeded) and, aborted, nothing is kept', async () => {
    const { s3, bucket } = await setUp(capped);
    const uploadId = await begin(s3, bucket, 'too-big');
    await putPart(s3, bucket, 'too-big', uploadId, 1, randomBytes(5 * MiB));
    await putPart(s3, bucket, 'too-big', uploadId, 2, randomBytes(5 * MiB));
    // Kept parts count: 10 MiB of a 12 MiB cap is held, so neither another part nor a plain upload of 5 MiB fits.
    expect(await s3Error(putPart(s3, bucket, 'too-big', uploadId, 3, randomBytes(5 * MiB)))).toEqual({ name: 'QuotaExceeded', status: 403 });
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'other', Body: randomBytes(5 * MiB) })))).toEqual({
      name: 'QuotaExceeded',
      status: 403,
    });
    const listed = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'too-big', UploadId: uploadId }));
    expect(listed.Parts?.map((part) => part.PartNumber)).toEqual([1, 2]);
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'too-big', UploadId: uploadId }));
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).KeyCount).toBe(0);
    // The aborted parts gave their bytes back: 11 MiB fits again.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'fits', Body: randomBytes(11 * MiB) }));
  });

  it('a multipart upload that fits the cap completes: its kept parts are not counted twice', async () => {
    const { s3, bucket } = await setUp(capped);
    const uploadId = await begin(s3, bucket, 'fits');
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(MiB)];
    const etags = [];
    for (const [index, part] of parts.entries()) etags.push(await putPart(s3, bucket, 'fits', uploadId, index + 1, part));
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'fits',
        UploadId: uploadId,
        MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
      }),
    );
    expect((await bytesOf(s3, bucket, 'fits')).equals(Buffer.concat(parts))).toBe(true);
    // 11 MiB stored and no parts kept: 1 MiB is left, and 2 MiB more does not fit.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'small', Body: randomBytes(MiB - 1024) }));
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'more', Body: randomBytes(2 * MiB) })))).toEqual({
      name: 'QuotaExceeded',
      status: 403,
    });
  });
});
