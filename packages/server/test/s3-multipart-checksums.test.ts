/**
 * Flexible checksums of S3 multipart uploads (issue 24): the algorithm and
 * type CreateMultipartUpload chooses, each part's checksum (sent and verified,
 * or taken by the server), the object's COMPOSITE or FULL_OBJECT checksum at
 * completion, and S3's refusals, through the real AWS SDK and lib-storage.
 */
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
  UploadPartCopyCommand,
  type ChecksumAlgorithm,
  type ChecksumType,
} from '@aws-sdk/client-s3';
import { Crc32, Crc32c } from '@aws-sdk/checksums/crc';
import { Upload } from '@aws-sdk/lib-storage';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

const MiB = 1024 * 1024;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(200 * MiB) } });
});
afterAll(async () => {
  await server?.close();
});

/** A fresh user's client (the SDK's defaults, or checksums only when an operation requires them) and a bucket of theirs. */
async function setUp(checksums: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED' = 'WHEN_SUPPORTED'): Promise<{ s3: S3Client; bucket: string }> {
  const user = await signUp(server.url);
  const s3 = sdkClient(server.s3Url!, user, { requestChecksumCalculation: checksums });
  const bucket = `mpc-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return { s3, bucket };
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

async function digest64(make: () => { update(data: Uint8Array): void; digest(): Promise<Uint8Array> }, ...buffers: Buffer[]): Promise<string> {
  const digest = make();
  for (const buffer of buffers) digest.update(buffer);
  return Buffer.from(await digest.digest()).toString('base64');
}
const crc32 = (...buffers: Buffer[]) => digest64(() => new Crc32(), ...buffers);
const crc32c = (...buffers: Buffer[]) => digest64(() => new Crc32c(), ...buffers);
const sha256 = (buffer: Buffer) => createHash('sha256').update(buffer).digest('base64');
/** S3's COMPOSITE value: the checksum of the parts' binary checksums, then -<parts>. */
const composite = async (parts: string[]) => `${await crc32(...parts.map((part) => Buffer.from(part, 'base64')))}-${parts.length}`;

async function begin(s3: S3Client, bucket: string, key: string, algorithm?: ChecksumAlgorithm, type?: ChecksumType) {
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ChecksumAlgorithm: algorithm, ChecksumType: type }));
  return created;
}

describe('lib-storage with the SDK defaults (CRC32 on every part)', () => {
  it('keeps each part’s CRC32 and gives the object S3’s COMPOSITE CRC32, returned with x-amz-checksum-mode', async () => {
    const { s3, bucket } = await setUp();
    const body = randomBytes(12 * MiB + 123);
    const upload = new Upload({ client: s3, params: { Bucket: bucket, Key: 'default.bin', Body: body }, partSize: 5 * MiB, queueSize: 2 });
    const result = await upload.done();
    const parts = [body.subarray(0, 5 * MiB), body.subarray(5 * MiB, 10 * MiB), body.subarray(10 * MiB)];
    const expected = await composite(await Promise.all(parts.map((part) => crc32(part))));
    expect(result).toMatchObject({ ChecksumCRC32: expected, ChecksumType: 'COMPOSITE' });

    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'default.bin', ChecksumMode: 'ENABLED' }));
    expect(head).toMatchObject({ ChecksumCRC32: expected, ChecksumType: 'COMPOSITE', ContentLength: body.length });
    const plain = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'default.bin' }));
    expect(plain.ChecksumCRC32).toBeUndefined();
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'default.bin', ChecksumMode: 'ENABLED' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
  });
});

describe('a FULL_OBJECT CRC32C upload', () => {
  it('takes the whole object’s CRC32C as the parts stream into it; the SDK verifies it on download; a wrong stated value keeps nothing', async () => {
    const { s3, bucket } = await setUp();
    const created = await begin(s3, bucket, 'full.bin', 'CRC32C', 'FULL_OBJECT');
    expect(created).toMatchObject({ ChecksumAlgorithm: 'CRC32C', ChecksumType: 'FULL_OBJECT' });
    const parts = [randomBytes(5 * MiB), randomBytes(777)];
    const listed: { PartNumber: number; ETag?: string; ChecksumCRC32C?: string }[] = [];
    for (const [index, part] of parts.entries()) {
      const sent = await s3.send(
        new UploadPartCommand({ Bucket: bucket, Key: 'full.bin', UploadId: created.UploadId, PartNumber: index + 1, Body: part, ChecksumAlgorithm: 'CRC32C' }),
      );
      expect(sent.ChecksumCRC32C).toBe(await crc32c(part));
      listed.push({ PartNumber: index + 1, ETag: sent.ETag, ChecksumCRC32C: sent.ChecksumCRC32C });
    }
    const whole = await crc32c(...parts);
    const complete = (stated: string) =>
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: 'full.bin',
          UploadId: created.UploadId,
          MultipartUpload: { Parts: listed },
          ChecksumCRC32C: stated,
          ChecksumType: 'FULL_OBJECT',
        }),
      );
    // A stated checksum of other bytes: BadDigest, no object, and the upload stays to be completed.
    expect(await s3Error(complete(await crc32c(randomBytes(10))))).toMatchObject({ name: 'BadDigest', status: 400 });
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'full.bin' })))).toMatchObject({ status: 404 });

    expect(await complete(whole)).toMatchObject({ ChecksumCRC32C: whole, ChecksumType: 'FULL_OBJECT' });
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'full.bin', ChecksumMode: 'ENABLED' }));
    expect(got).toMatchObject({ ChecksumCRC32C: whole, ChecksumType: 'FULL_OBJECT' });
    // The SDK checks a FULL_OBJECT checksum against the bytes it reads: this read fails if they differ.
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(Buffer.concat(parts))).toBe(true);
  });
});

describe('parts without a checksum of their own', () => {
  it('are given the upload’s checksum by the server, listed by ListParts and required by Complete', async () => {
    const { s3, bucket } = await setUp('WHEN_REQUIRED');
    const created = await begin(s3, bucket, 'bare.bin', 'CRC32');
    expect(created).toMatchObject({ ChecksumAlgorithm: 'CRC32', ChecksumType: 'COMPOSITE' });
    const parts = [randomBytes(5 * MiB), randomBytes(4321)];
    const etags: string[] = [];
    for (const [index, part] of parts.entries()) {
      const sent = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'bare.bin', UploadId: created.UploadId, PartNumber: index + 1, Body: part }));
      expect(sent.ChecksumCRC32).toBe(await crc32(part));
      etags.push(sent.ETag!);
    }
    const listing = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'bare.bin', UploadId: created.UploadId }));
    expect(listing).toMatchObject({ ChecksumAlgorithm: 'CRC32', ChecksumType: 'COMPOSITE' });
    const checksums = await Promise.all(parts.map((part) => crc32(part)));
    expect(listing.Parts?.map((part) => part.ChecksumCRC32)).toEqual(checksums);

    const completing = (withChecksums: boolean) =>
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: 'bare.bin',
          UploadId: created.UploadId,
          MultipartUpload: {
            Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1, ...(withChecksums ? { ChecksumCRC32: checksums[index] } : {}) })),
          },
        }),
      );
    expect(await s3Error(completing(false))).toEqual({
      name: 'InvalidRequest',
      status: 400,
      message:
        'The upload was created using a crc32 checksum. The complete request must include the checksum for each part. It was missing for part 1 in the request.',
    });
    expect(await completing(true)).toMatchObject({ ChecksumCRC32: await composite(checksums), ChecksumType: 'COMPOSITE' });
  });

  it('a part listed with another checksum than it was stored with is InvalidPart', async () => {
    const { s3, bucket } = await setUp();
    const created = await begin(s3, bucket, 'wrong.bin', 'CRC32');
    const part = randomBytes(1000);
    const sent = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'wrong.bin', UploadId: created.UploadId, PartNumber: 1, Body: part }));
    const complete = s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'wrong.bin',
        UploadId: created.UploadId,
        MultipartUpload: { Parts: [{ ETag: sent.ETag, PartNumber: 1, ChecksumCRC32: await crc32(randomBytes(1000)) }] },
      }),
    );
    expect(await s3Error(complete)).toMatchObject({ name: 'InvalidPart', status: 400 });
  });
});

describe('S3’s refusals', () => {
  it('a part sent with another algorithm than its upload’s, and impossible algorithm and type pairs, are 400 InvalidRequest', async () => {
    const { s3, bucket } = await setUp();
    const created = await begin(s3, bucket, 'mixed.bin', 'CRC32');
    const other = s3.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: 'mixed.bin',
        UploadId: created.UploadId,
        PartNumber: 1,
        Body: randomBytes(100),
        ChecksumAlgorithm: 'SHA256',
      }),
    );
    expect(await s3Error(other)).toEqual({
      name: 'InvalidRequest',
      status: 400,
      message: 'Checksum Type mismatch occurred, expected checksum Type: crc32, actual checksum Type: sha256',
    });
    expect((await s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'mixed.bin', UploadId: created.UploadId }))).Parts ?? []).toEqual([]);

    expect(await s3Error(begin(s3, bucket, 'x', 'SHA256', 'FULL_OBJECT'))).toMatchObject({ name: 'InvalidRequest', status: 400 });
    expect(await s3Error(begin(s3, bucket, 'x', 'CRC64NVME', 'COMPOSITE'))).toMatchObject({ name: 'InvalidRequest', status: 400 });
    expect(await s3Error(begin(s3, bucket, 'x', 'MD5'))).toMatchObject({ name: 'InvalidRequest', status: 400 });
  });
});

describe('UploadPartCopy into an upload that keeps SHA-256 checksums', () => {
  it('takes the copied range’s SHA-256 as its checksum', async () => {
    const { s3, bucket } = await setUp();
    const source = randomBytes(6 * MiB);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'source.bin', Body: source }));
    const created = await begin(s3, bucket, 'copied.bin', 'SHA256');
    const copied = await s3.send(
      new UploadPartCopyCommand({
        Bucket: bucket,
        Key: 'copied.bin',
        UploadId: created.UploadId,
        PartNumber: 1,
        CopySource: `${bucket}/source.bin`,
        CopySourceRange: 'bytes=100-5242979',
      }),
    );
    expect(copied.CopyPartResult?.ChecksumSHA256).toBe(sha256(source.subarray(100, 5242980)));
  });
});
