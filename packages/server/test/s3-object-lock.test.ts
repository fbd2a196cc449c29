/**
 * Object lock through the S3 door, as the AWS SDK sees it: buckets made with
 * lock, their default retention, a version's retention and legal hold, the
 * x-amz-object-lock-* headers on writes and reads, what a lock refuses (with
 * S3's codes and Pail's "until when"), GOVERNANCE bypass by a key allowed to,
 * and the lock letting go once the server's clock passes its date.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectLegalHoldCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  PutObjectLockConfigurationCommand,
  PutObjectRetentionCommand,
  S3ServiceException,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const DAY = 86_400_000;
let server: TestServer;
let alice: TestUser;
let s3: S3Client;
/** Alice's key with the bypass-governance permission. */
let bypasser: S3Client;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  alice = await signUp(server.url);
  s3 = sdkClient(server.s3Url, alice);
  const made = await fetch(`${server.url}/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'admin', permissions: ['read', 'write', 'delete', 'manage', 'bypass-governance'] }),
  });
  expect(made.status).toBe(201);
  const key = (await json(made)).data;
  expect(key.permissions).toContain('bypass-governance');
  bypasser = sdkClient(server.s3Url, { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key });
});
afterAll(() => server.close());

async function lockedBucket(): Promise<string> {
  const name = `lock-${Date.now().toString(36)}-${counter++}`;
  await s3.send(new CreateBucketCommand({ Bucket: name, ObjectLockEnabledForBucket: true }));
  return name;
}

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode, message: error.message };
    throw error;
  }
  throw new Error('expected the request to fail');
}

const inDays = (days: number): Date => new Date(server.clock.now() + days * DAY);
const versionOf = async (bucket: string, key: string): Promise<string> => {
  const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  expect(head.VersionId).toMatch(/^[0-9a-f]{32}$/);
  return head.VersionId!;
};

describe('buckets with object lock', () => {
  it('answers the lock configuration of a bucket made with lock, keeps a default retention, and 404s one made without', async () => {
    const bucket = await lockedBucket();
    expect((await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }))).ObjectLockConfiguration).toEqual({ ObjectLockEnabled: 'Enabled' });
    const conf = { ObjectLockEnabled: 'Enabled' as const, Rule: { DefaultRetention: { Mode: 'GOVERNANCE' as const, Days: 1 } } };
    await s3.send(new PutObjectLockConfigurationCommand({ Bucket: bucket, ObjectLockConfiguration: conf }));
    expect((await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }))).ObjectLockConfiguration).toEqual(conf);

    const plain = `plain-${counter++}-${Date.now().toString(36)}`;
    await s3.send(new CreateBucketCommand({ Bucket: plain }));
    expect(await s3Error(s3.send(new GetObjectLockConfigurationCommand({ Bucket: plain })))).toMatchObject({
      name: 'ObjectLockConfigurationNotFoundError',
      status: 404,
    });
    expect(await s3Error(s3.send(new PutObjectLockConfigurationCommand({ Bucket: plain, ObjectLockConfiguration: conf })))).toMatchObject({
      name: 'InvalidBucketState',
      status: 409,
    });
    await s3.send(new PutObjectCommand({ Bucket: plain, Key: 'a.txt', Body: 'a' }));
    expect(
      await s3Error(s3.send(new PutObjectRetentionCommand({ Bucket: plain, Key: 'a.txt', Retention: { Mode: 'GOVERNANCE', RetainUntilDate: inDays(1) } }))),
    ).toMatchObject({ name: 'InvalidRequest', status: 400 });
    expect(
      await s3Error(
        s3.send(new PutObjectCommand({ Bucket: plain, Key: 'b.txt', Body: 'b', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: inDays(1) })),
      ),
    ).toMatchObject({ name: 'InvalidRequest', status: 400, message: 'Bucket is missing Object Lock Configuration' });
  });

  it('refuses malformed configurations with S3’s codes', async () => {
    const bucket = await lockedBucket();
    const put = (retention: object) =>
      s3Error(
        s3.send(
          new PutObjectLockConfigurationCommand({
            Bucket: bucket,
            ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: retention } },
          }),
        ),
      );
    expect(await put({ Mode: 'GOVERNANCE', Days: 1, Years: 1 })).toMatchObject({ name: 'MalformedXML', status: 400 });
    expect(await put({ Mode: 'GOVERNANCE', Days: 0 })).toMatchObject({ name: 'InvalidRetentionPeriod', status: 400 });
    expect(await put({ Mode: 'governance', Years: 1 })).toMatchObject({ name: 'MalformedXML', status: 400 });
  });

  it('gives new versions the default retention, and asks a digest of a PutObject that locks', async () => {
    const bucket = await lockedBucket();
    await s3.send(
      new PutObjectLockConfigurationCommand({
        Bucket: bucket,
        ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 2 } } },
      }),
    );
    const before = server.clock.now();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a.txt', Body: 'a' }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'a.txt' }));
    expect(head.ObjectLockMode).toBe('COMPLIANCE');
    const until = head.ObjectLockRetainUntilDate!.getTime();
    expect(until).toBeGreaterThanOrEqual(before + 2 * DAY - 1000);
    expect(until).toBeLessThanOrEqual(server.clock.now() + 2 * DAY);

    // A presigned PUT signs no payload: without Content-MD5 or a checksum, S3's refusal; with Content-MD5, stored.
    const bare = sdkClient(server.s3Url!, alice, { requestChecksumCalculation: 'WHEN_REQUIRED' });
    const url = await getSignedUrl(bare, new PutObjectCommand({ Bucket: bucket, Key: 'b.txt' }), { expiresIn: 300 });
    const refused = await fetch(url, { method: 'PUT', body: 'b' });
    expect(refused.status).toBe(400);
    const text = await refused.text();
    expect(text).toContain('<Code>InvalidRequest</Code>');
    expect(text).toContain('Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters');
    const md5 = createHash('md5').update('b').digest('base64');
    expect((await fetch(url, { method: 'PUT', body: 'b', headers: { 'content-md5': md5 } })).status).toBe(200);
  });
});

describe('a version’s retention and legal hold', () => {
  it('takes the lock headers of PutObject, CopyObject and multipart uploads, and answers them on HEAD', async () => {
    const bucket = await lockedBucket();
    const until = new Date(Math.floor(inDays(30).getTime() / 1000) * 1000);
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'put.txt',
        Body: 'p',
        ObjectLockMode: 'GOVERNANCE',
        ObjectLockRetainUntilDate: until,
        ObjectLockLegalHoldStatus: 'ON',
      }),
    );
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'put.txt' }));
    expect([head.ObjectLockMode, head.ObjectLockRetainUntilDate, head.ObjectLockLegalHoldStatus]).toEqual(['GOVERNANCE', until, 'ON']);

    await s3.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: 'copy.txt',
        CopySource: `${bucket}/put.txt`,
        ObjectLockMode: 'COMPLIANCE',
        ObjectLockRetainUntilDate: until,
      }),
    );
    const copy = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'copy.txt' }));
    expect([copy.ObjectLockMode, copy.ObjectLockLegalHoldStatus]).toEqual(['COMPLIANCE', undefined]);

    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp.txt', ObjectLockLegalHoldStatus: 'ON' }));
    const part = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'mp.txt', UploadId, PartNumber: 1, Body: 'abc' }));
    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'mp.txt', UploadId, MultipartUpload: { Parts: [{ ETag: part.ETag, PartNumber: 1 }] } }),
    );
    expect((await s3.send(new GetObjectLegalHoldCommand({ Bucket: bucket, Key: 'mp.txt' }))).LegalHold).toEqual({ Status: 'ON' });
    const refused = await s3Error(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'mp.txt', VersionId: await versionOf(bucket, 'mp.txt') })));
    expect(refused).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(refused.message).toContain('legal hold');
  });

  it('refuses deleting a GOVERNANCE-retained version, except to a key allowed to bypass that asks; says until when', async () => {
    const bucket = await lockedBucket();
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a.txt', Body: 'a' }));
    const VersionId = put.VersionId!;
    expect(VersionId).toBe(await versionOf(bucket, 'a.txt'));
    const until = inDays(10);
    await s3.send(new PutObjectRetentionCommand({ Bucket: bucket, Key: 'a.txt', Retention: { Mode: 'GOVERNANCE', RetainUntilDate: until } }));
    expect((await s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'a.txt' }))).Retention).toEqual({ Mode: 'GOVERNANCE', RetainUntilDate: until });

    const refused = await s3Error(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'a.txt', VersionId })));
    expect(refused).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(refused.message).toContain(until.toISOString());
    // Asking is not enough: the key must have the permission.
    expect(await s3Error(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'a.txt', VersionId, BypassGovernanceRetention: true })))).toMatchObject({
      status: 403,
    });
    // Shortening needs the bypass too; extending does not.
    expect(
      await s3Error(s3.send(new PutObjectRetentionCommand({ Bucket: bucket, Key: 'a.txt', Retention: { Mode: 'GOVERNANCE', RetainUntilDate: inDays(5) } }))),
    ).toMatchObject({ name: 'AccessDenied', status: 403 });
    await s3.send(new PutObjectRetentionCommand({ Bucket: bucket, Key: 'a.txt', Retention: { Mode: 'GOVERNANCE', RetainUntilDate: inDays(20) } }));
    await bypasser.send(
      new PutObjectRetentionCommand({
        Bucket: bucket,
        Key: 'a.txt',
        Retention: { Mode: 'GOVERNANCE', RetainUntilDate: inDays(5) },
        BypassGovernanceRetention: true,
      }),
    );
    const deleted = await bypasser.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'a.txt', VersionId, BypassGovernanceRetention: true }));
    expect(deleted.$metadata.httpStatusCode).toBe(204);
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'a.txt' })))).toMatchObject({ status: 404 });
  });

  it('never shortens nor lifts COMPLIANCE, not even for a bypass key; extends it; lets go once the clock passes its date', async () => {
    const bucket = await lockedBucket();
    const until = inDays(3);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'c.txt', Body: 'c', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: until }));
    const VersionId = await versionOf(bucket, 'c.txt');
    for (const client of [s3, bypasser]) {
      const shorten = new PutObjectRetentionCommand({
        Bucket: bucket,
        Key: 'c.txt',
        Retention: { Mode: 'COMPLIANCE', RetainUntilDate: inDays(1) },
        BypassGovernanceRetention: true,
      });
      expect(await s3Error(client.send(shorten))).toMatchObject({ name: 'AccessDenied', status: 403 });
      const toGovernance = new PutObjectRetentionCommand({
        Bucket: bucket,
        Key: 'c.txt',
        Retention: { Mode: 'GOVERNANCE', RetainUntilDate: inDays(9) },
        BypassGovernanceRetention: true,
      });
      expect(await s3Error(client.send(toGovernance))).toMatchObject({ name: 'AccessDenied', status: 403 });
      expect(await s3Error(client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'c.txt', VersionId, BypassGovernanceRetention: true })))).toMatchObject({
        name: 'AccessDenied',
        status: 403,
      });
    }
    const batch = await bypasser.send(
      new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'c.txt', VersionId }] }, BypassGovernanceRetention: true }),
    );
    expect(batch.Errors?.map((error) => [error.Key, error.VersionId, error.Code])).toEqual([['c.txt', VersionId, 'AccessDenied']]);
    // The Pail API deletes a bucket with its files: not one holding a locked version, and it says until when.
    const bucketId = (await json(await fetch(`${server.url}/api/v1/buckets`, { headers: { authorization: `Bearer ${alice.apiKey}` } }))).data.find(
      (b: { name: string }) => b.name === bucket,
    ).id;
    const bucketRefusal = await fetch(`${server.url}/api/v1/buckets/${bucketId}`, { method: 'DELETE', headers: { authorization: `Bearer ${alice.apiKey}` } });
    expect(bucketRefusal.status).toBe(403);
    const refusal = await json(bucketRefusal);
    expect(refusal.code).toBe('ObjectLocked');
    expect(refusal.error).toContain(until.toISOString());

    const extended = inDays(4);
    await s3.send(new PutObjectRetentionCommand({ Bucket: bucket, Key: 'c.txt', Retention: { Mode: 'COMPLIANCE', RetainUntilDate: extended } }));
    expect((await s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'c.txt' }))).Retention?.RetainUntilDate).toEqual(extended);

    server.clock.advance(4 * DAY + 60_000);
    try {
      expect((await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'c.txt', VersionId }))).$metadata.httpStatusCode).toBe(204);
      expect((await s3.send(new DeleteBucketCommand({ Bucket: bucket }))).$metadata.httpStatusCode).toBe(204);
    } finally {
      server.clock.advance(-(4 * DAY + 60_000));
    }
  });

  it('a plain DELETE of a locked file only adds a delete marker, as S3: the locked version stays, readable by its id', async () => {
    const bucket = await lockedBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'm.txt', Body: 'kept', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: inDays(1) }));
    const VersionId = await versionOf(bucket, 'm.txt');
    const marker = await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'm.txt' }));
    expect(marker.$metadata.httpStatusCode).toBe(204);
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'm.txt' })))).toMatchObject({ status: 404 });
    // Overwriting keeps it too: a new version on top.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'm.txt', Body: 'new' }));
    expect((await s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'm.txt', VersionId }))).Retention?.Mode).toBe('COMPLIANCE');
    expect(await s3Error(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'm.txt', VersionId })))).toMatchObject({ name: 'AccessDenied', status: 403 });
  });

  it('a legal hold holds until lifted, whatever the key; lifted, the version goes', async () => {
    const bucket = await lockedBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'h.txt', Body: 'h' }));
    expect((await s3.send(new GetObjectLegalHoldCommand({ Bucket: bucket, Key: 'h.txt' }))).LegalHold).toEqual({ Status: 'OFF' });
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: 'h.txt', LegalHold: { Status: 'ON' } }));
    const VersionId = await versionOf(bucket, 'h.txt');
    expect(await s3Error(bypasser.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'h.txt', VersionId, BypassGovernanceRetention: true })))).toMatchObject({
      name: 'AccessDenied',
      status: 403,
    });
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: 'h.txt', LegalHold: { Status: 'OFF' } }));
    expect((await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'h.txt', VersionId }))).$metadata.httpStatusCode).toBe(204);
  });
});
