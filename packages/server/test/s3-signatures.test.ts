/**
 * Signature V4's canonical request as AWS builds it, checked against requests
 * the server must accept: keys with reserved and non-ASCII characters, query
 * keys out of order and repeated, header values with runs of spaces; and
 * Pail's rules through S3 that s3-api.test.ts does not cover: the single-file
 * cap, and a key limited to one bucket.
 */
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

const MAX_FILE_BYTES = 100_000;

let server: TestServer;
let s3Url: string;
let alice: TestUser;
let s3: S3Client;
let bucket: string;

function clientFor(accessKeyId: string, secretAccessKey: string): S3Client {
  return sdkClient(s3Url, { accessKeyId, secretAccessKey }, { region: 'eu-west-3' });
}

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { MAX_FILE_BYTES: String(MAX_FILE_BYTES) } });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3Url = server.s3Url;
  alice = await signUp(server.url);
  // Any region in the signature is accepted.
  s3 = clientFor(alice.accessKeyId, alice.secretAccessKey);
  bucket = `sig-${Date.now().toString(36)}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
});
afterAll(() => server.close());

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode };
    throw error;
  }
  throw new Error('expected the command to fail');
}

const bytes = (data: string | ArrayBuffer | ArrayBufferView): Buffer =>
  typeof data === 'string' ? Buffer.from(data) : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);

/** The hash @smithy/signature-v4 signs with, from node:crypto. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
  reset(): void {}
}

/**
 * A request signed by @smithy/signature-v4 over `query` and `headers`, then
 * sent with the query string exactly as `rawQuery` writes it (order and
 * repetition as a client might send them).
 */
async function signedFetch(method: string, path: string, query: Record<string, string | string[]>, rawQuery: string, headers: Record<string, string> = {}) {
  const url = new URL(`${s3Url}${path}`);
  const signer = new SignatureV4({
    credentials: { accessKeyId: alice.accessKeyId, secretAccessKey: alice.secretAccessKey },
    region: 'us-east-1',
    service: 's3',
    sha256: NodeSha256,
  });
  const signed = await signer.sign({
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query,
    headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers },
  });
  return fetch(`${s3Url}${path}${rawQuery}`, { method, headers: signed.headers as Record<string, string> });
}

describe('canonical requests as AWS builds them', () => {
  it.each([
    ['reserved characters', "weird/a+b=c&d !'()*~$@,;:.txt"],
    ['non-ASCII', 'ünïcödé/日本語 ファイル.txt'],
    ['percent and plus', 'p/100%+more%2Fnot-a-slash.txt'],
    ['emoji and tilde', '~/😀 ☕ café.txt'],
  ])('keys with %s round-trip through PutObject, GetObject and listings', async (_name, key) => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `bytes of ${key}` }));
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect(await got.Body!.transformToString()).toBe(`bytes of ${key}`);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual([key]);
  });

  it('query keys sent out of order, and a repeated key, are sorted as the signer sorted them', async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'q/one.txt', Body: 'one' }));
    const listing = await signedFetch(
      'GET',
      `/${bucket}`,
      { 'list-type': '2', prefix: 'q/', delimiter: '/' },
      // Not in sorted order, as some clients send it.
      '?prefix=q%2F&list-type=2&delimiter=%2F',
    );
    expect(listing.status).toBe(200);
    expect(await listing.text()).toContain('<Key>q/one.txt</Key>');

    // x-id is what SDKs add; twice, with its values out of order.
    const repeated = await signedFetch('GET', `/${bucket}/q/one.txt`, { 'x-id': ['GetObject', 'Another'] }, '?x-id=GetObject&x-id=Another');
    expect(repeated.status).toBe(200);
    expect(await repeated.text()).toBe('one');
  });

  it('a signed header value with runs of spaces is signed collapsed, as AWS does', async () => {
    const response = await signedFetch('GET', `/${bucket}/q/one.txt`, {}, '', { 'x-amz-meta-note': '  spaced    out   value  ' });
    expect(response.status).toBe(200);
    // The same request with the header changed after signing is refused.
    const url = `${s3Url}/${bucket}/q/one.txt`;
    const signer = new SignatureV4({
      credentials: { accessKeyId: alice.accessKeyId, secretAccessKey: alice.secretAccessKey },
      region: 'us-east-1',
      service: 's3',
      sha256: NodeSha256,
    });
    const { host, pathname } = new URL(url);
    const signed = await signer.sign({
      method: 'GET',
      protocol: 'http:',
      hostname: '127.0.0.1',
      path: pathname,
      headers: { host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-meta-note': 'spaced out value' },
    });
    const altered = await fetch(url, { headers: { ...(signed.headers as Record<string, string>), 'x-amz-meta-note': 'spaced out values' } });
    expect(altered.status).toBe(403);
    expect(await altered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
  });
});

describe('listings with a delimiter other than /', () => {
  it('fold keys into CommonPrefixes by that delimiter, and page past each one, one entry at a time', async () => {
    const dashed = `sig-dash-${Date.now().toString(36)}`;
    await s3.send(new CreateBucketCommand({ Bucket: dashed }));
    for (const key of ['2026-01-a.txt', '2026-01-b.txt', '2026-02-a.txt', '2026-03.txt', 'z.txt']) {
      await s3.send(new PutObjectCommand({ Bucket: dashed, Key: key, Body: key }));
    }
    const whole = await s3.send(new ListObjectsV2Command({ Bucket: dashed, Prefix: '2026-', Delimiter: '-' }));
    expect(whole.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['2026-01-', '2026-02-']);
    expect(whole.Contents?.map((o) => o.Key)).toEqual(['2026-03.txt']);

    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: dashed, Delimiter: '-', MaxKeys: 1, ContinuationToken: token }));
      seen.push(...(page.CommonPrefixes ?? []).map((p) => `prefix ${p.Prefix}`), ...(page.Contents ?? []).map((o) => `key ${o.Key}`));
      token = page.NextContinuationToken;
    } while (token !== undefined);
    expect(seen).toEqual(['prefix 2026-', 'key z.txt']);
  });
});

describe("Pail's rules through S3", () => {
  it('an object over the single-file cap is 400 EntityTooLarge and nothing is stored', async () => {
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'big.bin', Body: Buffer.alloc(MAX_FILE_BYTES + 1) })))).toEqual({
      name: 'EntityTooLarge',
      status: 400,
    });
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'big.bin' }))).KeyCount).toBe(0);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'fits.bin', Body: Buffer.alloc(MAX_FILE_BYTES) }));
  });

  it('a key limited to one bucket sees only it: another is NoSuchBucket, ListBuckets lists one, CreateBucket is refused', async () => {
    const other = `sig-other-${Date.now().toString(36)}`;
    await s3.send(new CreateBucketCommand({ Bucket: other }));
    const buckets = (await json(await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': alice.apiKey } }))).data as {
      id: number;
      name: string;
    }[];
    const mine = buckets.find((b) => b.name === bucket)!;
    const created = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'one bucket', buckets: [mine.id] }),
    });
    expect(created.status).toBe(201);
    const key = (await json(created)).data as { access_key_id: string; secret_access_key: string };
    const limited = clientFor(key.access_key_id, key.secret_access_key);

    expect((await limited.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toEqual([bucket]);
    expect((await limited.send(new GetObjectCommand({ Bucket: bucket, Key: 'q/one.txt' }))).$metadata.httpStatusCode).toBe(200);
    expect(await s3Error(limited.send(new ListObjectsV2Command({ Bucket: other })))).toEqual({ name: 'NoSuchBucket', status: 404 });
    expect(await s3Error(limited.send(new PutObjectCommand({ Bucket: other, Key: 'x.txt', Body: 'x' })))).toEqual({ name: 'NoSuchBucket', status: 404 });
    expect((await s3Error(limited.send(new CreateBucketCommand({ Bucket: `sig-new-${Date.now().toString(36)}` })))).status).toBe(403);
  });
});
