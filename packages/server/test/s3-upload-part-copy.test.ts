/**
 * UploadPartCopy through the AWS SDK: parts copied from ranges of other
 * objects assemble into an object with every byte and the multipart ETag; the
 * range, the source and its conditions are checked as S3 checks them; a copied
 * part counts against the cap like an uploaded one. The AWS CLI's copy of a
 * large object in parts is in s3-tools-large.test.ts, with the other tools.
 */
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
  UploadPartCopyCommand,
  type UploadPartCopyCommandInput,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient, type S3Key } from './helpers/s3-client.js';

const MiB = 1024 * 1024;
const CAPPED_BYTES = 10 * MiB;

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

const s3Of = (on: TestServer, user: TestUser, credentials?: S3Key) => sdkClient(on.s3Url!, credentials ?? user);

const bucketName = () => `upc-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;

/** A fresh user with two buckets of their own on `on`. */
async function setUp(on: TestServer = server): Promise<{ user: TestUser; s3: S3Client; a: string; b: string }> {
  const user = await signUp(on.url);
  const s3 = s3Of(on, user);
  const [a, b] = [bucketName(), bucketName()];
  for (const bucket of [a, b]) await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return { user, s3, a, b };
}

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode, message: error.message };
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

const begin = async (s3: S3Client, bucket: string, key: string) => (await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))).UploadId!;

const copyPart = (s3: S3Client, input: Omit<UploadPartCopyCommandInput, 'PartNumber'> & { PartNumber?: number }) =>
  s3.send(new UploadPartCopyCommand({ PartNumber: 1, ...input }));

const partNumbers = async (s3: S3Client, bucket: string, key: string, uploadId: string) =>
  ((await s3.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))).Parts ?? []).map((part) => part.PartNumber);

/** What the Pail API says the user stores, and each bucket's counts. */
async function usage(on: TestServer, user: TestUser): Promise<{ used: number; buckets: Record<string, { object_count: number; total_bytes: number }> }> {
  const me = (await json(await fetch(`${on.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
  const list = (await json(await fetch(`${on.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } }))).data as {
    name: string;
    object_count: number;
    total_bytes: number;
  }[];
  return {
    used: me.storage_used_bytes as number,
    buckets: Object.fromEntries(list.map((b) => [b.name, { object_count: b.object_count, total_bytes: b.total_bytes }])),
  };
}

describe('UploadPartCopy', () => {
  it('two ranges of an 11 MiB source and an uploaded last part complete into the right bytes, ETag -3; usage is exact', async () => {
    const { user, s3, a, b } = await setUp();
    const source = randomBytes(11 * MiB);
    await s3.send(new PutObjectCommand({ Bucket: a, Key: 'dir/source é.bin', Body: source }));
    const uploadId = await begin(s3, b, 'assembled');
    const copySource = `${a}/${encodeURIComponent('dir/source é.bin')}`;
    const first = source.subarray(0, 5 * MiB);
    const second = source.subarray(5 * MiB);
    const last = randomBytes(1234);
    const copied1 = await copyPart(s3, { Bucket: b, Key: 'assembled', UploadId: uploadId, CopySource: copySource, CopySourceRange: `bytes=0-${5 * MiB - 1}` });
    const copied2 = await copyPart(s3, {
      Bucket: b,
      Key: 'assembled',
      UploadId: uploadId,
      PartNumber: 2,
      CopySource: copySource,
      CopySourceRange: `bytes=${5 * MiB}-${source.length - 1}`,
    });
    expect(copied1.CopyPartResult?.ETag).toBe(`"${md5(first)}"`);
    expect(copied2.CopyPartResult?.ETag).toBe(`"${md5(second)}"`);
    expect(copied1.CopyPartResult?.LastModified).toBeInstanceOf(Date);
    const uploaded = await s3.send(new UploadPartCommand({ Bucket: b, Key: 'assembled', UploadId: uploadId, PartNumber: 3, Body: last }));
    const listed = await s3.send(new ListPartsCommand({ Bucket: b, Key: 'assembled', UploadId: uploadId }));
    expect(listed.Parts?.map((part) => [part.PartNumber, part.Size])).toEqual([
      [1, first.length],
      [2, second.length],
      [3, last.length],
    ]);
    // Kept parts are held against the cap, not counted as stored until the upload completes.
    expect((await usage(server, user)).used).toBe(source.length);

    const etags = [copied1.CopyPartResult!.ETag!, copied2.CopyPartResult!.ETag!, uploaded.ETag!];
    const completed = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: b,
        Key: 'assembled',
        UploadId: uploadId,
        MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
      }),
    );
    expect(completed.ETag).toBe(multipartEtag([first, second, last]));
    expect(completed.ETag).toMatch(/-3"$/);
    const stored = await bytesOf(s3, b, 'assembled');
    expect(stored.length).toBe(source.length + last.length);
    expect(md5(stored)).toBe(md5(Buffer.concat([source, last])));
    // The source is untouched, and every byte is counted once.
    expect(md5(await bytesOf(s3, a, 'dir/source é.bin'))).toBe(md5(source));
    expect(await usage(server, user)).toEqual({
      used: 2 * source.length + last.length,
      buckets: { [a]: { object_count: 1, total_bytes: source.length }, [b]: { object_count: 1, total_bytes: source.length + last.length } },
    });
  });

  it('without a range copies the whole source (a small one too); a part copied again replaces the first', async () => {
    const { user, s3, a } = await setUp();
    const small = Buffer.from('a small source, kept inline');
    const other = randomBytes(300 * 1024);
    await s3.send(new PutObjectCommand({ Bucket: a, Key: 'small', Body: small }));
    await s3.send(new PutObjectCommand({ Bucket: a, Key: 'other', Body: other }));
    const uploadId = await begin(s3, a, 'whole');
    await copyPart(s3, { Bucket: a, Key: 'whole', UploadId: uploadId, CopySource: `${a}/other` });
    const copied = await copyPart(s3, { Bucket: a, Key: 'whole', UploadId: uploadId, CopySource: `/${a}/small?versionId=null` });
    expect(copied.CopyPartResult?.ETag).toBe(`"${md5(small)}"`);
    expect(await partNumbers(s3, a, 'whole', uploadId)).toEqual([1]);
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: a,
        Key: 'whole',
        UploadId: uploadId,
        MultipartUpload: { Parts: [{ ETag: copied.CopyPartResult!.ETag!, PartNumber: 1 }] },
      }),
    );
    expect((await bytesOf(s3, a, 'whole')).equals(small)).toBe(true);
    expect((await usage(server, user)).used).toBe(2 * small.length + other.length);
  });

  it('a range not of the form bytes=first-last or backwards is 400 InvalidArgument, one past the end 416 InvalidRange, and no part is kept', async () => {
    const { s3, a } = await setUp();
    await s3.send(new PutObjectCommand({ Bucket: a, Key: 'src', Body: randomBytes(1000) }));
    const uploadId = await begin(s3, a, 'dst');
    for (const range of ['bytes=10-5', 'bytes=abc', '0-10', 'bytes=0-', 'bytes=-10', 'bytes=0-1,3-4']) {
      const error = await s3Error(copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${a}/src`, CopySourceRange: range }));
      expect(error, range).toMatchObject({ name: 'InvalidArgument', status: 400 });
      expect(error.message, range).toMatch(/must be of the form bytes=first-last/);
    }
    const pastTheEnd = await s3Error(copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${a}/src`, CopySourceRange: 'bytes=0-1000' }));
    expect(pastTheEnd).toMatchObject({ name: 'InvalidRange', status: 416 });
    expect(pastTheEnd.message).toMatch(/not valid for source object of size: 1000/);
    expect(await partNumbers(s3, a, 'dst', uploadId)).toEqual([]);
    const fits = await copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${a}/src`, CopySourceRange: 'bytes=999-999' });
    expect(fits.CopyPartResult?.ETag).toMatch(/^"[0-9a-f]{32}"$/);
  });

  it("a missing source is NoSuchKey, another owner's bucket NoSuchBucket (as CopyObject), an unknown upload NoSuchUpload", async () => {
    const { s3, a } = await setUp();
    const bob = await setUp();
    await bob.s3.send(new PutObjectCommand({ Bucket: bob.a, Key: 'secret', Body: 'bob' }));
    await s3.send(new PutObjectCommand({ Bucket: a, Key: 'src', Body: 'mine' }));
    const uploadId = await begin(s3, a, 'dst');
    expect(await s3Error(copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${a}/absent` }))).toMatchObject({
      name: 'NoSuchKey',
      status: 404,
    });
    expect(await s3Error(copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${bob.a}/secret` }))).toMatchObject({
      name: 'NoSuchBucket',
      status: 404,
    });
    expect(await s3Error(copyPart(s3, { Bucket: a, Key: 'dst', UploadId: 'no-such-upload', CopySource: `${a}/src` }))).toMatchObject({
      name: 'NoSuchUpload',
      status: 404,
    });
    expect(await s3Error(copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, PartNumber: 10_001, CopySource: `${a}/src` }))).toMatchObject({
      name: 'InvalidArgument',
      status: 400,
    });
    expect(await partNumbers(s3, a, 'dst', uploadId)).toEqual([]);
  });

  it('x-amz-copy-source-if-*: 412 PreconditionFailed when one does not hold, the part copied when they do', async () => {
    const { s3, a } = await setUp();
    const put = await s3.send(new PutObjectCommand({ Bucket: a, Key: 'src', Body: 'conditional' }));
    const uploadId = await begin(s3, a, 'dst');
    const copy = (extra: Partial<UploadPartCopyCommandInput>) => copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${a}/src`, ...extra });
    const past = new Date(Date.now() - 3600_000);
    const future = new Date(Date.now() + 3600_000);
    for (const failing of [
      { CopySourceIfMatch: '"0123456789abcdef0123456789abcdef"' },
      { CopySourceIfNoneMatch: put.ETag! },
      { CopySourceIfModifiedSince: future },
      { CopySourceIfUnmodifiedSince: past },
    ]) {
      expect(await s3Error(copy(failing))).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    }
    expect(await partNumbers(s3, a, 'dst', uploadId)).toEqual([]);
    expect((await copy({ CopySourceIfMatch: put.ETag!, CopySourceIfModifiedSince: past })).CopyPartResult?.ETag).toBe(put.ETag);
  });

  it('needs read on the source as well as write on the target', async () => {
    const { user, s3, a } = await setUp();
    await s3.send(new PutObjectCommand({ Bucket: a, Key: 'src', Body: 'x' }));
    const uploadId = await begin(s3, a, 'dst');
    const response = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'write only', permissions: ['write'] }),
    });
    expect(response.status).toBe(201);
    const key = (await json(response)).data as { access_key_id: string; secret_access_key: string };
    const writer = s3Of(server, user, { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key });
    expect(await s3Error(copyPart(writer, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${a}/src` }))).toMatchObject({
      name: 'AccessDenied',
      status: 403,
    });
  });

  it('a part copy that would pass the cap is QuotaExceeded and keeps nothing; a smaller range fits', async () => {
    const { user, s3, a } = await setUp(capped);
    const source = randomBytes(6 * MiB);
    await s3.send(new PutObjectCommand({ Bucket: a, Key: 'src', Body: source }));
    const uploadId = await begin(s3, a, 'dst');
    // 6 MiB stored and 6 MiB more would pass the 10 MiB cap.
    const error = await s3Error(copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${a}/src` }));
    expect(error).toMatchObject({ name: 'QuotaExceeded', status: 403 });
    expect(error.message).toContain('free plan');
    expect(await partNumbers(s3, a, 'dst', uploadId)).toEqual([]);
    expect((await usage(capped, user)).used).toBe(source.length);
    const copied = await copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${a}/src`, CopySourceRange: `bytes=0-${2 * MiB - 1}` });
    expect(copied.CopyPartResult?.ETag).toBe(`"${md5(source.subarray(0, 2 * MiB))}"`);
    // The kept 2 MiB part counts: 3 MiB more would pass the cap, a 2 MiB part replacing it would not.
    const more = { Bucket: a, Key: 'dst', UploadId: uploadId, PartNumber: 2, CopySource: `${a}/src`, CopySourceRange: `bytes=0-${3 * MiB - 1}` };
    expect(await s3Error(copyPart(s3, more))).toMatchObject({ name: 'QuotaExceeded', status: 403 });
    await copyPart(s3, { Bucket: a, Key: 'dst', UploadId: uploadId, CopySource: `${a}/src`, CopySourceRange: `bytes=${MiB}-${3 * MiB - 1}` });
    expect(await partNumbers(s3, a, 'dst', uploadId)).toEqual([1]);
    expect((await usage(capped, user)).used).toBe(source.length);
  });
});
