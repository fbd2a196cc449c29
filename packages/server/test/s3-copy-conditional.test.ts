/**
 * CopyObject, conditional writes and returned checksums (issue 24), driven by
 * the AWS SDK on its default settings (which send a CRC32 trailer with every
 * PutObject and ask for checksums on every GetObject).
 */
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient, type S3Key } from './helpers/s3-client.js';

const CAP_BYTES = 2 * 1024 * 1024;

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(CAP_BYTES) } });
  bob = await signUp(server.url);
});
// Each test's own user, so one test's bytes never count against another's cap.
beforeEach(async () => {
  alice = await signUp(server.url);
});
afterAll(() => server.close());

const s3Of = (user: TestUser, credentials?: S3Key) => sdkClient(server.s3Url!, credentials ?? user);

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode, message: error.message };
    throw error;
  }
  throw new Error('expected the command to fail');
}

let bucketCount = 0;
async function newBucket(user: TestUser = alice): Promise<string> {
  const name = `copy-${++bucketCount}-${Date.now().toString(36)}`;
  await s3Of(user).send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

async function bytesOf(s3: S3Client, bucket: string, key: string): Promise<Buffer> {
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

/** The bucket as the Pail API shows it: its counts. */
async function pailBucket(user: TestUser, name: string): Promise<{ object_count: number; total_bytes: number }> {
  const list = await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } });
  const id = ((await json(list)).data as { id: number; name: string }[]).find((b) => b.name === name)!.id;
  const one = await fetch(`${server.url}/api/v1/buckets/${id}`, { headers: { 'x-api-key': user.apiKey } });
  return (await json(one)).data as { object_count: number; total_bytes: number };
}

const md5 = (bytes: Buffer) => `"${createHash('md5').update(bytes).digest('hex')}"`;

describe('CopyObject', () => {
  it('copies within a bucket and across buckets, small and large, with its own ETag and metadata (COPY)', async () => {
    const s3 = s3Of(alice);
    const [a, b] = [await newBucket(), await newBucket()];
    // Below and above the inline limit (64 KiB): one source in the database, one in the blob store.
    for (const [key, body] of [
      ['small.txt', Buffer.from('hello copy')],
      ['dir/large é.bin', randomBytes(300 * 1024)],
    ] as const) {
      await s3.send(
        new PutObjectCommand({ Bucket: a, Key: key, Body: body, ContentType: 'text/x-custom', Metadata: { color: 'blue' }, CacheControl: 'max-age=60' }),
      );
      const source = `${a}/${encodeURIComponent(key)}`;
      const within = await s3.send(new CopyObjectCommand({ Bucket: a, Key: `copy of ${key}`, CopySource: source }));
      expect(within.CopyObjectResult?.ETag).toBe(md5(body));
      expect(within.CopyObjectResult?.LastModified).toBeInstanceOf(Date);
      const across = await s3.send(new CopyObjectCommand({ Bucket: b, Key: key, CopySource: `/${source}?versionId=null` }));
      expect(across.CopyObjectResult?.ETag).toBe(md5(body));
      for (const [bucket, copy] of [
        [a, `copy of ${key}`],
        [b, key],
      ] as const) {
        expect((await bytesOf(s3, bucket, copy)).equals(body)).toBe(true);
        const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: copy }));
        expect(head).toMatchObject({ ContentType: 'text/x-custom', Metadata: { color: 'blue' }, CacheControl: 'max-age=60', ETag: md5(body) });
      }
    }
  });

  it('REPLACE takes content type and metadata from the request; a copy onto itself needs REPLACE', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc', Body: 'text', ContentType: 'text/plain', Metadata: { old: '1' } }));
    await s3.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: 'doc2',
        CopySource: `${bucket}/doc`,
        MetadataDirective: 'REPLACE',
        ContentType: 'application/json',
        Metadata: { fresh: '2' },
      }),
    );
    expect(await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc2' }))).toMatchObject({ ContentType: 'application/json', Metadata: { fresh: '2' } });
    expect(await s3Error(s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'doc', CopySource: `${bucket}/doc` })))).toMatchObject({
      name: 'InvalidRequest',
      status: 400,
    });
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'doc', CopySource: `${bucket}/doc`, MetadataDirective: 'REPLACE', Metadata: { again: '3' } }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc' }));
    expect(head.Metadata).toEqual({ again: '3' });
    expect((await bytesOf(s3, bucket, 'doc')).toString()).toBe('text');
  });

  it("a missing source is NoSuchKey; another owner's source bucket is NoSuchBucket", async () => {
    const bucket = await newBucket();
    const bobs = await newBucket(bob);
    await s3Of(bob).send(new PutObjectCommand({ Bucket: bobs, Key: 'secret', Body: 'bob' }));
    const s3 = s3Of(alice);
    expect(await s3Error(s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'x', CopySource: `${bucket}/absent` })))).toMatchObject({
      name: 'NoSuchKey',
      status: 404,
    });
    expect(await s3Error(s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'x', CopySource: `${bobs}/secret` })))).toMatchObject({
      name: 'NoSuchBucket',
      status: 404,
    });
    expect(await pailBucket(alice, bucket)).toMatchObject({ object_count: 0, total_bytes: 0 });
  });

  it('x-amz-copy-source-if-* conditions: 412 PreconditionFailed when one does not hold', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'src', Body: 'conditional' }));
    const copy = (extra: Record<string, unknown>) => s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'dst', CopySource: `${bucket}/src`, ...extra }));
    const past = new Date(Date.now() - 3600_000);
    const future = new Date(Date.now() + 3600_000);
    for (const failing of [
      { CopySourceIfMatch: '"0123456789abcdef0123456789abcdef"' },
      { CopySourceIfNoneMatch: put.ETag },
      { CopySourceIfModifiedSince: future },
      { CopySourceIfUnmodifiedSince: past },
    ]) {
      expect(await s3Error(copy(failing))).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    }
    expect(await pailBucket(alice, bucket)).toMatchObject({ object_count: 1 });
    for (const holding of [
      { CopySourceIfMatch: put.ETag },
      { CopySourceIfNoneMatch: '"0123456789abcdef0123456789abcdef"' },
      { CopySourceIfModifiedSince: past },
      { CopySourceIfUnmodifiedSince: future },
      // As S3: a matching if-match outweighs a failing if-unmodified-since.
      { CopySourceIfMatch: put.ETag, CopySourceIfUnmodifiedSince: past },
    ]) {
      expect((await copy(holding)).CopyObjectResult?.ETag).toBe(put.ETag);
    }
  });

  it('a copy is counted in the bucket and the cap; one that would pass the cap stores nothing', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const body = randomBytes(900 * 1024);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'one', Body: body }));
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'two', CopySource: `${bucket}/one` }));
    expect(await pailBucket(alice, bucket)).toEqual(expect.objectContaining({ object_count: 2, total_bytes: 2 * body.length }));
    // A third 900 KiB copy would take alice past her 2 MiB cap.
    const error = await s3Error(s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'three', CopySource: `${bucket}/one` })));
    expect(error).toMatchObject({ name: 'QuotaExceeded', status: 403 });
    expect(error.message).toContain('free plan');
    expect(await pailBucket(alice, bucket)).toEqual(expect.objectContaining({ object_count: 2, total_bytes: 2 * body.length }));
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'three' })))).toMatchObject({ status: 404 });
    // Deleting the source leaves the copy whole (it has a blob of its own).
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'one' }));
    expect((await bytesOf(s3, bucket, 'two')).equals(body)).toBe(true);
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'two' }));
    expect(await pailBucket(alice, bucket)).toEqual(expect.objectContaining({ object_count: 0, total_bytes: 0 }));
  });

  it('needs read on the source as well as write on the target', async () => {
    const bucket = await newBucket();
    await s3Of(alice).send(new PutObjectCommand({ Bucket: bucket, Key: 'src', Body: 'x' }));
    const response = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'write only', permissions: ['write'] }),
    });
    expect(response.status).toBe(201);
    const key = (await json(response)).data as { access_key_id: string; secret_access_key: string };
    const writer = s3Of(alice, { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key });
    expect(await s3Error(writer.send(new CopyObjectCommand({ Bucket: bucket, Key: 'dst', CopySource: `${bucket}/src` })))).toMatchObject({
      name: 'AccessDenied',
      status: 403,
    });
  });
});

describe('conditional writes', () => {
  it('If-None-Match: * creates only a name that is free', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'once', Body: 'first', IfNoneMatch: '*' }));
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'once', Body: 'second', IfNoneMatch: '*' })))).toMatchObject({
      name: 'PreconditionFailed',
      status: 412,
    });
    // Also for a large body, refused before its bytes are kept.
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'once', Body: randomBytes(200 * 1024), IfNoneMatch: '*' })))).toMatchObject({
      status: 412,
    });
    expect((await bytesOf(s3, bucket, 'once')).toString()).toBe('first');
    expect(await pailBucket(alice, bucket)).toEqual(expect.objectContaining({ object_count: 1, total_bytes: 5 }));
  });

  it('If-Match replaces only the version named; a missing key is NoSuchKey', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const first = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc', Body: 'v1' }));
    expect(
      await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc', Body: 'v2', IfMatch: '"0123456789abcdef0123456789abcdef"' }))),
    ).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    const second = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc', Body: 'v2', IfMatch: first.ETag }));
    expect((await bytesOf(s3, bucket, 'doc')).toString()).toBe('v2');
    // The first ETag no longer names the current version.
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc', Body: 'v3', IfMatch: first.ETag })))).toMatchObject({ status: 412 });
    expect(second.ETag).not.toBe(first.ETag);
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'absent', Body: 'x', IfMatch: first.ETag })))).toMatchObject({
      name: 'NoSuchKey',
      status: 404,
    });
  });

  it('concurrent If-None-Match: * uploads of one name: exactly one wins', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'race', Body: `writer ${i}`, IfNoneMatch: '*' }))),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(await pailBucket(alice, bucket)).toEqual(expect.objectContaining({ object_count: 1 }));
  });
});

describe('checksums', () => {
  it('GetObject and HeadObject with ChecksumMode ENABLED return the CRC32 the SDK sent; a copy keeps it', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    for (const [key, body] of [
      ['small', Buffer.from('checksummed')],
      ['large', randomBytes(200 * 1024)],
    ] as const) {
      const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      expect(put.ChecksumCRC32).toMatch(/^[A-Za-z0-9+/]{6}==$/);
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
      expect(got.ChecksumCRC32).toBe(put.ChecksumCRC32);
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
      expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }))).ChecksumCRC32).toBe(put.ChecksumCRC32);
      // Without asking, none; nor for a range, which the whole object's checksum does not describe.
      expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ChecksumCRC32).toBeUndefined();
      const range = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: 'bytes=0-3', ChecksumMode: 'ENABLED' }));
      expect(range.ChecksumCRC32).toBeUndefined();
      expect(Buffer.from(await range.Body!.transformToByteArray()).equals(body.subarray(0, 4))).toBe(true);
      await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: `${key}-copy`, CopySource: `${bucket}/${key}` }));
      expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: `${key}-copy`, ChecksumMode: 'ENABLED' }))).ChecksumCRC32).toBe(put.ChecksumCRC32);
    }
  });

  it('a SHA-256 sent in a header is stored and returned', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const body = Buffer.from('sha body');
    const sha = createHash('sha256').update(body).digest('base64');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'sha', Body: body, ChecksumSHA256: sha }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'sha', ChecksumMode: 'ENABLED' }));
    expect(head.ChecksumSHA256).toBe(sha);
    expect(head.ChecksumCRC32).toBeUndefined();
  });
});
