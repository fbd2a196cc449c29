/**
 * The S3 API on two server processes sharing one PostgreSQL schema, one Redis
 * prefix and one S3 bucket: each instance has its own S3 port, and either
 * serves what the other made. A key revoked through one is refused by the
 * other's S3 port at once. Needs PAIL_TEST_BACKEND=scaled (the scaled project).
 */
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutBucketAclCommand,
  PutObjectCommand,
  PutPublicAccessBlockCommand,
  DeletePublicAccessBlockCommand,
  GetBucketVersioningCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendKind, scaledBackendEnv, type BackendEnv } from '../helpers/backends.js';
import { json, signUp, type TestUser } from '../helpers/client.js';
import { freePort } from '../helpers/server.js';
import { spawnServer, type ServerProcess } from './instances.js';
import { sdkClient } from '../helpers/s3-client.js';

interface Instance {
  server: ServerProcess;
  s3Url: string;
}

let backend: BackendEnv;
let a: Instance;
let b: Instance;

async function start(shared: Record<string, string>): Promise<Instance> {
  const s3Port = await freePort();
  const server = await spawnServer({ ...shared, S3_API_PORT: String(s3Port) });
  return { server, s3Url: `http://127.0.0.1:${s3Port}` };
}

beforeAll(async () => {
  if (backendKind() !== 'scaled') throw new Error('s3-two-instances.test.ts needs PAIL_TEST_BACKEND=scaled (run by the scaled project)');
  backend = await scaledBackendEnv();
  const shared = {
    ...backend.env,
    // One server secret: the S3 secrets are sealed under a key derived from it, and every instance opens them.
    SESSION_SECRET: randomBytes(32).toString('hex'),
    PLAN_FREE_RATE_LIMIT: '100000',
    PUBLIC_RATE_LIMIT: '100000',
    CLIENT_RATE_LIMIT: '100000',
    SIGNUP_RATE_LIMIT: '100000',
  };
  // One after the other: the first migrates the fresh schema (two-instances.test.ts covers the race).
  a = await start(shared);
  try {
    b = await start(shared);
  } catch (error) {
    await a.server.stop();
    throw error;
  }
}, 90_000);

afterAll(async () => {
  await Promise.all([a?.server.stop(), b?.server.stop()]);
  await backend?.cleanup();
});

function s3(instance: Instance, credentials: { accessKeyId: string; secretAccessKey: string }): S3Client {
  // As in s3-api.test.ts: no default aws-chunked checksum uploads (payload modes are tested there).
  return sdkClient(instance.s3Url, credentials, { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
}

const credentialsOf = (user: TestUser) => ({ accessKeyId: user.accessKeyId, secretAccessKey: user.secretAccessKey });

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode };
    throw error;
  }
  throw new Error('expected the command to fail');
}

describe('the S3 API on two server processes sharing PostgreSQL, Redis and S3', () => {
  it('a bucket created through A is listed through B; an object put through A reads the same through B; deleted through B, gone on A', async () => {
    const user = await signUp(a.server.url);
    const viaA = s3(a, credentialsOf(user));
    const viaB = s3(b, credentialsOf(user));
    const bucket = `two-${randomBytes(4).toString('hex')}`;
    await viaA.send(new CreateBucketCommand({ Bucket: bucket }));
    expect((await viaB.send(new ListBucketsCommand({}))).Buckets?.map((x) => x.Name)).toContain(bucket);

    const bytes = randomBytes(200_000);
    await viaA.send(new PutObjectCommand({ Bucket: bucket, Key: 'dir/café ☕.bin', Body: bytes, ContentType: 'application/x-test' }));
    const listed = await viaB.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'dir/' }));
    expect(listed.Contents?.map((o) => [o.Key, o.Size])).toEqual([['dir/café ☕.bin', bytes.length]]);
    const got = await viaB.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/café ☕.bin' }));
    expect(got.ContentType).toBe('application/x-test');
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(bytes)).toBe(true);

    await viaB.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'dir/café ☕.bin' }));
    expect(await s3Error(viaA.send(new HeadObjectCommand({ Bucket: bucket, Key: 'dir/café ☕.bin' })))).toMatchObject({ status: 404 });
    expect(await s3Error(viaA.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/café ☕.bin' })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
    expect((await viaA.send(new ListObjectsV2Command({ Bucket: bucket }))).KeyCount).toBe(0);
  });

  it('an object read through A, then replaced and deleted through B, is current on A at once', async () => {
    const user = await signUp(a.server.url);
    const viaA = s3(a, credentialsOf(user));
    const viaB = s3(b, credentialsOf(user));
    const bucket = `warm-${randomBytes(4).toString('hex')}`;
    await viaA.send(new CreateBucketCommand({ Bucket: bucket }));
    await viaA.send(new PutObjectCommand({ Bucket: bucket, Key: 'note.txt', Body: 'first' }));
    // Read through A, so whatever A keeps of it is warm.
    expect(await (await viaA.send(new GetObjectCommand({ Bucket: bucket, Key: 'note.txt' }))).Body!.transformToString()).toBe('first');
    await viaB.send(new PutObjectCommand({ Bucket: bucket, Key: 'note.txt', Body: 'second, longer' }));
    expect(await (await viaA.send(new GetObjectCommand({ Bucket: bucket, Key: 'note.txt' }))).Body!.transformToString()).toBe('second, longer');
    await viaB.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'note.txt' }));
    expect(await s3Error(viaA.send(new GetObjectCommand({ Bucket: bucket, Key: 'note.txt' })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
  });

  it('a multipart upload created and given its parts through A is listed and completed through B; the object reads the same on both', async () => {
    const user = await signUp(a.server.url);
    const viaA = s3(a, credentialsOf(user));
    const viaB = s3(b, credentialsOf(user));
    const bucket = `mp-${randomBytes(4).toString('hex')}`;
    const key = 'dir/parts é.bin';
    await viaA.send(new CreateBucketCommand({ Bucket: bucket }));
    const parts = [randomBytes(5 * 1024 * 1024), randomBytes(5 * 1024 * 1024), randomBytes(12_345)];
    const { UploadId } = await viaA.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: 'application/x-test' }));
    const etags: string[] = [];
    for (const [index, body] of parts.entries()) {
      etags.push((await viaA.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: index + 1, Body: body }))).ETag!);
    }
    const listed = await viaB.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId }));
    expect(listed.Parts?.map((p) => [p.PartNumber, p.Size, p.ETag])).toEqual(parts.map((body, index) => [index + 1, body.length, etags[index]]));

    const completed = await viaB.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
      }),
    );
    const md5s = Buffer.concat(parts.map((body) => createHash('md5').update(body).digest()));
    const etag = `"${createHash('md5').update(md5s).digest('hex')}-3"`;
    expect(completed.ETag).toBe(etag);
    const whole = Buffer.concat(parts);
    for (const via of [viaA, viaB]) {
      const got = await via.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      expect({ etag: got.ETag, type: got.ContentType, length: got.ContentLength }).toEqual({ etag, type: 'application/x-test', length: whole.length });
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(whole)).toBe(true);
    }
    // Finished on B: gone for A too.
    expect(await s3Error(viaA.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId })))).toEqual({ name: 'NoSuchUpload', status: 404 });
    // Completed again through A (an SDK's retry landing on another instance): the same answer, from the object's row.
    const again = await viaA.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
      }),
    );
    expect({ etag: again.ETag, key: again.Key }).toEqual({ etag, key });
    // Its parts' sizes are the object's, on either instance.
    const second = await viaA.send(new GetObjectCommand({ Bucket: bucket, Key: key, PartNumber: 2 }));
    expect({ range: second.ContentRange, count: second.PartsCount }).toEqual({
      range: `bytes ${5 * 1024 * 1024}-${10 * 1024 * 1024 - 1}/${whole.length}`,
      count: 3,
    });
    expect(Buffer.from(await second.Body!.transformToByteArray()).equals(parts[1]!)).toBe(true);
  });

  it('a key revoked through the Pail API on A is refused on B’s S3 port at once: 403 InvalidAccessKeyId', async () => {
    const user = await signUp(a.server.url);
    const created = await fetch(`${a.server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'to revoke' }),
    });
    expect(created.status).toBe(201);
    const key = (await json(created)).data as { id: number; access_key_id: string; secret_access_key: string };
    const viaB = s3(b, { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key });
    // Used on B (and on A) first, so whatever either keeps of it is warm.
    const bucket = `rev-${randomBytes(4).toString('hex')}`;
    await viaB.send(new CreateBucketCommand({ Bucket: bucket }));
    await s3(a, { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key }).send(new ListBucketsCommand({}));
    await viaB.send(new ListObjectsV2Command({ Bucket: bucket }));

    const revoked = await fetch(`${a.server.url}/api/keys/${key.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${user.token}` } });
    expect(revoked.status).toBe(200);
    expect(await s3Error(viaB.send(new ListObjectsV2Command({ Bucket: bucket })))).toEqual({ name: 'InvalidAccessKeyId', status: 403 });
    expect(await s3Error(viaB.send(new PutObjectCommand({ Bucket: bucket, Key: 'late.txt', Body: 'no' })))).toEqual({
      name: 'InvalidAccessKeyId',
      status: 403,
    });
    // The user's other key still works on B.
    expect((await s3(b, credentialsOf(user)).send(new ListBucketsCommand({}))).Buckets?.map((x) => x.Name)).toContain(bucket);
  });

  it('a public access block put through B hides a public bucket from anonymous reads on A at once, however warm A is; deleted through B, A serves it again', async () => {
    const user = await signUp(a.server.url);
    const viaA = s3(a, credentialsOf(user));
    const viaB = s3(b, credentialsOf(user));
    const bucket = `pab-${randomBytes(4).toString('hex')}`;
    await viaA.send(new CreateBucketCommand({ Bucket: bucket }));
    await viaA.send(new PutBucketAclCommand({ Bucket: bucket, ACL: 'public-read' }));
    await viaA.send(new PutObjectCommand({ Bucket: bucket, Key: 'open.txt', Body: 'for anyone' }));
    const listed = await fetch(`${a.server.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } });
    const id = ((await json(listed)).data as { id: number; name: string }[]).find((x) => x.name === bucket)!.id;
    const files = await fetch(`${a.server.url}/api/v1/buckets/${id}/files`, { headers: { 'x-api-key': user.apiKey } });
    const url = ((await json(files)).data as { url: string }[])[0]!.url;
    const anonymousS3 = `${a.s3Url}/${new URL(url).pathname.split('/')[2]}/open.txt`;
    // Read anonymously through A, so whatever A keeps of it is warm.
    expect((await fetch(anonymousS3)).status).toBe(200);
    expect((await fetch(url)).status).toBe(200);

    await viaB.send(new PutPublicAccessBlockCommand({ Bucket: bucket, PublicAccessBlockConfiguration: { IgnorePublicAcls: true } }));
    expect((await fetch(anonymousS3)).status).toBe(403);
    expect((await fetch(url)).status).toBe(401);
    expect(await (await viaA.send(new GetObjectCommand({ Bucket: bucket, Key: 'open.txt' }))).Body!.transformToString()).toBe('for anyone');

    await viaB.send(new DeletePublicAccessBlockCommand({ Bucket: bucket }));
    expect((await fetch(anonymousS3)).status).toBe(200);
    expect((await fetch(url)).status).toBe(200);
  });

  it('versioned writes racing through A and B make one version history: every version kept, exactly one latest, counts exact on both', async () => {
    const user = await signUp(a.server.url);
    const [onA, onB] = [s3(a, credentialsOf(user)), s3(b, credentialsOf(user))];
    const Bucket = `ver-${randomBytes(4).toString('hex')}`;
    await onA.send(new CreateBucketCommand({ Bucket }));
    await onA.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    expect((await onB.send(new GetBucketVersioningCommand({ Bucket }))).Status).toBe('Enabled');
    const ids = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => (await (i % 2 ? onA : onB).send(new PutObjectCommand({ Bucket, Key: 'k', Body: `v${i}` }))).VersionId!),
    );
    await onB.send(new DeleteObjectCommand({ Bucket, Key: 'k' }));
    for (const client of [onA, onB]) {
      const listed = await client.send(new ListObjectVersionsCommand({ Bucket }));
      expect(new Set(listed.Versions!.map((v) => v.VersionId))).toEqual(new Set(ids));
      expect(listed.Versions!.filter((v) => v.IsLatest)).toHaveLength(0);
      expect(listed.DeleteMarkers!.filter((m) => m.IsLatest)).toHaveLength(1);
    }
    const buckets = (await json(await fetch(`${b.server.url}/api/v1/buckets`, { headers: { authorization: `Bearer ${user.apiKey}` } }))).data;
    const bucket = buckets.find((found: { name: string }) => found.name === Bucket);
    expect(bucket).toMatchObject({ object_count: 0, total_bytes: 10 * 2 + 10 * 3, noncurrent_bytes: 50 });
  });
});
