/**
 * The S3-compatible API (issue 23, first slice), driven by the real AWS SDK
 * against a real server with its S3 listener on a free port, plus a few
 * hand-made requests for what the SDK would never send.
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { ServiceInputTypes, ServiceOutputTypes } from '@aws-sdk/client-s3';
import type { FinalizeHandler, FinalizeHandlerArguments } from '@smithy/types';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient, type S3Key } from './helpers/s3-client.js';

const CAP_BYTES = 2 * 1024 * 1024;

let server: TestServer;
let s3Url: string;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(CAP_BYTES) } });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3Url = server.s3Url;
  alice = await signUp(server.url);
  bob = await signUp(server.url);
});
afterAll(() => server.close());

function client(credentials: S3Key): S3Client {
  // Urls as an SDK set to WHEN_REQUIRED makes them (no checksum in their query). The default presigned PUT url,
  // with the CRC32 of an empty body in its query: s3-presigned-put.test.ts. Default checksums: s3-payloads.test.ts.
  return sdkClient(s3Url, credentials, { requestChecksumCalculation: 'WHEN_REQUIRED' });
}

const s3Of = (user: TestUser) => client(user);

/** The S3 error a command fails with (its code and status), or a test failure when it succeeds. */
async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode, message: error.message };
    throw error;
  }
  throw new Error('expected the command to fail');
}

const text = async (body: { transformToString(): Promise<string> } | undefined) => (body ? body.transformToString() : '');

let bucketCount = 0;
async function newBucket(user: TestUser = alice): Promise<string> {
  const name = `s3-test-${++bucketCount}-${Date.now().toString(36)}`;
  await s3Of(user).send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/** A key created beside the user's first, through the Client API: its S3 credential. */
async function createKey(user: TestUser, body: Record<string, unknown>) {
  const response = await fetch(`${server.url}/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return (await json(response)).data as { id: number; access_key_id: string; secret_access_key: string };
}

describe('buckets', () => {
  it('CreateBucket, ListBuckets, HeadBucket, GetBucketLocation, DeleteBucket', async () => {
    const s3 = s3Of(alice);
    const name = await newBucket();
    const listed = await s3.send(new ListBucketsCommand({}));
    expect(listed.Buckets?.map((b) => b.Name)).toContain(name);
    expect(listed.Buckets?.find((b) => b.Name === name)?.CreationDate).toBeInstanceOf(Date);
    await s3.send(new HeadBucketCommand({ Bucket: name }));
    expect((await s3.send(new GetBucketLocationCommand({ Bucket: name }))).LocationConstraint).toBe('us-east-1');
    // The same bucket, seen through the Pail API.
    const pail = await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': alice.apiKey } });
    const bucket = ((await json(pail)).data as { name: string; public: boolean }[]).find((b) => b.name === name);
    expect(bucket?.public).toBe(false);
    await s3.send(new DeleteBucketCommand({ Bucket: name }));
    expect(await s3Error(s3.send(new HeadBucketCommand({ Bucket: name })))).toMatchObject({ status: 404 });
    expect(await s3Error(s3.send(new GetBucketLocationCommand({ Bucket: name })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
  });

  it('x-amz-acl public-read makes a public bucket; in us-east-1 a second create of it is 200 and changes nothing', async () => {
    const s3 = s3Of(alice);
    const name = `public-${Date.now().toString(36)}`;
    await s3.send(new CreateBucketCommand({ Bucket: name, ACL: 'public-read' }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'kept.txt', Body: 'kept' }));
    const isPublic = async () => {
      const pail = await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': alice.apiKey } });
      return ((await json(pail)).data as { name: string; public: boolean }[]).find((b) => b.name === name)?.public;
    };
    expect(await isPublic()).toBe(true);
    const again = await s3.send(new CreateBucketCommand({ Bucket: name }));
    expect(again.$metadata.httpStatusCode).toBe(200);
    expect(await isPublic()).toBe(true);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: name }));
    expect(listed.Contents?.map((object) => object.Key)).toEqual(['kept.txt']);
  });

  it('in another region, a second create of an owned bucket is 409 BucketAlreadyOwnedByYou', async () => {
    const elsewhere = await startTestServer({ s3: true, env: { S3_API_REGION: 'eu-west-1' } });
    try {
      const owner = await signUp(elsewhere.url);
      const s3 = sdkClient(elsewhere.s3Url!, owner, { region: 'eu-west-1' });
      await s3.send(new CreateBucketCommand({ Bucket: 'twice' }));
      expect(await s3Error(s3.send(new CreateBucketCommand({ Bucket: 'twice' })))).toMatchObject({ name: 'BucketAlreadyOwnedByYou', status: 409 });
    } finally {
      await elsewhere.close();
    }
  });

  it('DeleteBucket refuses a bucket that holds files: 409 BucketNotEmpty', async () => {
    const s3 = s3Of(alice);
    const name = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'keep.txt', Body: 'x' }));
    expect(await s3Error(s3.send(new DeleteBucketCommand({ Bucket: name })))).toMatchObject({ name: 'BucketNotEmpty', status: 409 });
    await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'keep.txt' }));
  });

  it("another owner's bucket is NoSuchBucket, for every operation", async () => {
    const name = await newBucket(alice);
    await s3Of(alice).send(new PutObjectCommand({ Bucket: name, Key: 'secret.txt', Body: 'mine' }));
    const s3 = s3Of(bob);
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: name, Key: 'secret.txt' })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: name, Key: 'x', Body: 'y' })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
    expect(await s3Error(s3.send(new ListObjectsV2Command({ Bucket: name })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
    expect(await s3Error(s3.send(new DeleteBucketCommand({ Bucket: name })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
    expect((await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name) ?? []).not.toContain(name);
  });
});

describe('objects', () => {
  let bucket: string;
  beforeAll(async () => {
    bucket = await newBucket();
  });

  it('PutObject, GetObject, HeadObject, DeleteObject, with a unicode key', async () => {
    const s3 = s3Of(alice);
    const key = 'café ☕/😀.txt';
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'hello, S3', ContentType: 'text/plain' }));
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect(await text(got.Body)).toBe('hello, S3');
    expect(got.ContentType).toBe('text/plain');
    expect(got.ContentLength).toBe(9);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(head.ContentLength).toBe(9);
    expect(head.ETag).toMatch(/^".+"$/);
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })))).toMatchObject({ status: 404 });
    // Deleting what is not there is not an error in S3.
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  });

  it('a larger object (past the inline size) round-trips, and replacing it keeps the latest bytes', async () => {
    const s3 = s3Of(alice);
    const big = Buffer.alloc(300 * 1024, 7);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'big.bin', Body: big }));
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'big.bin' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(big)).toBe(true);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'big.bin', Body: 'small now' }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'big.bin' }))).Body)).toBe('small now');
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'big.bin' }));
  });

  it('folder keys: an empty marker ending in / and files under it', async () => {
    const s3 = s3Of(alice);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'folder/', Body: '' }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'folder/inner/file.txt', Body: 'deep' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'folder/' }))).ContentLength).toBe(0);
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'folder/inner/file.txt' }))).Body)).toBe('deep');
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'folder/', Delimiter: '/' }));
    expect(listed.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['folder/inner/']);
  });

  it('Range GET answers 206 with the bytes asked for', async () => {
    const s3 = s3Of(alice);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'range.txt', Body: '0123456789' }));
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'range.txt', Range: 'bytes=2-5' }));
    expect(got.$metadata.httpStatusCode).toBe(206);
    expect(got.ContentRange).toBe('bytes 2-5/10');
    expect(await text(got.Body)).toBe('2345');
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'range.txt', Range: 'bytes=50-60' })))).toMatchObject({
      name: 'InvalidRange',
      status: 416,
    });
  });

  it('over the storage cap: 403 QuotaExceeded naming the plan and its cap, and nothing is stored', async () => {
    const carol = await signUp(server.url);
    const s3 = s3Of(carol);
    const name = await newBucket(carol);
    const error = await s3Error(s3.send(new PutObjectCommand({ Bucket: name, Key: 'huge.bin', Body: Buffer.alloc(CAP_BYTES + 1) })));
    expect(error).toMatchObject({ name: 'QuotaExceeded', status: 403 });
    expect(error.message).toBe('Storage limit exceeded: the free plan allows 2 MiB');
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: name, Key: 'huge.bin' })))).toMatchObject({ status: 404 });
  });

  it('a sub-resource such as ?tagging is routed to its own operation and leaves the object bytes unchanged', async () => {
    const s3 = s3Of(alice);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'tagged.txt', Body: 'original' }));
    await s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'tagged.txt', Tagging: { TagSet: [{ Key: 'a', Value: 'b' }] } }));
    const read = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'tagged.txt' }));
    expect(await text(read.Body)).toBe('original');
    expect(read.TagCount).toBe(1);
  });
});

describe('ListObjectsV2', () => {
  let bucket: string;
  const keys: string[] = [];
  beforeAll(async () => {
    bucket = await newBucket();
    for (let i = 0; i < 100; i++) keys.push(`many/a/${String(i).padStart(3, '0')}`, `many/b/${String(i).padStart(3, '0')}`);
    for (let i = 0; i < 50; i++) keys.push(`many/c-${String(i).padStart(3, '0')}`);
    keys.sort();
    const s3 = s3Of(alice);
    // A few at a time: a 2-core machine, and a fair budget.
    for (let i = 0; i < keys.length; i += 10) {
      await Promise.all(keys.slice(i, i + 10).map((Key) => s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: Key }))));
    }
  });

  it('pages through every key with continuation tokens, in order', async () => {
    const s3 = s3Of(alice);
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 100, ContinuationToken: token }));
      pages++;
      seen.push(...(page.Contents ?? []).map((c) => c.Key ?? ''));
      expect(page.KeyCount).toBe(page.Contents?.length ?? 0);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual(keys);
  });

  it('Delimiter folds folders into CommonPrefixes; Prefix narrows; StartAfter starts after a key', async () => {
    const s3 = s3Of(alice);
    const folded = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'many/', Delimiter: '/' }));
    expect(folded.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['many/a/', 'many/b/']);
    expect(folded.Contents?.map((c) => c.Key)).toEqual(keys.filter((k) => k.startsWith('many/c-')));
    const first = folded.Contents?.[0];
    expect(first?.Size).toBe('many/c-000'.length);
    expect(first?.LastModified).toBeInstanceOf(Date);
    const after = await s3.send(new ListObjectsV2Command({ Bucket: bucket, StartAfter: 'many/b/049', MaxKeys: 2 }));
    expect(after.Contents?.map((c) => c.Key)).toEqual(['many/b/050', 'many/b/051']);
    expect(after.IsTruncated).toBe(true);
    const none = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'nothing/' }));
    expect(none.KeyCount).toBe(0);
    expect(none.Contents).toBeUndefined();
  });
});

describe('presigned urls', () => {
  it('a presigned GET and a presigned PUT work without any other credential; an altered one does not', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: 'signed/ü.txt' }), { expiresIn: 300 });
    const put = await fetch(putUrl, { method: 'PUT', body: 'sent by url' });
    expect(put.status).toBe(200);
    const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: 'signed/ü.txt' }), { expiresIn: 300 });
    const got = await fetch(getUrl);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('sent by url');
    const altered = await fetch(getUrl.replace('signed/', 'other/'));
    expect(altered.status).toBe(403);
    expect(await altered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
  });

  it('X-Amz-Expires beyond 7 days is refused, and an expired url is AccessDenied', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const url = new URL(await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: 'a.txt' }), { expiresIn: 60 }));
    url.searchParams.set('X-Amz-Expires', '604801');
    const tooLong = await fetch(url);
    expect(tooLong.status).toBe(403);
    expect(await tooLong.text()).toContain('<Code>AuthorizationQueryParametersError</Code>');
    const past = new Date(Date.now() - 3600_000);
    const expired = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: 'a.txt' }), { expiresIn: 60, signingDate: past });
    const response = await fetch(expired);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('Request has expired');
  });
});

describe('credentials and signatures', () => {
  it('a wrong secret is SignatureDoesNotMatch; an unknown access key id is InvalidAccessKeyId', async () => {
    const wrongSecret = client({ accessKeyId: alice.accessKeyId, secretAccessKey: 'x'.repeat(40) });
    expect(await s3Error(wrongSecret.send(new ListBucketsCommand({})))).toMatchObject({ name: 'SignatureDoesNotMatch', status: 403 });
    const unknown = client({ accessKeyId: 'AAAAAAAAAAAAAAAAAAAA', secretAccessKey: alice.secretAccessKey });
    expect(await s3Error(unknown.send(new ListBucketsCommand({})))).toMatchObject({ name: 'InvalidAccessKeyId', status: 403 });
  });

  it("a revoked key's credential opens nothing: InvalidAccessKeyId", async () => {
    const key = await createKey(alice, { name: 'short-lived' });
    const s3 = client({ accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key });
    await s3.send(new ListBucketsCommand({}));
    const revoked = await fetch(`${server.url}/api/keys/${key.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${alice.token}` } });
    expect(revoked.status).toBe(200);
    expect(await s3Error(s3.send(new ListBucketsCommand({})))).toMatchObject({ name: 'InvalidAccessKeyId', status: 403 });
  });

  it('a presigned url served before is checked again on each use: its key revoked, it opens nothing; under another Host, its signature fails', async () => {
    const key = await createKey(alice, { name: 'presigner' });
    const s3 = client({ accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key });
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'again.txt', Body: 'twice' }));
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: 'again.txt' }), { expiresIn: 300 });
    for (let use = 0; use < 2; use++) {
      const got = await fetch(url);
      expect(got.status).toBe(200);
      expect(await got.text()).toBe('twice');
    }
    // The signed Host differs (localhost for 127.0.0.1): the same url is another request.
    const otherHost = await fetch(url.replace('127.0.0.1', 'localhost'));
    expect(otherHost.status).toBe(403);
    expect(await otherHost.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    const revoked = await fetch(`${server.url}/api/keys/${key.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${alice.token}` } });
    expect(revoked.status).toBe(200);
    const after = await fetch(url);
    expect(after.status).toBe(403);
    expect(await after.text()).toContain('<Code>InvalidAccessKeyId</Code>');
  });

  it("the key's limits apply: a read-only key reads but cannot write, create or delete", async () => {
    const bucket = await newBucket();
    await s3Of(alice).send(new PutObjectCommand({ Bucket: bucket, Key: 'r.txt', Body: 'read me' }));
    const key = await createKey(alice, { name: 'reader', permissions: ['read'] });
    const s3 = client({ accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key });
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'r.txt' }))).Body)).toBe('read me');
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'w.txt', Body: 'no' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await s3Error(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'r.txt' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await s3Error(s3.send(new CreateBucketCommand({ Bucket: `nope-${Date.now().toString(36)}` })))).toMatchObject({ name: 'AccessDenied' });
  });

  it('a signed payload whose bytes do not match x-amz-content-sha256 is refused and stores nothing', async () => {
    const bucket = await newBucket();
    const s3 = s3Of(alice);
    // Swap the body after the SDK has signed it (same length, other bytes).
    s3.middlewareStack.addRelativeTo(
      (next: FinalizeHandler<ServiceInputTypes, ServiceOutputTypes>) => async (args: FinalizeHandlerArguments<ServiceInputTypes>) => {
        const request = args.request as { body?: unknown };
        if (request.body === 'sent by sdk') request.body = 'sent by sdX';
        return next(args);
      },
      { relation: 'after', toMiddleware: 'httpSigningMiddleware', name: 'tamperBody' },
    );
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'tampered.txt', Body: 'sent by sdk' })))).toMatchObject({
      name: 'XAmzContentSHA256Mismatch',
      status: 400,
    });
    expect(await s3Error(s3Of(alice).send(new HeadObjectCommand({ Bucket: bucket, Key: 'tampered.txt' })))).toMatchObject({ status: 404 });
  });

  it('a SigV2 signature is checked too (s3-sigv2.test.ts has the rest): a wrong one is 403 SignatureDoesNotMatch', async () => {
    const response = await fetch(`${s3Url}/`, { headers: { authorization: `AWS ${alice.accessKeyId}:c2lnbmF0dXJl`, date: new Date().toUTCString() } });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
  });

  it('a malformed Authorization header, or none, is a 403 S3 XML error without a namespace', async () => {
    const malformed = await fetch(`${s3Url}/`, { headers: { authorization: 'AWS4-HMAC-SHA256 nonsense' } });
    expect(malformed.status).toBe(403);
    expect(malformed.headers.get('content-type')).toContain('application/xml');
    const body = await malformed.text();
    expect(body).toMatch(
      /<Error><Code>AuthorizationHeaderMalformed<\/Code><Message>[^<]+<\/Message><Resource>\/<\/Resource><RequestId>[^<]+<\/RequestId><\/Error>/,
    );
    expect(body).not.toContain('xmlns');
    const anonymous = await fetch(`${s3Url}/some-bucket/some-key`);
    expect(anonymous.status).toBe(403);
    expect(await anonymous.text()).toContain('<Code>AccessDenied</Code>');
  });

  it('an X-Amz-Date more than 15 minutes off is RequestTimeTooSkewed', async () => {
    const skewed = new Date(Date.now() - 20 * 60_000)
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    const day = skewed.slice(0, 8);
    const response = await fetch(`${s3Url}/`, {
      headers: {
        'x-amz-date': skewed,
        'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
        authorization: `AWS4-HMAC-SHA256 Credential=${alice.accessKeyId}/${day}/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
      },
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('<Code>RequestTimeTooSkewed</Code>');
  });
});

describe('rate limit', () => {
  it("header-signed requests spend the owner's Developer API budget, presigned urls the reader's SIGNED_URL_RATE_LIMIT; over either is 503 SlowDown with Retry-After", async () => {
    const limited = await startTestServer({ s3: true, env: { PLAN_FREE_RATE_LIMIT: '2', SIGNED_URL_RATE_LIMIT: '2' } });
    try {
      const user = await signUp(limited.url);
      const s3 = sdkClient(limited.s3Url ?? '', user);
      const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'missing', Key: 'a.txt' }), { expiresIn: 60 });
      expect((await fetch(url)).status).toBe(404);
      expect((await fetch(url)).status).toBe(404);
      const over = await fetch(url);
      expect(over.status).toBe(503);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await over.text()).toContain('<Code>SlowDown</Code>');
      // The owner's own budget was not spent by the url's readers.
      expect((await s3.send(new ListBucketsCommand({}))).Buckets).toEqual([]);
      expect((await s3.send(new ListBucketsCommand({}))).Buckets).toEqual([]);
      expect(await s3Error(s3.send(new ListBucketsCommand({})))).toMatchObject({ name: 'SlowDown', status: 503 });
    } finally {
      await limited.close();
    }
  });
});

describe('ETags as S3 tools expect', () => {
  it('an object written through S3 has the MD5 of its bytes as its ETag, on PUT, HEAD, GET and in listings', async () => {
    const bucket = await newBucket();
    const s3 = s3Of(alice);
    const bytes = Buffer.from('the md5 of these bytes is the etag');
    const md5 = `"${createHash('md5').update(bytes).digest('hex')}"`;
    expect((await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'm/etag.txt', Body: bytes }))).ETag).toBe(md5);
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'm/etag.txt' }))).ETag).toBe(md5);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'm/etag.txt' }));
    expect(got.ETag).toBe(md5);
    await got.Body?.transformToString();
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents?.map((o) => o.ETag)).toEqual([md5]);
    // A large one (stored in the blob store, not inline) too.
    const large = randomBytes(300_000);
    const largeMd5 = `"${createHash('md5').update(large).digest('hex')}"`;
    expect((await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'm/large.bin', Body: large }))).ETag).toBe(largeMd5);
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'm/large.bin' }))).ETag).toBe(largeMd5);
  });
});
