/**
 * S3 Block Public Access per bucket (issue 35): PutPublicAccessBlock,
 * GetPublicAccessBlock, DeletePublicAccessBlock through the AWS SDK, and
 * what the switches do on every door (domain/public-access.ts):
 * BlockPublicAcls refuses making the bucket public (S3's PutBucketAcl and
 * the Pail API's visibility update); IgnorePublicAcls and
 * RestrictPublicBuckets serve a public bucket as private to anyone without
 * its owner's credentials (unsigned S3 reads, /storage urls), while keys and
 * signed urls keep reading.
 */
import {
  DeletePublicAccessBlockCommand,
  GetObjectCommand,
  GetPublicAccessBlockCommand,
  PutBucketAclCommand,
  PutPublicAccessBlockCommand,
  type PublicAccessBlockConfiguration,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { signRequest } from './helpers/s3-signing.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let s3Url: string;
let alice: TestUser;
let bob: TestUser;
let s3: S3Client;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3Url = server.s3Url;
  alice = await signUp(server.url);
  bob = await signUp(server.url);
  s3 = sdkClient(s3Url, alice, { requestChecksumCalculation: 'WHEN_REQUIRED' });
});
afterAll(() => server.close());

/** The S3 error a command fails with, or a test failure when it succeeds. */
async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode, message: error.message };
    throw error;
  }
  throw new Error('expected the command to fail');
}

const dev = (path: string, init: RequestInit = {}, key = alice.apiKey) =>
  fetch(`${server.url}/api/v1/buckets${path}`, {
    ...init,
    headers: {
      'x-api-key': key,
      ...(typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}),
      ...(init.headers as Record<string, string>),
    },
  });

let bucketCount = 0;
/** A bucket made through the Pail API, holding `hello.txt`: its id, name, and the file's /storage url (whose first segment is the storage name). */
async function newBucket(visibility: 'public' | 'private'): Promise<{ id: number; name: string; url: string; storageName: string }> {
  const name = `pab-${++bucketCount}-${Date.now().toString(36)}`;
  const created = await dev('', { method: 'POST', body: JSON.stringify({ name, visibility }) });
  expect(created.status).toBe(201);
  const { id } = (await json(created)).data as { id: number };
  const uploaded = await dev(`/${id}/files/hello.txt`, { method: 'PUT', body: 'hello public', headers: { 'content-type': 'text/plain' } });
  expect(uploaded.status).toBe(201);
  const url = ((await json(await dev(`/${id}/files`))).data as { url: string }[])[0]!.url;
  const storageName = new URL(url).pathname.split('/')[2]!;
  return { id, name, url, storageName };
}

const ALL_OFF: PublicAccessBlockConfiguration = { BlockPublicAcls: false, IgnorePublicAcls: false, BlockPublicPolicy: false, RestrictPublicBuckets: false };
const putBlock = (bucket: string, switches: PublicAccessBlockConfiguration) =>
  s3.send(new PutPublicAccessBlockCommand({ Bucket: bucket, PublicAccessBlockConfiguration: switches }));

/** A raw PutPublicAccessBlock with any body, for what the SDK would not send. */
async function putRawBlock(bucket: string, body: string): Promise<Response> {
  const headers = await signRequest(s3Url, alice, 'PUT', `/${bucket}`, { publicAccessBlock: '' });
  return fetch(`${s3Url}/${bucket}?publicAccessBlock=`, { method: 'PUT', headers, body });
}

const visibilityOf = async (id: number): Promise<boolean> => ((await json(await dev(`/${id}`))).data as { public: boolean }).public;

describe('PutPublicAccessBlock, GetPublicAccessBlock, DeletePublicAccessBlock', () => {
  it('a bucket without one answers 404 NoSuchPublicAccessBlockConfiguration; deleting none is 204', async () => {
    const { name } = await newBucket('private');
    expect(await s3Error(s3.send(new GetPublicAccessBlockCommand({ Bucket: name })))).toEqual({
      name: 'NoSuchPublicAccessBlockConfiguration',
      status: 404,
      message: 'The public access block configuration was not found',
    });
    const deleted = await s3.send(new DeletePublicAccessBlockCommand({ Bucket: name }));
    expect(deleted.$metadata.httpStatusCode).toBe(204);
  });

  it('keeps the four switches as put, an absent one as false, and forgets them when deleted', async () => {
    const { name } = await newBucket('private');
    const switches = { BlockPublicAcls: true, IgnorePublicAcls: true, BlockPublicPolicy: true, RestrictPublicBuckets: false };
    expect((await putBlock(name, switches)).$metadata.httpStatusCode).toBe(200);
    expect((await s3.send(new GetPublicAccessBlockCommand({ Bucket: name }))).PublicAccessBlockConfiguration).toEqual(switches);

    // A second put replaces the whole configuration; a switch left out is false.
    await putBlock(name, { RestrictPublicBuckets: true });
    expect((await s3.send(new GetPublicAccessBlockCommand({ Bucket: name }))).PublicAccessBlockConfiguration).toEqual({
      ...ALL_OFF,
      RestrictPublicBuckets: true,
    });

    expect((await s3.send(new DeletePublicAccessBlockCommand({ Bucket: name }))).$metadata.httpStatusCode).toBe(204);
    expect(await s3Error(s3.send(new GetPublicAccessBlockCommand({ Bucket: name })))).toMatchObject({
      name: 'NoSuchPublicAccessBlockConfiguration',
      status: 404,
    });
  });

  it('refuses a body that is not a PublicAccessBlockConfiguration, or a switch that is neither true nor false, as 400 MalformedXML', async () => {
    const { name } = await newBucket('private');
    for (const body of [
      'not xml',
      '<CORSConfiguration></CORSConfiguration>',
      '<PublicAccessBlockConfiguration><BlockPublicAcls>yes</BlockPublicAcls></PublicAccessBlockConfiguration>',
    ]) {
      const response = await putRawBlock(name, body);
      expect(response.status, body).toBe(400);
      expect(await response.text(), body).toContain('<Code>MalformedXML</Code>');
    }
    // Nothing was kept.
    expect(await s3Error(s3.send(new GetPublicAccessBlockCommand({ Bucket: name })))).toMatchObject({ status: 404 });
    // An empty configuration is every switch off.
    expect((await putRawBlock(name, '<PublicAccessBlockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>')).status).toBe(200);
    expect((await s3.send(new GetPublicAccessBlockCommand({ Bucket: name }))).PublicAccessBlockConfiguration).toEqual(ALL_OFF);
  });

  it("is a bucket setting: a read key reads it, only a manage key changes it, and another owner's bucket does not exist", async () => {
    const { name } = await newBucket('private');
    const created = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'reader', permissions: ['read'] }),
    });
    const reader = (await json(created)).data as { access_key_id: string; secret_access_key: string };
    const readOnly = sdkClient(s3Url, { accessKeyId: reader.access_key_id, secretAccessKey: reader.secret_access_key });
    await putBlock(name, { BlockPublicAcls: true });
    expect((await readOnly.send(new GetPublicAccessBlockCommand({ Bucket: name }))).PublicAccessBlockConfiguration?.BlockPublicAcls).toBe(true);
    expect(await s3Error(readOnly.send(new PutPublicAccessBlockCommand({ Bucket: name, PublicAccessBlockConfiguration: ALL_OFF })))).toMatchObject({
      name: 'AccessDenied',
      status: 403,
    });
    expect(await s3Error(readOnly.send(new DeletePublicAccessBlockCommand({ Bucket: name })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    const bobs = sdkClient(s3Url, bob);
    expect(await s3Error(bobs.send(new GetPublicAccessBlockCommand({ Bucket: name })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
    expect((await s3.send(new GetPublicAccessBlockCommand({ Bucket: name }))).PublicAccessBlockConfiguration?.BlockPublicAcls).toBe(true);
  });
});

describe('BlockPublicAcls', () => {
  it('refuses making the bucket public on both doors: PutBucketAcl public-read is 403 AccessDenied, the Pail API 403 Forbidden', async () => {
    const { id, name } = await newBucket('private');
    await putBlock(name, { BlockPublicAcls: true });

    expect(await s3Error(s3.send(new PutBucketAclCommand({ Bucket: name, ACL: 'public-read' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    const answer = await dev(`/${id}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'public' }) });
    expect(answer.status).toBe(403);
    expect(await json(answer)).toEqual({
      error: "This bucket's public access block (BlockPublicAcls) forbids making it public; remove the block first",
      code: 'Forbidden',
    });
    const client = await fetch(`${server.url}/api/buckets/${id}/visibility`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ public: true }),
    });
    expect(client.status).toBe(403);
    expect(await visibilityOf(id)).toBe(false);

    // Private stays allowed; without the block, public is allowed again.
    expect((await s3.send(new PutBucketAclCommand({ Bucket: name, ACL: 'private' }))).$metadata.httpStatusCode).toBe(200);
    await putBlock(name, { BlockPublicPolicy: true });
    expect((await dev(`/${id}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'public' }) })).status).toBe(200);
    expect(await visibilityOf(id)).toBe(true);
  });
});

describe.each(['IgnorePublicAcls', 'RestrictPublicBuckets'] as const)('%s', (name) => {
  it("serves a public bucket as private to anyone without the owner's credentials, on both doors, until the block is deleted", async () => {
    const bucket = await newBucket('public');
    const anonymousS3 = `${s3Url}/${bucket.storageName}/hello.txt`;
    const signedUrl = await (async () => {
      const response = await dev(`/${bucket.id}/files/hello.txt/signed-url`, { method: 'POST', body: JSON.stringify({ method: 'GET', expires_in: 600 }) });
      expect(response.status).toBe(201);
      return (await json(response)).data.url as string;
    })();

    // Public: anyone reads it, by S3 and by its url; another account too.
    expect((await fetch(anonymousS3)).status).toBe(200);
    expect((await fetch(anonymousS3, { method: 'HEAD' })).status).toBe(200);
    const open = await fetch(bucket.url);
    expect(open.status).toBe(200);
    expect(open.headers.get('cache-control')).toBe('public, no-cache');
    expect((await fetch(bucket.url, { headers: { 'x-api-key': bob.apiKey } })).status).toBe(200);

    await putBlock(bucket.name, { [name]: true });

    const s3Refused = await fetch(anonymousS3);
    expect(s3Refused.status).toBe(403);
    expect(await s3Refused.text()).toContain('<Code>AccessDenied</Code>');
    expect((await fetch(anonymousS3, { method: 'HEAD' })).status).toBe(403);
    // The url answers as a private bucket's does: a credential is needed; another account's finds no bucket.
    const urlRefused = await fetch(bucket.url);
    expect(urlRefused.status).toBe(401);
    expect(await json(urlRefused)).toMatchObject({ code: 'Unauthorized' });
    expect((await fetch(bucket.url, { headers: { 'x-api-key': bob.apiKey } })).status).toBe(404);
    // The bucket is still public by its visibility; the block only hides it.
    expect(await visibilityOf(bucket.id)).toBe(true);

    // The owner's credentials still read: a signed S3 GET, its key on the url, a signed url.
    const owned = await s3.send(new GetObjectCommand({ Bucket: bucket.name, Key: 'hello.txt' }));
    expect(await owned.Body?.transformToString()).toBe('hello public');
    const keyed = await fetch(bucket.url, { headers: { 'x-api-key': alice.apiKey } });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('cache-control')).toBe('private, no-cache');
    expect(await keyed.text()).toBe('hello public');
    const signed = await fetch(signedUrl);
    expect(signed.status).toBe(200);
    expect(await signed.text()).toBe('hello public');

    await s3.send(new DeletePublicAccessBlockCommand({ Bucket: bucket.name }));
    const reopened = await fetch(anonymousS3);
    expect(reopened.status).toBe(200);
    expect(await reopened.text()).toBe('hello public');
    expect((await fetch(bucket.url)).status).toBe(200);
  });
});
