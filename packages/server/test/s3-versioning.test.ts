/**
 * Versioned buckets through the S3 API, as S3 answers (s3-api.md "Versions,
 * lifecycle and tags"): Put/GetBucketVersioning, x-amz-version-id on writes
 * and reads, GET/HEAD/DELETE by versionId, delete markers, the null version
 * of a suspended bucket, ListObjectVersions paged, and the AWS CLI's
 * list-object-versions over 3,000 versions.
 */
import { backendKind } from './helpers/backends.js';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketVersioningCommand,
  GetObjectAclCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';
import { AWS, awsCli, missing, ok } from './helpers/s3-tools.js';

let server: TestServer;
let user: TestUser;
let s3: S3Client;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  user = await signUp(server.url);
  s3 = sdkClient(server.s3Url!, user);
});
afterAll(() => server?.close());

async function versionedBucket(status: 'Enabled' | 'Suspended' | null = 'Enabled'): Promise<string> {
  const Bucket = `ver-${randomBytes(4).toString('hex')}`;
  await s3.send(new CreateBucketCommand({ Bucket }));
  expect((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status).toBeUndefined();
  if (status) {
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: status } }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status).toBe(status);
  }
  return Bucket;
}

async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: string; headers: Record<string, string> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) {
      const response = error.$response as { headers?: Record<string, string> } | undefined;
      return { status: error.$metadata.httpStatusCode!, code: error.name, headers: response?.headers ?? {} };
    }
    throw error;
  }
  throw new Error('expected a refusal');
}

const text = async (body: { transformToString(): Promise<string> } | undefined) => (body ? body.transformToString() : '');

describe('S3 versioning', () => {
  it('version ids on writes and reads, old versions by id, delete markers, deleting versions for good', async () => {
    const Bucket = await versionedBucket();
    const Key = 'doc.txt';
    const v1 = (await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'one' }))).VersionId!;
    const v2 = (await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'two!' }))).VersionId!;
    expect(v1).toMatch(/^[0-9a-f]{32}$/);
    expect(v2).not.toBe(v1);
    const current = await s3.send(new GetObjectCommand({ Bucket, Key }));
    expect(current.VersionId).toBe(v2);
    expect(await text(current.Body)).toBe('two!');
    const old = await s3.send(new GetObjectCommand({ Bucket, Key, VersionId: v1 }));
    expect(await text(old.Body)).toBe('one');
    expect((await s3.send(new HeadObjectCommand({ Bucket, Key, VersionId: v1 }))).ContentLength).toBe(3);

    const deleted = await s3.send(new DeleteObjectCommand({ Bucket, Key }));
    expect(deleted.DeleteMarker).toBe(true);
    const marker = deleted.VersionId!;
    const gone = await refusal(s3.send(new GetObjectCommand({ Bucket, Key })));
    expect(gone).toMatchObject({ status: 404, code: 'NoSuchKey' });
    expect(gone.headers['x-amz-delete-marker']).toBe('true');
    expect(await refusal(s3.send(new GetObjectCommand({ Bucket, Key, VersionId: marker })))).toMatchObject({ status: 405 });
    expect(await refusal(s3.send(new GetObjectCommand({ Bucket, Key, VersionId: 'f'.repeat(32) })))).toMatchObject({ status: 404, code: 'NoSuchVersion' });
    expect(await refusal(s3.send(new GetObjectCommand({ Bucket, Key, VersionId: 'bogus' })))).toMatchObject({ status: 400, code: 'InvalidArgument' });

    const listed = await s3.send(new ListObjectVersionsCommand({ Bucket }));
    expect(listed.Versions!.map((v) => [v.VersionId, v.IsLatest, v.Size])).toEqual([
      [v2, false, 4],
      [v1, false, 3],
    ]);
    expect(listed.DeleteMarkers!.map((m) => [m.Key, m.VersionId, m.IsLatest])).toEqual([[Key, marker, true]]);

    // Removing the marker brings v2 back; removing v2 for good then makes v1 current.
    const unmarked = await s3.send(new DeleteObjectCommand({ Bucket, Key, VersionId: marker }));
    expect(unmarked.DeleteMarker).toBe(true);
    expect(await text((await s3.send(new GetObjectCommand({ Bucket, Key }))).Body)).toBe('two!');
    await s3.send(new DeleteObjectCommand({ Bucket, Key, VersionId: v2 }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket, Key }))).Body)).toBe('one');

    // CopyObject from an old version names it in x-amz-copy-source-version-id.
    const copied = await s3.send(new CopyObjectCommand({ Bucket, Key: 'copy.txt', CopySource: `${Bucket}/${Key}?versionId=${v1}` }));
    expect(copied.CopySourceVersionId).toBe(v1);
    expect(await text((await s3.send(new GetObjectCommand({ Bucket, Key: 'copy.txt' }))).Body)).toBe('one');

    // DeleteObjects: a marker for one key, a version for good for another.
    await s3.send(new PutObjectCommand({ Bucket, Key: 'other.txt', Body: 'x' }));
    const batch = await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'other.txt' }, { Key, VersionId: v1 }] } }));
    const byKey = Object.fromEntries(batch.Deleted!.map((d) => [d.Key, d]));
    expect(byKey['other.txt']).toMatchObject({ DeleteMarker: true });
    expect(byKey[Key]).toMatchObject({ VersionId: v1 });
    expect((await s3.send(new ListObjectVersionsCommand({ Bucket, Prefix: Key }))).Versions ?? []).toEqual([]);
  });

  it('GetObjectAttributes and the object ACL by versionId, with the version named', async () => {
    const Bucket = await versionedBucket();
    const Key = 'attrs.txt';
    const v1 = (await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'one' }))).VersionId!;
    const v2 = (await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'two!' }))).VersionId!;
    const ObjectAttributes = ['ObjectSize' as const];
    const current = await s3.send(new GetObjectAttributesCommand({ Bucket, Key, ObjectAttributes }));
    expect([current.VersionId, current.ObjectSize]).toEqual([v2, 4]);
    const old = await s3.send(new GetObjectAttributesCommand({ Bucket, Key, VersionId: v1, ObjectAttributes }));
    expect([old.VersionId, old.ObjectSize]).toEqual([v1, 3]);
    const missingVersion = s3.send(new GetObjectAttributesCommand({ Bucket, Key, VersionId: 'f'.repeat(32), ObjectAttributes }));
    expect(await refusal(missingVersion)).toMatchObject({ status: 404, code: 'NoSuchVersion' });

    // A version's ACL is its bucket's, as the current one's; the ACL it has is taken, another is refused as S3 refuses ACLs.
    const acl = await s3.send(new GetObjectAclCommand({ Bucket, Key, VersionId: v1 }));
    expect(acl.Grants!.map((grant) => grant.Permission)).toEqual(['FULL_CONTROL']);
    await s3.send(new PutObjectAclCommand({ Bucket, Key, VersionId: v1, ACL: 'private' }));
    const publicRead = s3.send(new PutObjectAclCommand({ Bucket, Key, VersionId: v1, ACL: 'public-read' }));
    expect(await refusal(publicRead)).toMatchObject({ status: 400, code: 'AccessControlListNotSupported' });
    expect(await refusal(s3.send(new GetObjectAclCommand({ Bucket, Key, VersionId: 'f'.repeat(32) })))).toMatchObject({ status: 404, code: 'NoSuchVersion' });
  });

  it('a suspended bucket writes and deletes the null version', async () => {
    const Bucket = await versionedBucket('Enabled');
    const kept = (await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'kept' }))).VersionId!;
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Suspended' } }));
    // The null version is not named in the answer, as S3 answers a suspended bucket's write.
    expect((await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'n1' }))).VersionId).toBeUndefined();
    expect((await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'n2' }))).VersionId).toBeUndefined();
    expect((await s3.send(new HeadObjectCommand({ Bucket, Key: 'k' }))).VersionId).toBe('null');
    const versions = (await s3.send(new ListObjectVersionsCommand({ Bucket }))).Versions!;
    expect(versions.map((v) => v.VersionId)).toEqual(['null', kept]);
    const deleted = await s3.send(new DeleteObjectCommand({ Bucket, Key: 'k' }));
    expect(deleted).toMatchObject({ DeleteMarker: true, VersionId: 'null' });
    const after = await s3.send(new ListObjectVersionsCommand({ Bucket }));
    expect(after.Versions!.map((v) => v.VersionId)).toEqual([kept]);
    expect(after.DeleteMarkers!.map((m) => m.VersionId)).toEqual(['null']);
  });

  it('ListObjectVersions pages by key and version-id markers, and folds common prefixes', async () => {
    const Bucket = await versionedBucket();
    for (const Key of ['a/1', 'a/2', 'b', 'c']) {
      for (let i = 0; i < 3; i++) await s3.send(new PutObjectCommand({ Bucket, Key, Body: `${Key} ${i}` }));
    }
    const seen: string[] = [];
    let KeyMarker: string | undefined;
    let VersionIdMarker: string | undefined;
    for (;;) {
      const page = await s3.send(new ListObjectVersionsCommand({ Bucket, MaxKeys: 2, KeyMarker, VersionIdMarker }));
      seen.push(...(page.Versions ?? []).map((v) => `${v.Key}@${v.IsLatest ? 'latest' : 'old'}`));
      if (!page.IsTruncated) break;
      KeyMarker = page.NextKeyMarker;
      VersionIdMarker = page.NextVersionIdMarker;
    }
    expect(seen).toHaveLength(12);
    expect(seen.filter((s) => s.endsWith('latest'))).toEqual(['a/1@latest', 'a/2@latest', 'b@latest', 'c@latest']);
    const folded = await s3.send(new ListObjectVersionsCommand({ Bucket, Delimiter: '/' }));
    expect(folded.CommonPrefixes!.map((p) => p.Prefix)).toEqual(['a/']);
    expect(folded.Versions!.map((v) => v.Key)).toEqual(['b', 'b', 'b', 'c', 'c', 'c']);
  });
});

describe.skipIf(missing('AWS CLI', AWS))('the AWS CLI', () => {
  // A tool's paging over the door, the same on both backends: once, embedded. Paging by both markers runs on both above.
  it.runIf(backendKind() === 'embedded')(
    's3api list-object-versions lists 3,000 versions, paged',
    async () => {
      const Bucket = await versionedBucket();
      const writes = Array.from({ length: 3000 }, (_, i) => ({ Key: `k${i % 300}`, Body: `v${i}` }));
      // Small PUTs, 16 at a time.
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < writes.length) {
            const write = writes[next++]!;
            await s3.send(new PutObjectCommand({ Bucket, ...write }));
          }
        }),
      );
      const aws = await awsCli(await mkdtemp(path.join(os.tmpdir(), 'pail-aws-')), server.s3Url!, user, 120_000);
      const all = JSON.parse(ok(await aws(['s3api', 'list-object-versions', '--bucket', Bucket, '--page-size', '700']), 'list-object-versions'));
      expect(all.Versions).toHaveLength(3000);
      expect(new Set(all.Versions.map((v: { VersionId: string }) => v.VersionId)).size).toBe(3000);
      expect(all.Versions.filter((v: { IsLatest: boolean }) => v.IsLatest)).toHaveLength(300);
    },
    240_000,
  );
});
