/**
 * Unfinished uploads are visible (decisions.md, "Plans, storage caps, rate
 * limits"; issue 33, finding 11): a user's resumable and S3 multipart uploads
 * are listed with the bytes each holds, on both APIs, within a key's limits;
 * the user record shows them as storage_held_bytes; cancelling one ends it as
 * its own door would, and what it held is free again.
 */
import { CreateMultipartUploadCommand, ListPartsCommand, S3ServiceException, UploadPartCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const CAP = 8 * MiB;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(CAP) } });
});
afterAll(() => server?.close());

const TUS = { 'tus-resumable': '1.0.0' };

async function makeBucket(user: TestUser): Promise<{ id: number; name: string }> {
  const created = await devApi(server.url, user)('', { method: 'POST', body: JSON.stringify({ name: `held-${randomBytes(4).toString('hex')}` }) });
  return (await json(created)).data;
}

/** A resumable upload of `length` bytes with `sent` of them received; returns its url. */
async function resumable(user: TestUser, bucketId: number, length: number, sent: number): Promise<string> {
  const endpoint = `${server.url}/api/v1/buckets/${bucketId}/uploads`;
  const created = await fetch(endpoint, {
    method: 'POST',
    headers: { ...TUS, 'x-api-key': user.apiKey, 'upload-length': String(length), 'upload-metadata': `filename ${Buffer.from('big.bin').toString('base64')}` },
  });
  expect(created.status).toBe(201);
  const url = new URL(created.headers.get('location')!, endpoint).href;
  const patched = await fetch(url, {
    method: 'PATCH',
    headers: { ...TUS, 'x-api-key': user.apiKey, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: randomBytes(sent),
  });
  expect(patched.status).toBe(204);
  return url;
}

/** An S3 multipart upload with one kept part of `partBytes`; returns its id. */
async function multipart(user: TestUser, bucketName: string, partBytes: number): Promise<string> {
  const s3 = sdkClient(server.s3Url!, user);
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucketName, Key: 'dir/parts.bin' }));
  await s3.send(new UploadPartCommand({ Bucket: bucketName, Key: 'dir/parts.bin', UploadId, PartNumber: 1, Body: randomBytes(partBytes) }));
  return UploadId!;
}

const me = async (user: TestUser) => (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;

const listDev = (key: string, query = '') => fetch(`${server.url}/api/v1/uploads${query}`, { headers: { 'x-api-key': key } });
const cancelDev = (key: string, kind: string, id: string) =>
  fetch(`${server.url}/api/v1/uploads/${kind}/${id}`, { method: 'DELETE', headers: { 'x-api-key': key } });

async function limitedKey(user: TestUser, limits: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${server.url}/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'limited', ...limits }),
  });
  expect(response.status).toBe(201);
  return (await json(response)).data.key;
}

describe('unfinished uploads', () => {
  it('are listed with the bytes each holds, on both APIs, and the user record shows them as held', async () => {
    const user = await signUp(server.url);
    const [a, b] = [await makeBucket(user), await makeBucket(user)];
    const url = await resumable(user, a.id, 3 * MiB, 100 * KiB);
    const uploadId = await multipart(user, b.name, MiB);

    const account = await me(user);
    expect(account.storage_used_bytes).toBe(0);
    expect(account.storage_held_bytes).toBe(4 * MiB);

    const listed = await listDev(user.apiKey);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('ratelimit-remaining')).not.toBeNull();
    const body = await json(listed);
    expect(body.held_bytes).toBe(4 * MiB);
    const byKind = Object.fromEntries(body.data.map((upload: { kind: string }) => [upload.kind, upload]));
    expect(byKind.resumable).toMatchObject({
      id: url.split('/').pop(),
      bucket_id: a.id,
      bucket_name: a.name,
      filename: 'big.bin',
      held_bytes: 3 * MiB,
      received_bytes: 100 * KiB,
      length: 3 * MiB,
      offset: 100 * KiB,
      parts: null,
    });
    expect(byKind.multipart).toMatchObject({
      id: uploadId,
      bucket_id: b.id,
      bucket_name: b.name,
      filename: 'dir/parts.bin',
      held_bytes: MiB,
      received_bytes: MiB,
      length: null,
      offset: null,
      parts: 1,
    });

    const client = await json(await fetch(`${server.url}/api/uploads`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(client).toEqual(body);
    const oneBucket = await json(await listDev(user.apiKey, `?bucket=${b.id}`));
    expect(oneBucket.data.map((upload: { id: string }) => upload.id)).toEqual([uploadId]);
    const badBucket = await listDev(user.apiKey, '?bucket=photos');
    expect(badBucket.status).toBe(400);
    expect((await json(badBucket)).error).toMatch(/bucket/);
  });

  it('cancelling frees what they held: the cap admits what it refused before, and the upload is gone from its door', async () => {
    const user = await signUp(server.url);
    const [a, b] = [await makeBucket(user), await makeBucket(user)];
    const url = await resumable(user, a.id, 5 * MiB, 10 * KiB);
    const uploadId = await multipart(user, b.name, 2 * MiB);
    const dev = devApi(server.url, user);

    // 5 + 2 MiB held under an 8 MiB cap: a 2 MiB file does not fit.
    const refused = await dev(`/${a.id}/files/two.bin`, { method: 'PUT', body: randomBytes(2 * MiB) });
    expect(refused.status).toBe(409);

    const cancelled = await cancelDev(user.apiKey, 'resumable', url.split('/').pop()!);
    expect(cancelled.status).toBe(200);
    expect((await json(cancelled)).data).toMatchObject({ kind: 'resumable', held_bytes: 5 * MiB });
    expect((await fetch(url, { method: 'HEAD', headers: { ...TUS, 'x-api-key': user.apiKey } })).status).toBe(404);
    expect((await me(user)).storage_held_bytes).toBe(2 * MiB);

    const byClient = await fetch(`${server.url}/api/uploads/multipart/${uploadId}`, { method: 'DELETE', headers: { authorization: `Bearer ${user.token}` } });
    expect(byClient.status).toBe(200);
    const parts = sdkClient(server.s3Url!, user).send(new ListPartsCommand({ Bucket: b.name, Key: 'dir/parts.bin', UploadId: uploadId }));
    await expect(parts).rejects.toSatisfy((error) => error instanceof S3ServiceException && error.name === 'NoSuchUpload');
    expect(await me(user)).toMatchObject({ storage_held_bytes: 0, storage_used_bytes: 0 });
    expect((await json(await listDev(user.apiKey))).data).toEqual([]);

    expect((await dev(`/${a.id}/files/two.bin`, { method: 'PUT', body: randomBytes(2 * MiB) })).status).toBe(201);
    // Already ended: 404, once more.
    const again = await cancelDev(user.apiKey, 'multipart', uploadId);
    expect(again.status).toBe(404);
    expect((await json(again)).error).toMatch(/Upload not found/);
  });

  it("a key sees and cancels only its buckets' uploads; cancelling needs write; another user sees none", async () => {
    const user = await signUp(server.url);
    const [a, b] = [await makeBucket(user), await makeBucket(user)];
    const url = await resumable(user, a.id, MiB, KiB);
    const resumableId = url.split('/').pop()!;
    const uploadId = await multipart(user, b.name, 64 * KiB);

    const onlyA = await limitedKey(user, { buckets: [a.id] });
    expect((await json(await listDev(onlyA))).data.map((upload: { id: string }) => upload.id)).toEqual([resumableId]);
    expect((await json(await listDev(onlyA, `?bucket=${b.id}`))).data).toEqual([]);
    expect((await cancelDev(onlyA, 'multipart', uploadId)).status).toBe(404);

    const readOnly = await limitedKey(user, { permissions: ['read'] });
    expect((await json(await listDev(readOnly))).data).toHaveLength(2);
    const forbidden = await cancelDev(readOnly, 'resumable', resumableId);
    expect(forbidden.status).toBe(403);

    const stranger = await signUp(server.url);
    expect((await json(await listDev(stranger.apiKey))).data).toEqual([]);
    expect((await cancelDev(stranger.apiKey, 'resumable', resumableId)).status).toBe(404);
    expect((await cancelDev(stranger.apiKey, 'multipart', uploadId)).status).toBe(404);
    expect((await cancelDev(user.apiKey, 'other', uploadId)).status).toBe(400);

    // Nothing was cancelled by the refusals.
    expect((await me(user)).storage_held_bytes).toBe(MiB + 64 * KiB);
    expect((await cancelDev(onlyA, 'resumable', resumableId)).status).toBe(200);
    expect((await me(user)).storage_held_bytes).toBe(64 * KiB);
  });
});
