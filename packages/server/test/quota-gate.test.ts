/**
 * One quota gate (issue 33): every upload door asks the same rule, which
 * counts stored bytes, kept multipart parts, resumable uploads and uploads in
 * flight, small files included; a refusal at any byte ends its own request
 * with the cap's error and never the process; a multipart form with more than
 * one file stores nothing.
 */
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendKind } from './helpers/backends.js';
import { json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const MiB = 1024 * 1024;
const CAP_MESSAGE = /^Storage limit exceeded: the free plan allows 1 MiB/;

let server: TestServer;
/** Errors nothing caught: each would have ended a server running alone. */
const uncaught: unknown[] = [];
const onUncaught = (error: unknown) => uncaught.push(error);

beforeAll(async () => {
  process.on('uncaughtException', onUncaught);
  // Room for every racing upload to be in flight at once: the cap alone decides who is refused.
  server = await startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(MiB), MAX_UPLOADS_PER_USER: '100' } });
});
afterAll(async () => {
  process.off('uncaughtException', onUncaught);
  await server?.close();
});

async function newBucket(user: TestUser): Promise<{ id: number; name: string }> {
  const response = await fetch(`${server.url}/api/v1/buckets`, {
    method: 'POST',
    headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `quota-${randomBytes(5).toString('hex')}` }),
  });
  const bucket = (await json(response)).data;
  return { id: bucket.id, name: bucket.name };
}

const put = (user: TestUser, bucket: number, name: string, bytes: Uint8Array<ArrayBuffer>) =>
  fetch(`${server.url}/api/v1/buckets/${bucket}/files/${name}`, { method: 'PUT', headers: { 'x-api-key': user.apiKey }, body: bytes });

function postFiles(user: TestUser, bucket: number, files: { name: string; bytes: Uint8Array<ArrayBuffer> }[]) {
  const form = new FormData();
  for (const file of files) form.append('file', new Blob([file.bytes]), file.name);
  return fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { method: 'POST', headers: { 'x-api-key': user.apiKey }, body: form });
}

async function signedPut(user: TestUser, bucket: number, name: string, bytes: Uint8Array<ArrayBuffer>): Promise<Response> {
  const signed = await fetch(`${server.url}/api/v1/buckets/${bucket}/files/${name}/signed-url`, {
    method: 'POST',
    headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'PUT' }),
  });
  expect(signed.status).toBe(201);
  return fetch((await json(signed)).data.url, { method: 'PUT', body: bytes });
}

/** A presigned POST form as a browser page sends it: the fields, then the file. */
function postForm(form: { url: string; fields: Record<string, string> }, bytes: Uint8Array<ArrayBuffer>): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries(form.fields)) body.append(name, value);
  body.append('file', new Blob([bytes]), 'form.bin');
  return fetch(form.url, { method: 'POST', body, redirect: 'manual' });
}

async function listed(user: TestUser, bucket: number): Promise<{ filename: string; size: number; storage_name: string }[]> {
  return (await json(await fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { headers: { 'x-api-key': user.apiKey } }))).data;
}

async function usedBytes(user: TestUser): Promise<number> {
  return (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;
}

/** How many blob files a bucket's directory holds (the embedded store). */
async function blobFiles(bucketDir: string): Promise<number> {
  return (await readdir(path.join(server.dataDir, 'blobs', bucketDir))).length;
}

async function s3Refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return error.name;
    throw error;
  }
  return 'stored';
}

describe('uploads racing into the cap', () => {
  it('20 PUTs and multipart POSTs of 150,000 bytes under a 1 MiB cap: each 201 or 409, the count exact, the process alive', async () => {
    for (let round = 0; round < 3; round++) {
      const user = await signUp(server.url);
      const bucket = await newBucket(user);
      const bytes = new Uint8Array(randomBytes(150_000));
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0 ? put(user, bucket.id, `put-${i}.bin`, bytes) : postFiles(user, bucket.id, [{ name: `post-${i}.bin`, bytes }]),
        ),
      );
      const bodies = await Promise.all(responses.map((response) => json(response)));
      responses.forEach((response, i) => {
        expect([201, 409], JSON.stringify(bodies[i])).toContain(response.status);
        if (response.status === 409) expect(bodies[i].error).toMatch(CAP_MESSAGE);
      });
      const files = await listed(user, bucket.id);
      expect(files.length).toBe(responses.filter((response) => response.status === 201).length);
      const sum = files.reduce((total, file) => total + file.size, 0);
      expect(await usedBytes(user)).toBe(sum);
      expect(sum).toBeLessThanOrEqual(MiB);
      // No refused upload left bytes behind: the bucket's directory holds the listed files' blobs alone.
      if (backendKind() === 'embedded') expect(await blobFiles(path.dirname(files[0]!.storage_name))).toBe(files.length);
      // Every refused upload gave back what it held: the rest of the cap takes a file to the byte.
      expect((await put(user, bucket.id, 'rest.bin', new Uint8Array(MiB - sum))).status).toBe(201);
    }
    expect(uncaught).toEqual([]);
  });
});

describe('every door asks the same cap, small files too', () => {
  it('a kept 1,000,000-byte part fills the holdings: PutObject, PUT, POST, signed PUT, CopyObject and POST Object are refused', async () => {
    const user = await signUp(server.url);
    const bucket = await newBucket(user);
    const s3 = sdkClient(server.s3Url!, user);
    const small = (size: number) => new Uint8Array(randomBytes(size));
    expect((await put(user, bucket.id, 'source.bin', small(40_000))).status).toBe(201);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket.name, Key: 'big.bin' }));
    await s3.send(new UploadPartCommand({ Bucket: bucket.name, Key: 'big.bin', UploadId, PartNumber: 1, Body: small(1_000_000) }));
    // 40,000 stored + 1,000,000 kept: what is left of the cap fits to the byte, and then nothing more.
    const left = MiB - 1_040_000;
    await s3.send(new PutObjectCommand({ Bucket: bucket.name, Key: 'last.bin', Body: small(left) }));

    for (let i = 0; i < 3; i++)
      expect(await s3Refusal(s3.send(new PutObjectCommand({ Bucket: bucket.name, Key: `s3-${i}.bin`, Body: small(60_000) })))).toBe('QuotaExceeded');
    expect(await s3Refusal(s3.send(new PutObjectCommand({ Bucket: bucket.name, Key: 'one-byte.bin', Body: small(1) })))).toBe('QuotaExceeded');
    expect(await s3Refusal(s3.send(new CopyObjectCommand({ Bucket: bucket.name, Key: 'copy.bin', CopySource: `${bucket.name}/source.bin` })))).toBe(
      'QuotaExceeded',
    );
    const refusedByPail = [
      await put(user, bucket.id, 'put.bin', small(60_000)),
      await postFiles(user, bucket.id, [{ name: 'post.bin', bytes: small(60_000) }]),
      await signedPut(user, bucket.id, 'signed.bin', small(60_000)),
    ];
    for (const response of refusedByPail) {
      expect(response.status).toBe(409);
      expect((await json(response)).error).toMatch(CAP_MESSAGE);
    }
    const form = await createPresignedPost(s3, { Bucket: bucket.name, Key: 'form.bin' });
    const posted = await postForm(form, small(60_000));
    expect(posted.status).toBe(403);
    expect(await posted.text()).toContain('<Code>QuotaExceeded</Code>');

    expect((await listed(user, bucket.id)).map((file) => file.filename).sort()).toEqual(['last.bin', 'source.bin']);
    expect(await usedBytes(user)).toBe(40_000 + left);
    // The part given up, its bytes are free again.
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket.name, Key: 'big.bin', UploadId }));
    expect((await put(user, bucket.id, 'put.bin', small(60_000))).status).toBe(201);
  });
});

describe('a multipart form with more than one file', () => {
  it.each([
    ['small', 1_000],
    ['large', 150_000],
  ])('three file parts (the first %s): 400, and nothing is stored or counted', async (_kind, size) => {
    const user = await signUp(server.url);
    const bucket = await newBucket(user);
    const files = ['a.bin', 'b.bin', 'c.bin'].map((name) => ({ name, bytes: new Uint8Array(randomBytes(size)) }));
    const response = await postFiles(user, bucket.id, files);
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatch(/^Too many files/);
    expect(await listed(user, bucket.id)).toEqual([]);
    expect(await usedBytes(user)).toBe(0);
    // One file in the same form is stored as ever.
    expect((await postFiles(user, bucket.id, files.slice(0, 1))).status).toBe(201);
    expect((await listed(user, bucket.id)).map((file) => file.filename)).toEqual(['a.bin']);
  });
});
