/**
 * x-amz-expiration through the S3 door, as the AWS SDK reads it (Expiration
 * on PutObject, CopyObject, CompleteMultipartUpload, GetObject and HeadObject): when a lifecycle Expiration rule
 * reaches the object, its expiry date (the rule's Date, or Last-Modified plus
 * Days rounded up to the next midnight UTC, as S3 rounds) and the rule's id;
 * nothing for an object no rule reaches, a noncurrent version, or a bucket
 * whose rules are gone, on every instance's caches.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketLifecycleCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expiringWrittenBefore, objectExpiry } from '../src/domain/lifecycle-expiry.js';
import { signUp } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let s3: S3Client;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3 = sdkClient(server.s3Url, await signUp(server.url));
});
afterAll(() => server.close());

const DAY_MS = 86_400_000;

async function newBucket(): Promise<string> {
  const name = `exp-${Date.now().toString(36)}-${counter++}`;
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/** S3's header for an expiry `days` after `lastModified`: the next midnight UTC after it. */
const afterDays = (lastModified: Date, days: number, ruleId: string): string =>
  `expiry-date="${new Date((Math.floor(lastModified.getTime() / DAY_MS) + days + 1) * DAY_MS).toUTCString()}", rule-id="${ruleId}"`;

const head = (Bucket: string, Key: string, VersionId?: string) => s3.send(new HeadObjectCommand({ Bucket, Key, VersionId }));

describe('x-amz-expiration', () => {
  it('tells when the earliest rule reaching the object expires it, on PutObject, GetObject and HeadObject', async () => {
    const bucket = await newBucket();
    // Read before any rule: the lookup a cache may keep must not keep the bucket's having none.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'docs/early.txt', Body: 'early' }));
    expect((await head(bucket, 'docs/early.txt')).Expiration).toBeUndefined();

    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: bucket,
        LifecycleConfiguration: {
          Rules: [
            { ID: 'docs-3d', Filter: { Prefix: 'docs/' }, Status: 'Enabled', Expiration: { Days: 3 } },
            { ID: 'by-date', Filter: { Prefix: 'old/' }, Status: 'Enabled', Expiration: { Date: new Date('2031-01-01T00:00:00Z') } },
            { ID: 'tagged', Filter: { Tag: { Key: 'keep', Value: 'no' } }, Status: 'Enabled', Expiration: { Days: 1 } },
            { ID: 'off', Filter: { Prefix: 'docs/' }, Status: 'Disabled', Expiration: { Days: 1 } },
            { ID: 'versions-only', Filter: { Prefix: '' }, Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 1 } },
          ],
        },
      }),
    );
    const early = await head(bucket, 'docs/early.txt');
    expect(early.Expiration).toBe(afterDays(early.LastModified!, 3, 'docs-3d'));

    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'docs/a.txt', Body: 'a' }));
    const headed = await head(bucket, 'docs/a.txt');
    expect(headed.Expiration).toBe(afterDays(headed.LastModified!, 3, 'docs-3d'));
    expect(put.Expiration).toBe(headed.Expiration);
    const read = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'docs/a.txt' }));
    expect(read.Expiration).toBe(headed.Expiration);
    expect(await read.Body?.transformToString()).toBe('a');

    const dated = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'old/b.txt', Body: 'b' }));
    expect(dated.Expiration).toBe('expiry-date="Wed, 01 Jan 2031 00:00:00 GMT", rule-id="by-date"');
    expect((await head(bucket, 'old/b.txt')).Expiration).toBe(dated.Expiration);
    // A copy is a new object: the rules reaching its own name tell.
    const copied = await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'docs/copy.txt', CopySource: `${bucket}/old/b.txt` }));
    const copiedHead = await head(bucket, 'docs/copy.txt');
    expect(copiedHead.Expiration).toBe(afterDays(copiedHead.LastModified!, 3, 'docs-3d'));
    expect(copied.Expiration).toBe(copiedHead.Expiration);

    // A tag filter: the earliest of the rules that reach it wins (1 day before 3).
    const tagged = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'docs/t.txt', Body: 't', Tagging: 'keep=no' }));
    const taggedHead = await head(bucket, 'docs/t.txt');
    expect(taggedHead.Expiration).toBe(afterDays(taggedHead.LastModified!, 1, 'tagged'));
    expect(tagged.Expiration).toBe(taggedHead.Expiration);

    // No rule reaches it (another prefix, no tag): no header.
    const untouched = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'misc/c.txt', Body: 'c', Tagging: 'keep=yes' }));
    expect(untouched.Expiration).toBeUndefined();
    expect((await head(bucket, 'misc/c.txt')).Expiration).toBeUndefined();

    // Rules removed: nothing expires any more, at once.
    await s3.send(new DeleteBucketLifecycleCommand({ Bucket: bucket }));
    expect((await head(bucket, 'docs/a.txt')).Expiration).toBeUndefined();
    expect((await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'docs/d.txt', Body: 'd' }))).Expiration).toBeUndefined();
  });

  it("CompleteMultipartUpload tells it too, by the upload's tags, and a repeated completion tells the same", async () => {
    const bucket = await newBucket();
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: bucket,
        LifecycleConfiguration: {
          Rules: [
            { ID: 'big-5d', Filter: { Prefix: 'big/' }, Status: 'Enabled', Expiration: { Days: 5 } },
            { ID: 'tagged', Filter: { Tag: { Key: 'keep', Value: 'no' } }, Status: 'Enabled', Expiration: { Days: 2 } },
          ],
        },
      }),
    );
    const complete = async (Key: string, Tagging?: string) => {
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key, Tagging }));
      const part = await s3.send(new UploadPartCommand({ Bucket: bucket, Key, UploadId, PartNumber: 1, Body: 'one part' }));
      const request = { Bucket: bucket, Key, UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } };
      const first = await s3.send(new CompleteMultipartUploadCommand(request));
      return { first, again: await s3.send(new CompleteMultipartUploadCommand(request)) };
    };
    const big = await complete('big/a.bin');
    const bigHead = await head(bucket, 'big/a.bin');
    expect(big.first.Expiration).toBe(afterDays(bigHead.LastModified!, 5, 'big-5d'));
    expect(big.again.Expiration).toBe(big.first.Expiration);
    // The tags given at CreateMultipartUpload are the object's: the earlier tagged rule wins.
    const tagged = await complete('big/t.bin', 'keep=no');
    expect(tagged.first.Expiration).toBe(afterDays((await head(bucket, 'big/t.bin')).LastModified!, 2, 'tagged'));
    expect((await complete('misc/none.bin')).first.Expiration).toBeUndefined();
  });

  it('a noncurrent version has none: Expiration reaches current versions only', async () => {
    const bucket = await newBucket();
    await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: bucket,
        LifecycleConfiguration: { Rules: [{ ID: 'all-7d', Filter: { Prefix: '' }, Status: 'Enabled', Expiration: { Days: 7 } }] },
      }),
    );
    const first = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'v.txt', Body: 'one' }));
    const second = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'v.txt', Body: 'two' }));
    const current = await head(bucket, 'v.txt');
    expect(current.Expiration).toBe(afterDays(current.LastModified!, 7, 'all-7d'));
    expect(second.Expiration).toBe(current.Expiration);
    expect((await head(bucket, 'v.txt', second.VersionId)).Expiration).toBe(current.Expiration);
    expect((await head(bucket, 'v.txt', first.VersionId)).Expiration).toBeUndefined();
    expect((await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'v.txt', VersionId: first.VersionId }))).Expiration).toBeUndefined();
  });
});

describe('objectExpiry (S3’s rounding)', () => {
  const rule = { id: 'r', status: 'enabled' as const, expiration: { days: 1 } };
  const at = (lastModified: string) => objectExpiry([rule], { filename: 'f', size: 1, tags: null, lastModified })?.date.toISOString();

  it('adds the days and rounds up to the next midnight UTC', () => {
    // AWS's own example: written at 10:30 UTC on 1 January, with 1 day, it expires at 00:00 UTC on 3 January.
    expect(at('2014-01-01T10:30:00.000Z')).toBe('2014-01-03T00:00:00.000Z');
    expect(at('2014-01-01T23:59:59.999Z')).toBe('2014-01-03T00:00:00.000Z');
    // A write at midnight sharp still expires at the next midnight after its days are up.
    expect(at('2014-01-01T00:00:00.000Z')).toBe('2014-01-03T00:00:00.000Z');
  });
});

describe('expiringWrittenBefore (the sweep deletes when the header said)', () => {
  it('reaches exactly the files whose told expiry has come', () => {
    const rule = { id: 'r', status: 'enabled' as const, expiration: { days: 2 } };
    const now = Date.parse('2026-03-10T08:00:00.000Z');
    const before = expiringWrittenBefore(2, now, 86_400);
    expect(new Date(before).toISOString()).toBe('2026-03-08T00:00:00.000Z');
    for (const written of ['2026-03-07T23:59:59.999Z', '2026-03-08T00:00:00.000Z', '2026-03-08T12:00:00.000Z', '2026-03-05T01:00:00.000Z']) {
      const expiry = objectExpiry([rule], { filename: 'f', size: 1, tags: null, lastModified: written })!.date.getTime();
      expect(Date.parse(written) < before, written).toBe(expiry <= now);
    }
    // A test day (LIFECYCLE_DAY_SECONDS) is not rounded.
    expect(expiringWrittenBefore(2, now, 10)).toBe(now - 20_000);
  });
});
