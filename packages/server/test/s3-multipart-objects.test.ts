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
  GetObjectCommand,
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
