/**
 * What a completed multipart upload leaves behind (issue 35), through the
 * real AWS SDK: a repeated CompleteMultipartUpload (an SDK's retry) answered
 * as the first while its object is current, reads of one part by
 * `partNumber`, and GetObjectAttributes.
 */
import {
  ChecksumAlgorithm,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ObjectAttributes,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectEvent } from '../src/domain/object-events.js';
import { json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const MiB = 1024 * 1024;

let server: TestServer;
let stopListening: () => void;
const heard: ObjectEvent[] = [];

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(100 * MiB) } });
  stopListening = server.app.pail.storage.events.listen((event) => {
    heard.push(event);
  });
});
afterAll(async () => {
  stopListening?.();
  await server?.close();
});

interface Owner {
  user: TestUser;
  s3: S3Client;
  bucket: string;
}

async function setUp(): Promise<Owner> {
  const user = await signUp(server.url);
  // As s3-api.test.ts: no default checksums, so what the tests send is what is stored.
  const s3 = sdkClient(server.s3Url!, user, { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  const bucket = `mpo-${randomBytes(4).toString('hex')}`;
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

const usedBytes = async (user: TestUser): Promise<number> =>
  (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;

const md5 = (data: Buffer) => createHash('md5').update(data).digest();
const multipartEtag = (parts: Buffer[]) =>
  `"${createHash('md5')
    .update(Buffer.concat(parts.map(md5)))
    .digest('hex')}-${parts.length}"`;

/** Uploads the parts (numbered from 1 unless given) and returns the upload id and the Complete request's part list. */
async function uploadParts(o: Owner, key: string, parts: Buffer[], options: { numbers?: number[]; checksum?: ChecksumAlgorithm } = {}) {
  const { UploadId } = await o.s3.send(new CreateMultipartUploadCommand({ Bucket: o.bucket, Key: key, ChecksumAlgorithm: options.checksum }));
  const listed = [];
  for (const [index, body] of parts.entries()) {
    const PartNumber = options.numbers?.[index] ?? index + 1;
    const sent = await o.s3.send(new UploadPartCommand({ Bucket: o.bucket, Key: key, UploadId, PartNumber, Body: body, ChecksumAlgorithm: options.checksum }));
    listed.push({ PartNumber, ETag: sent.ETag!, ...(sent.ChecksumSHA256 !== undefined ? { ChecksumSHA256: sent.ChecksumSHA256 } : {}) });
  }
  return { uploadId: UploadId!, listed };
}

const complete = (o: Owner, key: string, uploadId: string, listed: { PartNumber: number; ETag: string }[]) =>
  o.s3.send(new CompleteMultipartUploadCommand({ Bucket: o.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: listed } }));

describe('CompleteMultipartUpload repeated', () => {
  it('answers 200 with the same ETag, Location, Bucket and Key; nothing is written, counted or announced again', async () => {
    const o = await setUp();
    const parts = [randomBytes(5 * MiB), randomBytes(1000)];
    const { uploadId, listed } = await uploadParts(o, 'dir/again é.bin', parts);
    const first = await complete(o, 'dir/again é.bin', uploadId, listed);
    expect(first.ETag).toBe(multipartEtag(parts));
    const used = await usedBytes(o.user);
    expect(used).toBe(5 * MiB + 1000);
    heard.splice(0);

    const again = await complete(o, 'dir/again é.bin', uploadId, listed);
    expect(again.$metadata.httpStatusCode).toBe(200);
    expect({ ETag: again.ETag, Location: again.Location, Bucket: again.Bucket, Key: again.Key }).toEqual({
      ETag: first.ETag,
      Location: first.Location,
      Bucket: o.bucket,
      Key: 'dir/again é.bin',
    });
    expect(heard).toEqual([]);
    expect(await usedBytes(o.user)).toBe(used);
    const got = await o.s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: 'dir/again é.bin' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(Buffer.concat(parts))).toBe(true);
  });

  it('repeats the checksum the first completion answered with', async () => {
    const o = await setUp();
    const { uploadId, listed } = await uploadParts(o, 'summed', [randomBytes(5 * MiB), randomBytes(10)], { checksum: ChecksumAlgorithm.SHA256 });
    const first = await complete(o, 'summed', uploadId, listed);
    expect(first.ChecksumSHA256).toMatch(/-2$/);
    const again = await complete(o, 'summed', uploadId, listed);
    expect({ ETag: again.ETag, ChecksumSHA256: again.ChecksumSHA256, ChecksumType: again.ChecksumType }).toEqual({
      ETag: first.ETag,
      ChecksumSHA256: first.ChecksumSHA256,
      ChecksumType: 'COMPOSITE',
    });
  });

  it('is NoSuchUpload once the object it made is replaced or deleted, and for another key', async () => {
    const o = await setUp();
    const replaced = await uploadParts(o, 'replaced', [randomBytes(100)]);
    await complete(o, 'replaced', replaced.uploadId, replaced.listed);
    expect(await s3Error(complete(o, 'other-key', replaced.uploadId, replaced.listed))).toEqual({ name: 'NoSuchUpload', status: 404 });
    await o.s3.send(new PutObjectCommand({ Bucket: o.bucket, Key: 'replaced', Body: 'newer' }));
    expect(await s3Error(complete(o, 'replaced', replaced.uploadId, replaced.listed))).toEqual({ name: 'NoSuchUpload', status: 404 });

    const deleted = await uploadParts(o, 'deleted', [randomBytes(100)]);
    await complete(o, 'deleted', deleted.uploadId, deleted.listed);
    await o.s3.send(new DeleteObjectCommand({ Bucket: o.bucket, Key: 'deleted' }));
    expect(await s3Error(complete(o, 'deleted', deleted.uploadId, deleted.listed))).toEqual({ name: 'NoSuchUpload', status: 404 });
  });

  it('two completions at once: both answer 200 with one ETag, the object is counted and announced once', async () => {
    const o = await setUp();
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(7)];
    const { uploadId, listed } = await uploadParts(o, 'raced', parts);
    heard.splice(0);
    const answers = await Promise.all([complete(o, 'raced', uploadId, listed), complete(o, 'raced', uploadId, listed)]);
    expect(answers.map((answer) => answer.ETag)).toEqual([multipartEtag(parts), multipartEtag(parts)]);
    expect(heard.filter((event) => event.type === 'object-created').length).toBe(1);
    expect(await usedBytes(o.user)).toBe(10 * MiB + 7);
  });
});

describe('GetObject and HeadObject with partNumber', () => {
  it('a multipart object: each part is 206 with its Content-Range, the ETag and x-amz-mp-parts-count; a part it lacks is 416 InvalidPartNumber', async () => {
    const o = await setUp();
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB + 3), randomBytes(777)];
    // Part numbers as a client may choose them: a completion lists some, not always from 1 in steps of 1.
    const { uploadId, listed } = await uploadParts(o, 'parts.bin', parts, { numbers: [1, 2, 5] });
    const completed = await complete(o, 'parts.bin', uploadId, listed);
    const whole = Buffer.concat(parts);
    let start = 0;
    for (const [index, part] of parts.entries()) {
      const PartNumber = listed[index]!.PartNumber;
      const got = await o.s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: 'parts.bin', PartNumber }));
      expect({ status: got.$metadata.httpStatusCode, range: got.ContentRange, length: got.ContentLength, etag: got.ETag, count: got.PartsCount }).toEqual({
        status: 206,
        range: `bytes ${start}-${start + part.length - 1}/${whole.length}`,
        length: part.length,
        etag: completed.ETag,
        count: 3,
      });
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(part)).toBe(true);
      const head = await o.s3.send(new HeadObjectCommand({ Bucket: o.bucket, Key: 'parts.bin', PartNumber }));
      expect({ status: head.$metadata.httpStatusCode, range: head.ContentRange, length: head.ContentLength, count: head.PartsCount }).toEqual({
        status: 206,
        range: `bytes ${start}-${start + part.length - 1}/${whole.length}`,
        length: part.length,
        count: 3,
      });
      start += part.length;
    }
    for (const PartNumber of [3, 6]) {
      expect(await s3Error(o.s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: 'parts.bin', PartNumber })))).toEqual({
        name: 'InvalidPartNumber',
        status: 416,
      });
    }
    expect(await s3Error(o.s3.send(new HeadObjectCommand({ Bucket: o.bucket, Key: 'parts.bin', PartNumber: 4 })))).toMatchObject({ status: 416 });
    // A part and a Range together are 400.
    expect(await s3Error(o.s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: 'parts.bin', PartNumber: 1, Range: 'bytes=0-9' })))).toEqual({
      name: 'InvalidRequest',
      status: 400,
    });
  });

  it('an object not made by parts is one part: part 1 is all of it (206, no parts count), part 2 is 416', async () => {
    const o = await setUp();
    await o.s3.send(new PutObjectCommand({ Bucket: o.bucket, Key: 'single.txt', Body: 'body' }));
    const got = await o.s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: 'single.txt', PartNumber: 1 }));
    expect({ status: got.$metadata.httpStatusCode, range: got.ContentRange, count: got.PartsCount }).toEqual({
      status: 206,
      range: 'bytes 0-3/4',
      count: undefined,
    });
    expect(await got.Body!.transformToString()).toBe('body');
    expect(await s3Error(o.s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: 'single.txt', PartNumber: 2 })))).toEqual({
      name: 'InvalidPartNumber',
      status: 416,
    });
    expect(await s3Error(o.s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: 'single.txt', PartNumber: 0 })))).toEqual({
      name: 'InvalidArgument',
      status: 400,
    });
    await o.s3.send(new PutObjectCommand({ Bucket: o.bucket, Key: 'empty.txt', Body: '' }));
    const empty = await o.s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: 'empty.txt', PartNumber: 1 }));
    expect({ status: empty.$metadata.httpStatusCode, length: empty.ContentLength }).toEqual({ status: 200, length: 0 });
  });
});

describe('GetObjectAttributes', () => {
  const ALL = [ObjectAttributes.ETAG, ObjectAttributes.CHECKSUM, ObjectAttributes.OBJECT_PARTS, ObjectAttributes.STORAGE_CLASS, ObjectAttributes.OBJECT_SIZE];

  it('a plain object: its ETag without quotes, size, STANDARD and Last-Modified; its checksum when it has one; no ObjectParts', async () => {
    const o = await setUp();
    const put = await o.s3.send(new PutObjectCommand({ Bucket: o.bucket, Key: 'plain.txt', Body: 'some bytes', ChecksumAlgorithm: ChecksumAlgorithm.SHA256 }));
    const head = await o.s3.send(new HeadObjectCommand({ Bucket: o.bucket, Key: 'plain.txt' }));
    const attributes = await o.s3.send(new GetObjectAttributesCommand({ Bucket: o.bucket, Key: 'plain.txt', ObjectAttributes: ALL }));
    expect(attributes.$metadata.httpStatusCode).toBe(200);
    expect({ ...attributes, $metadata: undefined }).toEqual({
      $metadata: undefined,
      ETag: put.ETag!.replace(/"/g, ''),
      Checksum: { ChecksumSHA256: put.ChecksumSHA256, ChecksumType: 'FULL_OBJECT' },
      StorageClass: 'STANDARD',
      ObjectSize: 10,
      LastModified: head.LastModified,
    });
    // Only what is asked for.
    const some = await o.s3.send(new GetObjectAttributesCommand({ Bucket: o.bucket, Key: 'plain.txt', ObjectAttributes: [ObjectAttributes.OBJECT_SIZE] }));
    expect({ size: some.ObjectSize, etag: some.ETag, checksum: some.Checksum, storageClass: some.StorageClass }).toEqual({
      size: 10,
      etag: undefined,
      checksum: undefined,
      storageClass: undefined,
    });
    expect(await s3Error(o.s3.send(new GetObjectAttributesCommand({ Bucket: o.bucket, Key: 'missing', ObjectAttributes: ALL })))).toEqual({
      name: 'NoSuchKey',
      status: 404,
    });
    const raw = await fetch(`${server.s3Url}/${o.bucket}/plain.txt?attributes`);
    expect(raw.status).toBe(403);
  });

  it('a multipart object: PartsCount and each part (number, size, checksum), paged by MaxParts and PartNumberMarker', async () => {
    const o = await setUp();
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(99)];
    const { uploadId, listed } = await uploadParts(o, 'multi.bin', parts, { checksum: ChecksumAlgorithm.SHA256 });
    const completed = await complete(o, 'multi.bin', uploadId, listed);
    const partChecksums = listed.map((part) => (part as { ChecksumSHA256?: string }).ChecksumSHA256);
    expect(partChecksums.every((value) => typeof value === 'string')).toBe(true);

    const attributes = await o.s3.send(new GetObjectAttributesCommand({ Bucket: o.bucket, Key: 'multi.bin', ObjectAttributes: ALL }));
    expect(attributes.ETag).toBe(completed.ETag!.replace(/"/g, ''));
    expect(attributes.Checksum).toEqual({ ChecksumSHA256: completed.ChecksumSHA256, ChecksumType: 'COMPOSITE' });
    expect(attributes.ObjectSize).toBe(15 * MiB + 99);
    expect(attributes.ObjectParts).toEqual({
      TotalPartsCount: 4,
      PartNumberMarker: '0',
      MaxParts: 1000,
      IsTruncated: false,
      Parts: parts.map((part, index) => ({ PartNumber: index + 1, Size: part.length, ChecksumSHA256: partChecksums[index] })),
    });

    const page = await o.s3.send(
      new GetObjectAttributesCommand({
        Bucket: o.bucket,
        Key: 'multi.bin',
        ObjectAttributes: [ObjectAttributes.OBJECT_PARTS],
        MaxParts: 2,
        PartNumberMarker: '1',
      }),
    );
    expect(page.ObjectParts).toEqual({
      TotalPartsCount: 4,
      PartNumberMarker: '1',
      NextPartNumberMarker: '3',
      MaxParts: 2,
      IsTruncated: true,
      Parts: [2, 3].map((PartNumber) => ({ PartNumber, Size: 5 * MiB, ChecksumSHA256: partChecksums[PartNumber - 1] })),
    });
  });
});
