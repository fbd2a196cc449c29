/**
 * Unfinished uploads through the SDK, against a real server: a resumable
 * upload left half sent is listed with what it holds, within a key's limits,
 * and cancelled; cancelling needs write, and one that ended is NotFoundError.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { ForbiddenError, NotFoundError, Pail, type StorageBucket } from '../src/index.js';

let server: TestServer;
let user: TestUser;
let owner: Pail;
let bucketA: StorageBucket;
let bucketB: StorageBucket;

const TUS = { 'tus-resumable': '1.0.0' };

/** A resumable upload of `length` bytes with its first `sent` received; returns its id. */
async function halfSent(bucket: StorageBucket, length: number, sent: number): Promise<string> {
  const endpoint = `${server.url}/api/v1/buckets/${bucket.id}/uploads`;
  const created = await fetch(endpoint, {
    method: 'POST',
    headers: { ...TUS, 'x-api-key': user.apiKey, 'upload-length': String(length), 'upload-metadata': `filename ${btoa('half.bin')}` },
  });
  const url = new URL(created.headers.get('location')!, endpoint).href;
  const patched = await fetch(url, {
    method: 'PATCH',
    headers: { ...TUS, 'x-api-key': user.apiKey, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: new Uint8Array(sent),
  });
  expect(patched.status).toBe(204);
  return url.split('/').pop()!;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server.url);
  owner = new Pail({ baseUrl: server.url, apiKey: user.apiKey, sessionToken: user.token });
  bucketA = await owner.createBucket('unfinished-a');
  bucketB = await owner.createBucket('unfinished-b');
});

afterAll(async () => {
  await server?.close();
});

describe('unfinished uploads', () => {
  it('lists them with what each holds, within the key’s buckets, and cancels one', async () => {
    const inA = await halfSent(bucketA, 4000, 1000);
    const inB = await halfSent(bucketB, 3000, 0);

    const all = await owner.listUnfinishedUploads();
    expect(all.heldBytes).toBe(7000);
    expect(all.uploads.map((upload) => upload.id).sort()).toEqual([inA, inB].sort());
    expect(all.uploads.find((upload) => upload.id === inA)).toMatchObject({
      kind: 'resumable',
      bucket_id: bucketA.id,
      bucket_name: 'unfinished-a',
      filename: 'half.bin',
      held_bytes: 4000,
      received_bytes: 1000,
      length: 4000,
      offset: 1000,
    });
    expect((await owner.listUnfinishedUploads({ bucket: bucketB.id })).uploads.map((upload) => upload.id)).toEqual([inB]);

    const onlyA = new Pail({ baseUrl: server.url, apiKey: (await owner.createKey({ buckets: [bucketA.id] })).key });
    expect((await onlyA.listUnfinishedUploads()).uploads.map((upload) => upload.id)).toEqual([inA]);
    expect(await rejection(onlyA.cancelUnfinishedUpload('resumable', inB))).toBeInstanceOf(NotFoundError);

    const reader = new Pail({ baseUrl: server.url, apiKey: (await owner.createKey({ permissions: ['read'] })).key });
    expect(await rejection(reader.cancelUnfinishedUpload('resumable', inA))).toBeInstanceOf(ForbiddenError);

    expect(await owner.cancelUnfinishedUpload('resumable', inA)).toMatchObject({ id: inA, held_bytes: 4000 });
    expect(await rejection(owner.cancelUnfinishedUpload('resumable', inA))).toBeInstanceOf(NotFoundError);
    expect(await owner.listUnfinishedUploads()).toMatchObject({ heldBytes: 3000, uploads: [{ id: inB }] });
  });
});
