/**
 * Object and bucket tags through the S3 door, as the AWS SDK sees them:
 * Put/Get/DeleteObjectTagging, x-amz-tagging on PutObject and multipart,
 * x-amz-tagging-count on reads, CopyObject's tagging directive, bucket
 * tagging, S3's limits with its codes, and who may do what; tags (and the
 * ACL) of one version by versionId, a delete marker's 405.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketTaggingCommand,
  DeleteObjectCommand,
  DeleteObjectTaggingCommand,
  GetBucketTaggingCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3ServiceException,
  UploadPartCommand,
  type S3Client,
  type Tag,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let s3: S3Client;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  alice = await signUp(server.url);
  bob = await signUp(server.url);
  s3 = sdkClient(server.s3Url, alice);
});
afterAll(() => server.close());

async function newBucket(): Promise<string> {
  const name = `tags-${Date.now().toString(36)}-${counter++}`;
  await s3.send(new CreateBucketCommand({ Bucket: name }));
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

const tagsOf = async (bucket: string, key: string): Promise<Tag[] | undefined> =>
  (await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }))).TagSet;
const tagSet = (count: number): Tag[] => Array.from({ length: count }, (_, i) => ({ Key: `k${String(i).padStart(2, '0')}`, Value: `v${i}` }));

describe('object tagging', () => {
  it('puts, gets (sorted by key, as S3 lists them) and deletes an object’s tags; the bytes, ETag and Last-Modified stay', async () => {
    const bucket = await newBucket();
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'dir/café.txt', Body: 'bytes' }));
    const before = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'dir/café.txt' }));
    expect(before.TagCount).toBeUndefined();
    expect(await tagsOf(bucket, 'dir/café.txt')).toEqual([]);

    await s3.send(
      new PutObjectTaggingCommand({
        Bucket: bucket,
        Key: 'dir/café.txt',
        Tagging: {
          TagSet: [
            { Key: 'team', Value: 'storage' },
            { Key: 'Project', Value: 'pail ☕' },
            { Key: 'empty', Value: '' },
          ],
        },
      }),
    );
    expect(await tagsOf(bucket, 'dir/café.txt')).toEqual([
      { Key: 'Project', Value: 'pail ☕' },
      { Key: 'empty', Value: '' },
      { Key: 'team', Value: 'storage' },
    ]);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'dir/café.txt' }));
    expect(head.TagCount).toBe(3);
    expect(head.ETag).toBe(put.ETag);
    expect(head.LastModified).toEqual(before.LastModified);
    const read = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/café.txt' }));
    expect(read.TagCount).toBe(3);
    expect(await read.Body?.transformToString()).toBe('bytes');

    // A new set replaces the old one whole.
    await s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'dir/café.txt', Tagging: { TagSet: [{ Key: 'only', Value: 'one' }] } }));
    expect(await tagsOf(bucket, 'dir/café.txt')).toEqual([{ Key: 'only', Value: 'one' }]);

    const deleted = await s3.send(new DeleteObjectTaggingCommand({ Bucket: bucket, Key: 'dir/café.txt' }));
    expect(deleted.$metadata.httpStatusCode).toBe(204);
    expect(await tagsOf(bucket, 'dir/café.txt')).toEqual([]);
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'dir/café.txt' }))).TagCount).toBeUndefined();

    expect(await s3Error(s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'missing.txt', Tagging: { TagSet: [] } })))).toMatchObject({
      name: 'NoSuchKey',
      status: 404,
    });
    expect(await s3Error(s3.send(new DeleteObjectTaggingCommand({ Bucket: bucket, Key: 'missing.txt' })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
  });

  it('overwriting an object with PutObject replaces its tags with the new request’s (none without x-amz-tagging)', async () => {
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a.txt', Body: 'one', Tagging: 'foo=bar&bar' }));
    expect(await tagsOf(bucket, 'a.txt')).toEqual([
      { Key: 'bar', Value: '' },
      { Key: 'foo', Value: 'bar' },
    ]);
    // URL-encoded keys and values, as the header carries them.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a.txt', Body: 'two', Tagging: 'a%20b=c%26d&%C3%A9=%E2%98%95' }));
    expect(await tagsOf(bucket, 'a.txt')).toEqual([
      { Key: 'a b', Value: 'c&d' },
      { Key: 'é', Value: '☕' },
    ]);
    expect((await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'a.txt' }))).TagCount).toBe(2);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a.txt', Body: 'three' }));
    expect(await tagsOf(bucket, 'a.txt')).toEqual([]);
  });

  it('a multipart upload keeps CreateMultipartUpload’s x-amz-tagging for the object it completes', async () => {
    const bucket = await newBucket();
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'big.bin', Tagging: 'Hello=World&foo=bar' }));
    const part = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'big.bin', UploadId, PartNumber: 1, Body: 'x' }));
    // Not an object yet: no tags to see.
    expect(await s3Error(s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'big.bin' })))).toMatchObject({ name: 'NoSuchKey' });
    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'big.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }),
    );
    expect(await tagsOf(bucket, 'big.bin')).toEqual([
      { Key: 'Hello', Value: 'World' },
      { Key: 'foo', Value: 'bar' },
    ]);
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'big.bin' }))).TagCount).toBe(2);
  });

  it('CopyObject copies the source’s tags (COPY, the default) or takes x-amz-tagging’s (REPLACE)', async () => {
    const bucket = await newBucket();
    const other = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'src.txt', Body: 'source', Tagging: 'a=1&b=2' }));
    const source = `${bucket}/src.txt`;
    await s3.send(new CopyObjectCommand({ Bucket: other, Key: 'copied.txt', CopySource: source }));
    expect(await tagsOf(other, 'copied.txt')).toEqual([
      { Key: 'a', Value: '1' },
      { Key: 'b', Value: '2' },
    ]);
    await s3.send(new CopyObjectCommand({ Bucket: other, Key: 'copy.txt', CopySource: source, TaggingDirective: 'COPY', Tagging: 'ignored=yes' }));
    expect(await tagsOf(other, 'copy.txt')).toEqual([
      { Key: 'a', Value: '1' },
      { Key: 'b', Value: '2' },
    ]);
    await s3.send(new CopyObjectCommand({ Bucket: other, Key: 'replaced.txt', CopySource: source, TaggingDirective: 'REPLACE', Tagging: 'c=3' }));
    expect(await tagsOf(other, 'replaced.txt')).toEqual([{ Key: 'c', Value: '3' }]);
    await s3.send(new CopyObjectCommand({ Bucket: other, Key: 'bare.txt', CopySource: source, TaggingDirective: 'REPLACE' }));
    expect(await tagsOf(other, 'bare.txt')).toEqual([]);
    expect(
      await s3Error(s3.send(new CopyObjectCommand({ Bucket: other, Key: 'x.txt', CopySource: source, TaggingDirective: 'MOVE' as 'COPY' }))),
    ).toMatchObject({ name: 'InvalidArgument', status: 400 });
    // The source keeps its own.
    expect(await tagsOf(bucket, 'src.txt')).toHaveLength(2);
  });

  it('a browser form (POST Object) keeps its tagging field’s Tagging document', async () => {
    const bucket = await newBucket();
    const tagging = '<Tagging><TagSet><Tag><Key>0</Key><Value>0</Value></Tag><Tag><Key>1</Key><Value>1</Value></Tag></TagSet></Tagging>';
    const { url, fields } = await createPresignedPost(s3, { Bucket: bucket, Key: 'form.txt', Fields: { tagging }, Expires: 600 });
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob(['form bytes']), 'form.txt');
    expect((await fetch(url, { method: 'POST', body: form })).status).toBe(204);
    expect(await tagsOf(bucket, 'form.txt')).toEqual([
      { Key: '0', Value: '0' },
      { Key: '1', Value: '1' },
    ]);
  });
});

describe("S3's limits", () => {
  const long = (n: number) => 'é'.repeat(n);
  const refusals: [string, Tag[], string][] = [
    ['11 tags', tagSet(11), 'Object tags cannot be greater than 10'],
    ['a 129-character key', [{ Key: long(129), Value: 'v' }], 'The TagKey you have provided is too long, max 128'],
    ['a 257-character value', [{ Key: 'k', Value: long(257) }], 'The TagValue you have provided is too long, max 256'],
    ['an empty key', [{ Key: '', Value: 'v' }], 'The TagKey you have provided is invalid'],
    [
      'the same key twice',
      [
        { Key: 'k', Value: '1' },
        { Key: 'k', Value: '2' },
      ],
      'Cannot provide multiple Tags with the same key',
    ],
    ['an aws: key', [{ Key: 'aws:created', Value: 'v' }], 'Your TagKey cannot be prefixed with aws:'],
  ];

  it('takes 10 tags of a 128-character key and a 256-character value (characters, not bytes)', async () => {
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'max.txt', Body: 'x' }));
    const max = Array.from({ length: 10 }, (_, i) => ({ Key: `${i}${long(127)}`, Value: long(256) }));
    await s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'max.txt', Tagging: { TagSet: max } }));
    expect(await tagsOf(bucket, 'max.txt')).toEqual(max);
  });

  it('refuses each breach with 400 InvalidTag and S3’s message, on PutObjectTagging and on x-amz-tagging, keeping nothing', async () => {
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept.txt', Body: 'x', Tagging: 'keep=me' }));
    for (const [what, tags, message] of refusals) {
      const refused = await s3Error(s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'kept.txt', Tagging: { TagSet: tags } })));
      expect({ what, ...refused }).toEqual({ what, name: 'InvalidTag', status: 400, message });
      const header = tags.map((tag) => `${encodeURIComponent(tag.Key!)}=${encodeURIComponent(tag.Value!)}`).join('&');
      const onPut = await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'new.txt', Body: 'x', Tagging: header })));
      expect({ what, ...onPut }).toEqual({ what, name: 'InvalidTag', status: 400, message });
    }
    expect(await tagsOf(bucket, 'kept.txt')).toEqual([{ Key: 'keep', Value: 'me' }]);
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'new.txt' })))).toMatchObject({ status: 404 });
    expect(await s3Error(s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp.bin', Tagging: 'aws:x=1' })))).toMatchObject({
      name: 'InvalidTag',
      status: 400,
    });
  });

  it('a body that is not a Tagging document is 400 MalformedXML', async () => {
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'x.txt', Body: 'x' }));
    for (const body of ['not xml', '<Other/>', '<Tagging><TagSet><Tag><Value>v</Value></Tag></TagSet></Tagging>']) {
      expect(await s3Error(putRawTagging(bucket, body))).toMatchObject({ name: 'MalformedXML', status: 400 });
    }
  });

  it('a bucket takes 50 tags, not 51', async () => {
    const bucket = await newBucket();
    await s3.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: tagSet(50) } }));
    expect((await s3.send(new GetBucketTaggingCommand({ Bucket: bucket }))).TagSet).toHaveLength(50);
    expect(await s3Error(s3.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: tagSet(51) } })))).toEqual({
      name: 'InvalidTag',
      status: 400,
      message: 'Bucket tag count cannot be greater than 50',
    });
    expect((await s3.send(new GetBucketTaggingCommand({ Bucket: bucket }))).TagSet).toHaveLength(50);
  });
});

/** A PutObjectTagging with a body of our own, signed by the SDK's middleware: the SDK would not send a broken document. */
async function putRawTagging(bucket: string, body: string): Promise<void> {
  const command = new PutObjectTaggingCommand({ Bucket: bucket, Key: 'x.txt', Tagging: { TagSet: [] } });
  command.middlewareStack.add(
    (next) => async (args) => {
      (args.request as { body: string }).body = body;
      const headers = (args.request as { headers: Record<string, string> }).headers;
      delete headers['content-md5'];
      for (const name of Object.keys(headers)) if (name.startsWith('x-amz-checksum-') || name === 'x-amz-sdk-checksum-algorithm') delete headers[name];
      headers['content-length'] = String(Buffer.byteLength(body));
      return next(args);
    },
    { step: 'build', priority: 'low' },
  );
  await s3.send(command);
}

describe('bucket tagging', () => {
  it('GetBucketTagging without tags is 404 NoSuchTagSet; put, get, delete (204)', async () => {
    const bucket = await newBucket();
    expect(await s3Error(s3.send(new GetBucketTaggingCommand({ Bucket: bucket })))).toMatchObject({ name: 'NoSuchTagSet', status: 404 });
    await s3.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: [{ Key: 'Hello', Value: 'World' }] } }));
    expect((await s3.send(new GetBucketTaggingCommand({ Bucket: bucket }))).TagSet).toEqual([{ Key: 'Hello', Value: 'World' }]);
    const deleted = await s3.send(new DeleteBucketTaggingCommand({ Bucket: bucket }));
    expect(deleted.$metadata.httpStatusCode).toBe(204);
    expect(await s3Error(s3.send(new GetBucketTaggingCommand({ Bucket: bucket })))).toMatchObject({ name: 'NoSuchTagSet', status: 404 });
  });
});

describe('who may', () => {
  it('a read-only key reads tags but may not set or delete them (403), a write key tags objects only, another owner sees no bucket', async () => {
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'x.txt', Body: 'x', Tagging: 'a=b' }));
    await s3.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: [{ Key: 'b', Value: 'c' }] } }));
    const keyOf = async (permissions: string[]) => {
      const created = await fetch(`${server.url}/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: permissions.join('+'), permissions }),
      });
      const key = (await json(created)).data as { access_key_id: string; secret_access_key: string };
      return sdkClient(server.s3Url!, { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key });
    };
    const reader = await keyOf(['read']);
    expect((await reader.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'x.txt' }))).TagSet).toEqual([{ Key: 'a', Value: 'b' }]);
    expect((await reader.send(new GetBucketTaggingCommand({ Bucket: bucket }))).TagSet).toEqual([{ Key: 'b', Value: 'c' }]);
    const tagging = { TagSet: [{ Key: 'z', Value: 'z' }] };
    expect(await s3Error(reader.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'x.txt', Tagging: tagging })))).toMatchObject({
      name: 'AccessDenied',
      status: 403,
    });
    expect(await s3Error(reader.send(new DeleteObjectTaggingCommand({ Bucket: bucket, Key: 'x.txt' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await s3Error(reader.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: tagging })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await s3Error(reader.send(new DeleteBucketTaggingCommand({ Bucket: bucket })))).toMatchObject({ name: 'AccessDenied', status: 403 });

    // A write key tags objects, but a bucket's tags are a bucket setting (as its CORS).
    const writer = await keyOf(['write']);
    await writer.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'x.txt', Tagging: tagging }));
    expect(await s3Error(writer.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: tagging })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await tagsOf(bucket, 'x.txt')).toEqual([{ Key: 'z', Value: 'z' }]);
    expect((await s3.send(new GetBucketTaggingCommand({ Bucket: bucket }))).TagSet).toEqual([{ Key: 'b', Value: 'c' }]);

    const bobs = sdkClient(server.s3Url!, bob);
    expect(await s3Error(bobs.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'x.txt' })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
    expect(await s3Error(bobs.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'x.txt', Tagging: tagging })))).toMatchObject({
      name: 'NoSuchBucket',
      status: 404,
    });
    expect(await s3Error(bobs.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: tagging })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
    expect(await s3Error(bobs.send(new GetBucketTaggingCommand({ Bucket: bucket })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
  });
});

describe('tagging by versionId', () => {
  const versioned = async (): Promise<string> => {
    const bucket = await newBucket();
    await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    return bucket;
  };
  const tagsAt = async (bucket: string, key: string, versionId?: string) => {
    const answer = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
    return { tags: answer.TagSet, versionId: answer.VersionId };
  };

  it('reads, replaces and removes a noncurrent version’s tags and the current one’s, each answering with its version id', async () => {
    const bucket = await versioned();
    const first = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc.txt', Body: 'first', Tagging: 'stage=draft' }));
    const second = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc.txt', Body: 'second!' }));
    expect(await tagsAt(bucket, 'doc.txt', first.VersionId)).toEqual({ tags: [{ Key: 'stage', Value: 'draft' }], versionId: first.VersionId });
    expect(await tagsAt(bucket, 'doc.txt')).toEqual({ tags: [], versionId: second.VersionId });

    // The old version's tags change; the current version's stay as they were.
    const put = await s3.send(
      new PutObjectTaggingCommand({
        Bucket: bucket,
        Key: 'doc.txt',
        VersionId: first.VersionId,
        Tagging: {
          TagSet: [
            { Key: 'stage', Value: 'final' },
            { Key: 'a', Value: '1' },
          ],
        },
      }),
    );
    expect(put.VersionId).toBe(first.VersionId);
    expect(await tagsAt(bucket, 'doc.txt', first.VersionId)).toEqual({
      tags: [
        { Key: 'a', Value: '1' },
        { Key: 'stage', Value: 'final' },
      ],
      versionId: first.VersionId,
    });
    expect((await tagsAt(bucket, 'doc.txt')).tags).toEqual([]);
    // Reads of that version count its tags; its bytes are untouched.
    const old = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'doc.txt', VersionId: first.VersionId }));
    expect(old.TagCount).toBe(2);
    expect(await old.Body?.transformToString()).toBe('first');
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc.txt' }))).TagCount).toBeUndefined();

    // The current version named by its id is the current version.
    await s3.send(
      new PutObjectTaggingCommand({ Bucket: bucket, Key: 'doc.txt', VersionId: second.VersionId, Tagging: { TagSet: [{ Key: 'now', Value: 'yes' }] } }),
    );
    expect(await tagsAt(bucket, 'doc.txt')).toEqual({ tags: [{ Key: 'now', Value: 'yes' }], versionId: second.VersionId });
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc.txt' }))).TagCount).toBe(1);

    const removed = await s3.send(new DeleteObjectTaggingCommand({ Bucket: bucket, Key: 'doc.txt', VersionId: first.VersionId }));
    expect(removed.$metadata.httpStatusCode).toBe(204);
    expect(removed.VersionId).toBe(first.VersionId);
    expect((await tagsAt(bucket, 'doc.txt', first.VersionId)).tags).toEqual([]);
    expect((await tagsAt(bucket, 'doc.txt')).tags).toEqual([{ Key: 'now', Value: 'yes' }]);

    // S3's limits hold by version as on the current one.
    expect(
      await s3Error(s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'doc.txt', VersionId: first.VersionId, Tagging: { TagSet: tagSet(11) } }))),
    ).toMatchObject({ name: 'InvalidTag', status: 400 });
  });

  it('a delete marker has no tags or ACL (405 MethodNotAllowed); an unknown version is NoSuchVersion, a malformed one 400', async () => {
    const bucket = await versioned();
    const kept = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'gone.txt', Body: 'x', Tagging: 'k=v' }));
    const marker = await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'gone.txt' }));
    expect(marker.DeleteMarker).toBe(true);
    const markerId = marker.VersionId!;
    const tagging = { TagSet: [{ Key: 'z', Value: 'z' }] };
    const notAllowed = { name: 'MethodNotAllowed', status: 405 };
    expect(await s3Error(s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: markerId })))).toMatchObject(notAllowed);
    expect(await s3Error(s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: markerId, Tagging: tagging })))).toMatchObject(
      notAllowed,
    );
    expect(await s3Error(s3.send(new DeleteObjectTaggingCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: markerId })))).toMatchObject(notAllowed);
    // Without a versionId, the latest version is that marker: the same answer for tags.
    expect(await s3Error(s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'gone.txt' })))).toMatchObject(notAllowed);
    expect(await s3Error(s3.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: markerId })))).toMatchObject(notAllowed);
    expect(await s3Error(s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: markerId, ACL: 'private' })))).toMatchObject(notAllowed);
    // The version behind the marker keeps its tags, and they can still be changed.
    expect(await tagsAt(bucket, 'gone.txt', kept.VersionId)).toEqual({ tags: [{ Key: 'k', Value: 'v' }], versionId: kept.VersionId });
    await s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: kept.VersionId, Tagging: tagging }));
    expect((await tagsAt(bucket, 'gone.txt', kept.VersionId)).tags).toEqual(tagging.TagSet);

    const unknown = '0'.repeat(32);
    expect(await s3Error(s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: unknown })))).toMatchObject({
      name: 'NoSuchVersion',
      status: 404,
    });
    expect(await s3Error(s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: unknown, Tagging: tagging })))).toMatchObject({
      name: 'NoSuchVersion',
      status: 404,
    });
    expect(await s3Error(s3.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: unknown })))).toMatchObject({
      name: 'NoSuchVersion',
      status: 404,
    });
    expect(await s3Error(s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'gone.txt', VersionId: 'not-an-id' })))).toMatchObject({
      name: 'InvalidArgument',
      status: 400,
    });
  });

  it('an object’s ACL by versionId is its bucket’s, as for the current version', async () => {
    const bucket = await versioned();
    const first = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'acl.txt', Body: 'one' }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'acl.txt', Body: 'two' }));
    const byVersion = await s3.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'acl.txt', VersionId: first.VersionId }));
    const current = await s3.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'acl.txt' }));
    expect(byVersion.Grants).toEqual(current.Grants);
    expect(byVersion.Owner).toEqual(current.Owner);
    expect(byVersion.Grants).toEqual([expect.objectContaining({ Permission: 'FULL_CONTROL' })]);
    // The ACL it has is taken (and changes nothing); another is refused as for the current version.
    const kept = await s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'acl.txt', VersionId: first.VersionId, ACL: 'private' }));
    expect(kept.$metadata.httpStatusCode).toBe(200);
    const refusedByVersion = await s3Error(
      s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'acl.txt', VersionId: first.VersionId, ACL: 'public-read' })),
    );
    const refusedCurrent = await s3Error(s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'acl.txt', ACL: 'public-read' })));
    expect(refusedByVersion).toEqual(refusedCurrent);
  });

  it('an unversioned bucket’s object is its null version', async () => {
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'plain.txt', Body: 'p' }));
    await s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'plain.txt', VersionId: 'null', Tagging: { TagSet: [{ Key: 'n', Value: '1' }] } }));
    // Never versioned: no version id in the answer, as S3.
    expect(await tagsAt(bucket, 'plain.txt', 'null')).toEqual({ tags: [{ Key: 'n', Value: '1' }], versionId: undefined });
    expect((await tagsAt(bucket, 'plain.txt')).tags).toEqual([{ Key: 'n', Value: '1' }]);
  });
});
