/**
 * The S3 API's second slice (issue 23): ListObjects v1, ListObjectVersions,
 * encoding-type and fetch-owner, versioning and ACLs as Pail has them,
 * DeleteObjects, anonymous reads of public buckets, response-* overrides,
 * conditional reads and virtual-hosted-style addressing, driven by the real
 * AWS SDK against a real server.
 */
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetBucketAclCommand,
  GetBucketVersioningCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketAclCommand,
  PutBucketVersioningCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

const DOMAIN = 's3.localtest';

let server: TestServer;
let s3Url: string;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { S3_API_DOMAIN: DOMAIN } });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3Url = server.s3Url;
  alice = await signUp(server.url);
});
afterAll(() => server.close());

function s3Of(user: TestUser): S3Client {
  return sdkClient(s3Url, user, { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
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

const text = async (body: { transformToString(): Promise<string> } | undefined) => (body ? body.transformToString() : '');

let bucketCount = 0;
async function newBucket(): Promise<string> {
  const name = `ops-${++bucketCount}-${Date.now().toString(36)}`;
  await s3Of(alice).send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/** Puts every key, a few at a time. */
async function putAll(bucket: string, keys: string[]): Promise<void> {
  const s3 = s3Of(alice);
  const queue = [...keys];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key.endsWith('/') ? '' : `bytes of ${key}` }));
      }
    }),
  );
}

/** The bucket's storage_bucket_name (what unsigned requests name it by), read from a file url of the Pail API. */
async function storageNameOf(bucket: string): Promise<string> {
  const headers = { 'x-api-key': alice.apiKey };
  const buckets = (await json(await fetch(`${server.url}/api/v1/buckets`, { headers }))).data as { id: number; name: string }[];
  const id = buckets.find((b) => b.name === bucket)?.id;
  const files = (await json(await fetch(`${server.url}/api/v1/buckets/${id}/files`, { headers }))).data as { url: string }[];
  const url = files[0]?.url;
  if (url === undefined) throw new Error('the bucket has no file to read its storage name from');
  return new URL(url).pathname.split('/').slice(-2, -1)[0] ?? '';
}

describe('listings over ~1500 keys with a delimiter', () => {
  let bucket: string;
  const top = Array.from({ length: 1200 }, (_, i) => `k-${String(i).padStart(4, '0')}.txt`);
  const nested = Array.from({ length: 300 }, (_, i) => `f${i % 3}/n-${i}.txt`);
  beforeAll(async () => {
    bucket = await newBucket();
    await putAll(bucket, [...top, ...nested]);
  }, 120_000);

  it('ListObjectsV2 pages with continuation tokens: every key and folder once, in order', async () => {
    const s3 = s3Of(alice);
    const keys: string[] = [];
    const prefixes: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Delimiter: '/', MaxKeys: 400, ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((c) => c.Key ?? ''));
      prefixes.push(...(page.CommonPrefixes ?? []).map((p) => p.Prefix ?? ''));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
      pages += 1;
    } while (token !== undefined);
    expect(pages).toBe(4);
    expect(keys).toEqual(top);
    expect(prefixes).toEqual(['f0/', 'f1/', 'f2/']);
  });

  it('ListObjects (v1) pages with NextMarker when a delimiter is used, and after the last key without one', async () => {
    const s3 = s3Of(alice);
    const keys: string[] = [];
    const prefixes: string[] = [];
    let marker: string | undefined;
    for (;;) {
      const page = await s3.send(new ListObjectsCommand({ Bucket: bucket, Delimiter: '/', MaxKeys: 500, Marker: marker }));
      keys.push(...(page.Contents ?? []).map((c) => c.Key ?? ''));
      prefixes.push(...(page.CommonPrefixes ?? []).map((p) => p.Prefix ?? ''));
      expect(page.Contents?.[0]?.Owner?.ID).toBe(String(alice.id));
      if (!page.IsTruncated) break;
      expect(page.NextMarker).toBeDefined();
      marker = page.NextMarker;
    }
    expect(keys).toEqual(top);
    expect(prefixes).toEqual(['f0/', 'f1/', 'f2/']);

    const first = await s3.send(new ListObjectsCommand({ Bucket: bucket, Prefix: 'f1/', MaxKeys: 60 }));
    expect(first.IsTruncated).toBe(true);
    expect(first.NextMarker).toBeUndefined();
    const last = first.Contents?.at(-1)?.Key;
    const rest = await s3.send(new ListObjectsCommand({ Bucket: bucket, Prefix: 'f1/', Marker: last }));
    expect(rest.IsTruncated).toBe(false);
    expect((first.Contents?.length ?? 0) + (rest.Contents?.length ?? 0)).toBe(100);
  });

  it('ListObjectVersions lists each file as its only, latest version, paged with key-marker', async () => {
    const s3 = s3Of(alice);
    const keys: string[] = [];
    let keyMarker: string | undefined;
    for (;;) {
      const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, MaxKeys: 700, KeyMarker: keyMarker }));
      for (const version of page.Versions ?? []) {
        expect(version).toMatchObject({ VersionId: 'null', IsLatest: true });
        keys.push(version.Key ?? '');
      }
      expect(page.DeleteMarkers ?? []).toEqual([]);
      if (!page.IsTruncated) break;
      expect(page.NextVersionIdMarker).toBe('null');
      keyMarker = page.NextKeyMarker;
    }
    expect(keys).toEqual([...top, ...nested].sort());
    const folded = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: 'f', Delimiter: '/' }));
    expect(folded.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['f0/', 'f1/', 'f2/']);
  });
});

describe('encoding-type=url and fetch-owner', () => {
  it('keys, prefixes, delimiter and start-after come back URL-encoded (slashes kept); fetch-owner adds the Owner', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    await putAll(bucket, ['café ☕.txt', '😀.txt', 'docs/', 'docs/a b.txt', 'docs/sub/x&y.txt', 'a+b.txt']);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, EncodingType: 'url', FetchOwner: true, StartAfter: 'a+b.txt' }));
    expect(listed.EncodingType).toBe('url');
    expect(listed.StartAfter).toBe('a%2Bb.txt');
    expect(listed.Contents?.map((c) => c.Key)).toEqual(['caf%C3%A9%20%E2%98%95.txt', 'docs/', 'docs/a%20b.txt', 'docs/sub/x%26y.txt', '%F0%9F%98%80.txt']);
    expect(listed.Contents?.map((c) => decodeURIComponent(c.Key ?? ''))).toEqual(['café ☕.txt', 'docs/', 'docs/a b.txt', 'docs/sub/x&y.txt', '😀.txt']);
    expect(listed.Contents?.[0]?.Owner).toEqual({ ID: String(alice.id), DisplayName: alice.email });

    const folded = await s3.send(new ListObjectsV2Command({ Bucket: bucket, EncodingType: 'url', Delimiter: '/', Prefix: 'docs/' }));
    expect(folded.Delimiter).toBe('/');
    // The marker of the folder being listed is that folder, not a file in it (Pail's listing rule).
    expect(folded.Contents?.map((c) => c.Key)).toEqual(['docs/a%20b.txt']);
    expect(folded.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['docs/sub/']);
    expect(folded.Contents?.[0]?.Owner).toBeUndefined();

    const v1 = await s3.send(new ListObjectsCommand({ Bucket: bucket, EncodingType: 'url', Prefix: 'caf' }));
    expect(v1.Contents?.map((c) => c.Key)).toEqual(['caf%C3%A9%20%E2%98%95.txt']);
  });
});

describe('versioning', () => {
  it('GetBucketVersioning of a bucket never versioned is an empty configuration; PutBucketVersioning turns it on (s3-versioning.test.ts)', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const versioning = await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }));
    expect(versioning.Status).toBeUndefined();
    expect(versioning.MFADelete).toBeUndefined();
    const raw = await fetch(await getSignedUrl(s3, new GetBucketVersioningCommand({ Bucket: bucket })));
    expect(await raw.text()).toMatch(/<VersioningConfiguration xmlns="[^"]+"><\/VersioningConfiguration>|<VersioningConfiguration xmlns="[^"]+"\/>/);
    await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status).toBe('Enabled');
  });
});

describe('DeleteObjects', () => {
  it('deletes three keys, one missing (which counts as deleted); Quiet answers only errors', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    await putAll(bucket, ['one.txt', 'two.txt', 'three.txt', 'four.txt', 'keep.txt']);
    const loud = await s3.send(
      new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'one.txt' }, { Key: 'two.txt' }, { Key: 'missing.txt' }] } }),
    );
    expect(loud.Deleted?.map((d) => d.Key).sort()).toEqual(['missing.txt', 'one.txt', 'two.txt']);
    expect(loud.Errors ?? []).toEqual([]);
    const quiet = await s3.send(
      new DeleteObjectsCommand({ Bucket: bucket, Delete: { Quiet: true, Objects: [{ Key: 'three.txt' }, { Key: 'four.txt' }, { Key: 'gone.txt' }] } }),
    );
    expect(quiet.Deleted ?? []).toEqual([]);
    expect(quiet.Errors ?? []).toEqual([]);
    const left = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(left.Contents?.map((c) => c.Key)).toEqual(['keep.txt']);
  });

  it('reads a body sent without Content-Type, and checks Content-MD5 when it is sent', async () => {
    const bucket = await newBucket();
    await putAll(bucket, ['a.txt', 'b.txt']);
    const body = '<Delete><Object><Key>a.txt</Key></Object></Delete>';
    const md5 = createHash('md5').update(body).digest('base64');
    const wrong = await signedFetch('POST', `/${bucket}?delete`, body, { 'content-md5': createHash('md5').update('other').digest('base64') });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('<Code>BadDigest</Code>');
    const right = await signedFetch('POST', `/${bucket}?delete`, body, { 'content-md5': md5 });
    expect(right.status).toBe(200);
    expect(right.body).toContain('<Deleted><Key>a.txt</Key></Deleted>');
    const left = await s3Of(alice).send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(left.Contents?.map((c) => c.Key)).toEqual(['b.txt']);
  });
});

describe('ACLs', () => {
  it('public-read makes an anonymous GET through the S3 port work; private ends it; GetObjectAcl follows the bucket', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'photo.txt', Body: 'for everyone' }));
    const storageName = await storageNameOf(bucket);
    const anonymousUrl = `${s3Url}/${storageName}/photo.txt`;
    expect((await fetch(anonymousUrl)).status).toBe(403);

    await s3.send(new PutBucketAclCommand({ Bucket: bucket, ACL: 'public-read' }));
    const acl = await s3.send(new GetBucketAclCommand({ Bucket: bucket }));
    expect(acl.Owner?.ID).toBe(String(alice.id));
    expect(acl.Grants?.map((g) => [g.Grantee?.Type, g.Grantee?.URI ?? g.Grantee?.ID, g.Permission])).toEqual([
      ['CanonicalUser', String(alice.id), 'FULL_CONTROL'],
      ['Group', 'http://acs.amazonaws.com/groups/global/AllUsers', 'READ'],
    ]);
    const objectAcl = await s3.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'photo.txt' }));
    expect(objectAcl.Grants?.map((g) => g.Permission)).toEqual(['FULL_CONTROL', 'READ']);
    const anonymous = await fetch(anonymousUrl);
    expect(anonymous.status).toBe(200);
    expect(await anonymous.text()).toBe('for everyone');
    // Anonymous requests do nothing else, and take no response-* overrides.
    expect((await fetch(anonymousUrl, { method: 'PUT', body: 'overwrite' })).status).toBe(403);
    expect((await fetch(`${anonymousUrl}?response-content-type=text/html`)).status).toBe(400);

    // The same as an AccessControlPolicy body with only the owner's grant: private.
    await s3.send(
      new PutBucketAclCommand({
        Bucket: bucket,
        AccessControlPolicy: {
          Owner: { ID: String(alice.id) },
          Grants: [{ Grantee: { Type: 'CanonicalUser', ID: String(alice.id) }, Permission: 'FULL_CONTROL' }],
        },
      }),
    );
    expect((await s3.send(new GetBucketAclCommand({ Bucket: bucket }))).Grants).toHaveLength(1);
    expect((await s3.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'photo.txt' }))).Grants).toHaveLength(1);
    expect((await fetch(anonymousUrl)).status).toBe(403);
    expect(await s3Error(s3.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'nothing.txt' })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
  });

  it('any other ACL is 501 and changes nothing', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    expect(await s3Error(s3.send(new PutBucketAclCommand({ Bucket: bucket, ACL: 'authenticated-read' })))).toMatchObject({
      name: 'NotImplemented',
      status: 501,
    });
    expect(await s3Error(s3.send(new PutBucketAclCommand({ Bucket: bucket, GrantRead: 'id=someone-else' })))).toMatchObject({
      name: 'NotImplemented',
      status: 501,
    });
    const otherGrant = new PutBucketAclCommand({
      Bucket: bucket,
      AccessControlPolicy: {
        Owner: { ID: String(alice.id) },
        Grants: [
          { Grantee: { Type: 'CanonicalUser', ID: String(alice.id) }, Permission: 'FULL_CONTROL' },
          { Grantee: { Type: 'CanonicalUser', ID: 'someone-else' }, Permission: 'WRITE' },
        ],
      },
    });
    expect(await s3Error(s3.send(otherGrant))).toMatchObject({ name: 'NotImplemented', status: 501 });
    expect((await s3.send(new GetBucketAclCommand({ Bucket: bucket }))).Grants).toHaveLength(1);
  });

  it('PutObjectAcl naming the bucket’s visibility is 200 and changes nothing; any other ACL is 400 AccessControlListNotSupported', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept.txt', Body: 'original bytes' }));
    const ownerOnly = {
      Owner: { ID: String(alice.id) },
      Grants: [{ Grantee: { Type: 'CanonicalUser' as const, ID: String(alice.id) }, Permission: 'FULL_CONTROL' as const }],
    };
    const everyoneReads = { Grantee: { Type: 'Group' as const, URI: 'http://acs.amazonaws.com/groups/global/AllUsers' }, Permission: 'READ' as const };
    const refused = { name: 'AccessControlListNotSupported', status: 400 };

    // A private bucket: private (header or body) and bucket-owner-full-control are what its objects have.
    for (const input of [{ ACL: 'private' as const }, { ACL: 'bucket-owner-full-control' as const }, { AccessControlPolicy: ownerOnly }]) {
      const answer = await s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'kept.txt', ...input }));
      expect(answer.$metadata.httpStatusCode).toBe(200);
    }
    const publicPolicy = { ...ownerOnly, Grants: [...ownerOnly.Grants, everyoneReads] };
    for (const input of [
      { ACL: 'public-read' as const },
      { ACL: 'authenticated-read' as const },
      { AccessControlPolicy: publicPolicy },
      { GrantRead: 'id=someone-else' },
    ]) {
      const error = await s3Error(s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'kept.txt', ...input })));
      expect(error).toMatchObject(refused);
      expect(error.message).toMatch(/^The bucket does not allow ACLs/);
    }
    expect((await s3.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'kept.txt' }))).Grants).toHaveLength(1);
    expect(await s3Error(s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'missing.txt', ACL: 'private' })))).toMatchObject({
      name: 'NoSuchKey',
      status: 404,
    });

    // A public bucket: public-read is its objects' ACL, private is not.
    await s3.send(new PutBucketAclCommand({ Bucket: bucket, ACL: 'public-read' }));
    await s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'kept.txt', ACL: 'public-read' }));
    await s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'kept.txt', AccessControlPolicy: publicPolicy }));
    expect(await s3Error(s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'kept.txt', ACL: 'private' })))).toMatchObject(refused);
    expect((await s3.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'kept.txt' }))).Grants).toHaveLength(2);
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'kept.txt' }))).Body)).toBe('original bytes');
  });

  it('PutObjectAcl asks what PutBucketAcl asks: a key without manage is AccessDenied', async () => {
    const bucket = await newBucket();
    await s3Of(alice).send(new PutObjectCommand({ Bucket: bucket, Key: 'kept.txt', Body: 'x' }));
    const response = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'writer', permissions: ['read', 'write', 'delete'] }),
    });
    const key = (await json(response)).data as { access_key_id: string; secret_access_key: string };
    const writer = sdkClient(s3Url, { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key });
    expect(await s3Error(writer.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'kept.txt', ACL: 'private' })))).toMatchObject({
      name: 'AccessDenied',
      status: 403,
    });
  });

  it('PutObjectTagging sets tags and leaves the object bytes unchanged (never taken for a PutObject)', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept.txt', Body: 'original bytes' }));
    await s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'kept.txt', Tagging: { TagSet: [{ Key: 'a', Value: 'b' }] } }));
    const read = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'kept.txt' }));
    expect(await text(read.Body)).toBe('original bytes');
    expect(read.TagCount).toBe(1);
  });
});

describe('reads: response-* overrides and conditions', () => {
  let bucket: string;
  let etag: string;
  beforeAll(async () => {
    bucket = await newBucket();
    await s3Of(alice).send(new PutObjectCommand({ Bucket: bucket, Key: 'report.txt', Body: 'the report' }));
    etag = (await s3Of(alice).send(new HeadObjectCommand({ Bucket: bucket, Key: 'report.txt' }))).ETag ?? '';
    expect(etag).toMatch(/^".+"$/);
  });

  it('response-content-disposition and the other overrides set the answer headers, also on a presigned url', async () => {
    const s3 = s3Of(alice);
    const got = await s3.send(
      new GetObjectCommand({
        Bucket: bucket,
        Key: 'report.txt',
        ResponseContentDisposition: 'attachment; filename="r.txt"',
        ResponseContentType: 'application/x-report',
        ResponseCacheControl: 'max-age=60',
        ResponseContentLanguage: 'en',
      }),
    );
    expect(got.ContentDisposition).toBe('attachment; filename="r.txt"');
    expect(got.ContentType).toBe('application/x-report');
    expect(got.CacheControl).toBe('max-age=60');
    expect(got.ContentLanguage).toBe('en');
    expect(await text(got.Body)).toBe('the report');
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: 'report.txt', ResponseContentDisposition: 'inline' }));
    expect((await fetch(url)).headers.get('content-disposition')).toBe('inline');
  });

  it('If-None-Match and If-Modified-Since answer 304; If-Match and If-Unmodified-Since answer 412', async () => {
    const s3 = s3Of(alice);
    const key = { Bucket: bucket, Key: 'report.txt' };
    expect(await s3Error(s3.send(new GetObjectCommand({ ...key, IfNoneMatch: etag })))).toMatchObject({ status: 304 });
    expect(await s3Error(s3.send(new HeadObjectCommand({ ...key, IfNoneMatch: etag })))).toMatchObject({ status: 304 });
    const future = new Date(Date.now() + 3600_000);
    const past = new Date(Date.now() - 3600_000);
    expect(await s3Error(s3.send(new GetObjectCommand({ ...key, IfModifiedSince: future })))).toMatchObject({ status: 304 });
    expect(await s3Error(s3.send(new GetObjectCommand({ ...key, IfMatch: '"0123456789abcdef0123456789abcdef"' })))).toMatchObject({
      name: 'PreconditionFailed',
      status: 412,
    });
    expect(await s3Error(s3.send(new HeadObjectCommand({ ...key, IfUnmodifiedSince: past })))).toMatchObject({ status: 412 });
    expect(await text((await s3.send(new GetObjectCommand({ ...key, IfMatch: etag, IfUnmodifiedSince: past }))).Body)).toBe('the report');
    expect(await text((await s3.send(new GetObjectCommand({ ...key, IfNoneMatch: '"other"', IfModifiedSince: past }))).Body)).toBe('the report');
  });
});

describe('stored headers and user metadata', () => {
  it('Content-Disposition, Content-Encoding, Cache-Control, Expires and x-amz-meta-* round-trip on GET and HEAD', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const expires = new Date('2030-01-02T03:04:05Z');
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'meta.txt',
        Body: 'with metadata',
        ContentType: 'text/plain',
        ContentDisposition: 'attachment; filename="meta.txt"',
        ContentEncoding: 'identity',
        CacheControl: 'max-age=3600',
        Expires: expires,
        Metadata: { author: 'alice', 'project-id': '42' },
      }),
    );
    for (const answer of [
      await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'meta.txt' })),
      await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'meta.txt' })),
    ]) {
      expect(answer).toMatchObject({
        ContentType: 'text/plain',
        ContentDisposition: 'attachment; filename="meta.txt"',
        ContentEncoding: 'identity',
        CacheControl: 'max-age=3600',
        Metadata: { author: 'alice', 'project-id': '42' },
      });
      expect(answer.Expires?.getTime()).toBe(expires.getTime());
    }
    // An override wins over the stored header.
    const overridden = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'meta.txt', ResponseCacheControl: 'no-store' }));
    expect(overridden.CacheControl).toBe('no-store');
    // Replacing the file replaces its metadata; the Pail API's upload keeps none.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'meta.txt', Body: 'plain', Metadata: { other: 'x' } }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'meta.txt' }))).Metadata).toEqual({ other: 'x' });
    const pailFiles = `${server.url}/api/v1/buckets`;
    const buckets = (await json(await fetch(pailFiles, { headers: { 'x-api-key': alice.apiKey } }))).data as { id: number; name: string }[];
    const id = buckets.find((b) => b.name === bucket)?.id;
    const put = await fetch(`${pailFiles}/${id}/files/meta.txt`, { method: 'PUT', headers: { 'x-api-key': alice.apiKey }, body: 'from pail' });
    expect(put.ok).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'meta.txt' }));
    expect(head.Metadata).toEqual({});
    expect(head.ContentDisposition).toBeUndefined();
  });

  it('more than 2 KiB of metadata is 400 MetadataTooLarge and stores nothing', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    const error = await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'big-meta.txt', Body: 'x', Metadata: { big: 'm'.repeat(2100) } })));
    expect(error).toMatchObject({ name: 'MetadataTooLarge', status: 400 });
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'big-meta.txt' })))).toMatchObject({ status: 404 });
  });
});

/** A SigV4-signed request sent with node:http, with the Host the test chooses (SDKs resolve the host they sign). */
async function signedFetch(
  method: string,
  pathAndQuery: string,
  body: string,
  headers: Record<string, string> = {},
  host = new URL(s3Url).host,
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const url = new URL(pathAndQuery, 'http://placeholder');
  const signer = new SignatureV4({
    service: 's3',
    region: 'us-east-1',
    credentials: { accessKeyId: alice.accessKeyId, secretAccessKey: alice.secretAccessKey },
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: true,
  });
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const signed = await signer.sign({
    method,
    protocol: 'http:',
    hostname: host.replace(/:\d+$/, ''),
    port: Number(new URL(s3Url).port),
    path: url.pathname,
    query,
    headers: { host, 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex'), ...headers },
    body,
  });
  const port = Number(new URL(s3Url).port);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path: pathAndQuery, headers: signed.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** SHA-256 (and its HMAC) for the signer, from node:crypto. */
class NodeSha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash =
      secret === undefined
        ? createHash('sha256')
        : createHmac('sha256', typeof secret === 'string' ? secret : Buffer.from(ArrayBuffer.isView(secret) ? secret.buffer : secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(
      typeof data === 'string' ? data : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data),
    );
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

describe('virtual-hosted-style addressing (S3_API_DOMAIN)', () => {
  it('<bucket>.<domain> as Host names the bucket and the whole path is the key; path style keeps working', async () => {
    const bucket = `vhost-${Date.now().toString(36)}`;
    const vhost = `${bucket}.${DOMAIN}:${new URL(s3Url).port}`;
    expect((await signedFetch('PUT', '/', '', {}, vhost)).status).toBe(200);
    expect((await signedFetch('PUT', '/dir/file%20one.txt', 'virtual bytes', {}, vhost)).status).toBe(200);
    const got = await signedFetch('GET', '/dir/file%20one.txt', '', {}, vhost);
    expect(got).toMatchObject({ status: 200, body: 'virtual bytes' });
    const listed = await signedFetch('GET', '/?list-type=2', '', {}, vhost);
    expect(listed.body).toContain(`<Name>${bucket}</Name>`);
    expect(listed.body).toContain('<Key>dir/file one.txt</Key>');
    // The same object, path style.
    expect(await text((await s3Of(alice).send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/file one.txt' }))).Body)).toBe('virtual bytes');
    // The domain itself is path style.
    const pathStyle = await signedFetch('GET', `/${bucket}/dir/file%20one.txt`, '', {}, `${DOMAIN}:${new URL(s3Url).port}`);
    expect(pathStyle).toMatchObject({ status: 200, body: 'virtual bytes' });
  });
});

describe('GetObject names the bucket', () => {
  it('by its name or its storage name; a deleted bucket is not read from what was cached, and a new one of its name is read afresh', async () => {
    const s3 = s3Of(alice);
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k.txt', Body: 'top' }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'sub/k.txt', Body: 'first' }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'sub/k.txt' }))).Body)).toBe('first');
    const storageName = await storageNameOf(bucket);
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: storageName, Key: 'sub/k.txt' }))).Body)).toBe('first');
    // A bucket name with an encoded '/' is no bucket, whatever a cache holds for `<bucket>` and `sub/k.txt`.
    expect(await signedFetch('GET', `/${bucket}%2Fsub/k.txt`, '')).toMatchObject({ status: 404 });

    const headers = { 'x-api-key': alice.apiKey };
    const buckets = (await json(await fetch(`${server.url}/api/v1/buckets`, { headers }))).data as { id: number; name: string }[];
    const id = buckets.find((b) => b.name === bucket)?.id;
    expect((await fetch(`${server.url}/api/v1/buckets/${id}`, { method: 'DELETE', headers })).status).toBe(200);
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'sub/k.txt' })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });

    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'sub/k.txt' })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'sub/k.txt', Body: 'second' }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'sub/k.txt' }))).Body)).toBe('second');
  });

  it('a bucket made later with the storage name that was read by names the new bucket at once', async () => {
    const s3 = s3Of(alice);
    // Another owner had the name first, so alice's bucket of that name has a suffixed storage name.
    const older = `ops-${++bucketCount}-${Date.now().toString(36)}`;
    await s3Of(await signUp(server.url)).send(new CreateBucketCommand({ Bucket: older }));
    await s3.send(new CreateBucketCommand({ Bucket: older }));
    await s3.send(new PutObjectCommand({ Bucket: older, Key: 'k.txt', Body: 'older' }));
    const storageName = await storageNameOf(older);
    expect(storageName).toMatch(new RegExp(`^${older}-[0-9a-f]{12}$`));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: storageName, Key: 'k.txt' }))).Body)).toBe('older');
    // A bucket's name comes before another's storage name.
    await s3.send(new CreateBucketCommand({ Bucket: storageName }));
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: storageName, Key: 'k.txt' })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
    await s3.send(new PutObjectCommand({ Bucket: storageName, Key: 'k.txt', Body: 'newer' }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: storageName, Key: 'k.txt' }))).Body)).toBe('newer');
  });
});
