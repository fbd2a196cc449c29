/**
 * Everything else S3 has is 501 NotImplemented with S3's XML: never a 500,
 * and never a success that did nothing. The table of every such request
 * (helpers/s3-unsupported.ts) is classified without a server in
 * s3-operation-of.test.ts; here one real signed request of each kind goes
 * through the listener, then proof that none of them changed anything;
 * GetObjectTagging's empty tag set for an untagged object; and what is accepted because it
 * asks for nothing Pail lacks.
 */
import {
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';
import { oneOfEachKind, sweep, WRITE_HEADERS } from './helpers/s3-unsupported.js';

let server: TestServer;
let alice: TestUser;
let s3: S3Client;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  alice = await signUp(server.url);
  s3 = clientOf(alice.accessKeyId, alice.secretAccessKey);
});
afterAll(() => server.close());

function clientOf(accessKeyId: string, secretAccessKey: string): S3Client {
  return sdkClient(
    server.s3Url!,
    { accessKeyId, secretAccessKey },
    { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' },
  );
}

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode };
    throw error;
  }
  throw new Error('expected the command to fail');
}

const storageUsed = async (): Promise<number> =>
  (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${alice.token}` } }))).data.storage_used_bytes;

describe('the 501 sweep', () => {
  let bucket: string;
  let other: string;
  let etag: string;
  const original = 'the original bytes of kept.txt';
  beforeAll(async () => {
    const stamp = Date.now().toString(36);
    bucket = `ni-${stamp}`;
    other = `ni-other-${stamp}`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await s3.send(new CreateBucketCommand({ Bucket: other }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept.txt', Body: original, ContentType: 'text/plain', Metadata: { note: 'kept' } }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'source.txt', Body: 'the source of every copy' }));
    etag = (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'kept.txt' }))).ETag ?? '';
  });

  it('a request of each kind is 501 with <Code>NotImplemented</Code> in S3 XML, and none of them changed anything', async () => {
    const bucketsBefore = (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name);
    const keysBefore = async (name: string) => (await s3.send(new ListObjectsV2Command({ Bucket: name }))).Contents?.map((c) => [c.Key, c.ETag, c.Size]);
    const listedBefore = [await keysBefore(bucket), await keysBefore(other)];
    const usedBefore = await storageUsed();
    expect(usedBefore).toBeGreaterThan(0);

    const cases = sweep(bucket, other);
    expect(cases.length).toBeGreaterThan(100);
    // Every case is refused by operationOf before any handler runs (s3-operation-of.test.ts); one of each kind is sent here.
    const sent = oneOfEachKind(cases);
    expect(sent.map((c) => c.kind)).toEqual([
      'bucket subresource',
      'object subresource',
      'PutObject over an object',
      'PutObject of a new key',
      'CopyObject over an object',
      'CopyObject to another bucket',
      'CreateMultipartUpload',
    ]);
    const answers = [];
    for (const request of sent) {
      const answer = await signedFetch(request.method, request.path, request.body ?? '', request.headers);
      answers.push({ name: request.name, status: answer.status, code: /<Code>([^<]*)<\/Code>/.exec(answer.body)?.[1], body: answer.body });
    }
    // All at once, so a failure names every request that was not a 501.
    const wrong = answers.filter((a) => a.status !== 501 || a.code !== 'NotImplemented').map((a) => `${a.name}: ${a.status} ${a.code ?? a.body.slice(0, 80)}`);
    expect(wrong).toEqual([]);
    expect(answers.filter((a) => a.status >= 500 && a.status !== 501)).toEqual([]);
    for (const answer of answers) {
      expect(answer.body).toMatch(
        /^<\?xml version="1.0" encoding="UTF-8"\?>\n<Error><Code>NotImplemented<\/Code><Message>[^<]+ is not implemented by Pail yet<\/Message>/,
      );
    }

    // Nothing changed: the target's bytes, ETag and metadata, every listing, every bucket, no upload begun, the storage used.
    const kept = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'kept.txt' }));
    expect(await kept.Body?.transformToString()).toBe(original);
    expect(kept).toMatchObject({ ETag: etag, ContentType: 'text/plain', Metadata: { note: 'kept' } });
    expect([await keysBefore(bucket), await keysBefore(other)]).toEqual(listedBefore);
    expect((await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toEqual(bucketsBefore);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).toEqual([]);
    expect(await storageUsed()).toBe(usedBefore);
    // The bucket is still private: no ACL, policy or public-access change took.
    const objectUrl = `${server.s3Url}/${bucket}/kept.txt`;
    expect((await fetch(objectUrl)).status).toBe(403);
  }, 60_000);

  it('a browser form (POST Object) with any of those fields is 501 and stores nothing', async () => {
    const fields: Record<string, string>[] = Object.values(WRITE_HEADERS);
    for (const [index, extra] of fields.entries()) {
      const key = `form-${index}.txt`;
      const { url, fields: signed } = await createPresignedPost(s3, { Bucket: bucket, Key: key, Fields: extra, Expires: 600 });
      const form = new FormData();
      for (const [name, value] of Object.entries(signed)) form.append(name, value);
      form.append('file', new Blob(['form bytes']), 'form.txt');
      const answer = await fetch(url, { method: 'POST', body: form });
      const body = await answer.text();
      expect({ fields: extra, status: answer.status, code: /<Code>([^<]*)<\/Code>/.exec(body)?.[1] }).toEqual({
        fields: extra,
        status: 501,
        code: 'NotImplemented',
      });
      expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })))).toMatchObject({ status: 404 });
    }
  });
});

describe('GetObjectTagging', () => {
  it('is an empty tag set for a readable object, NoSuchKey for a missing one, and needs read permission', async () => {
    const bucket = `ni-tags-${Date.now().toString(36)}`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'dir/tagged é.txt', Body: 'bytes' }));
    const tagging = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'dir/tagged é.txt' }));
    expect(tagging.TagSet).toEqual([]);
    const raw = await signedFetch('GET', `/${bucket}/dir/tagged%20%C3%A9.txt?tagging`, '');
    expect(raw.status).toBe(200);
    expect(raw.headers['content-type']).toBe('application/xml');
    expect(raw.body).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet></TagSet></Tagging>');
    expect(await s3Error(s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'missing.txt' })))).toEqual({ name: 'NoSuchKey', status: 404 });
    expect(await s3Error(s3.send(new GetObjectTaggingCommand({ Bucket: `${bucket}-none`, Key: 'x.txt' })))).toEqual({ name: 'NoSuchBucket', status: 404 });

    const key = await json(
      await fetch(`${server.url}/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'write only', permissions: ['write'] }),
      }),
    );
    const writeOnly = clientOf(key.data.access_key_id, key.data.secret_access_key);
    expect(await s3Error(writeOnly.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'dir/tagged é.txt' })))).toMatchObject({
      name: 'AccessDenied',
      status: 403,
    });
  });
});

describe('what is accepted, because it asks for nothing Pail lacks', () => {
  it('x-amz-storage-class STANDARD, an empty x-amz-tagging, and a copy with the tagging directive COPY (or REPLACE by no tags)', async () => {
    const bucket = `ni-ok-${Date.now().toString(36)}`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'standard.txt', Body: 'standard', StorageClass: 'STANDARD' }));
    expect((await signedFetch('PUT', `/${bucket}/untagged.txt`, 'untagged', { 'x-amz-tagging': '' })).status).toBe(200);
    const copySource = `${bucket}/standard.txt`;
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy.txt', CopySource: copySource, TaggingDirective: 'COPY' }));
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'replaced.txt', CopySource: copySource, TaggingDirective: 'REPLACE' }));
    const keys = (await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents?.map((c) => c.Key);
    expect(keys).toEqual(['copy.txt', 'replaced.txt', 'standard.txt', 'untagged.txt']);
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'copy.txt' }))).TagSet).toEqual([]);
  });
});

describe('a canned ACL on a new object: taken when it is what the object gets (its bucket visibility), else AccessControlListNotSupported', () => {
  it('PutObject, CopyObject, CreateMultipartUpload and POST Object, in a private and a public bucket', async () => {
    const stamp = Date.now().toString(36);
    const closed = `acl-private-${stamp}`;
    const open = `acl-public-${stamp}`;
    await s3.send(new CreateBucketCommand({ Bucket: closed }));
    await s3.send(new CreateBucketCommand({ Bucket: open, ACL: 'public-read' }));
    /** A file's public url (the Pail API's listing gives it), read without credentials. */
    const anonymous = async (bucket: string, key: string) => {
      const headers = { 'x-api-key': alice.apiKey };
      const buckets = (await json(await fetch(`${server.url}/api/v1/buckets`, { headers }))).data as { id: number; name: string }[];
      const id = buckets.find((b) => b.name === bucket)?.id;
      const files = (await json(await fetch(`${server.url}/api/v1/buckets/${id}/files`, { headers }))).data as { filename: string; url: string }[];
      return fetch(files.find((file) => file.filename === key)!.url);
    };
    const refused = { name: 'AccessControlListNotSupported', status: 400 };

    // What the object gets anyway, and bucket-owner-full-control, are taken.
    await s3.send(new PutObjectCommand({ Bucket: closed, Key: 'private.txt', Body: 'private bytes', ACL: 'private' }));
    await s3.send(new PutObjectCommand({ Bucket: closed, Key: 'owner.txt', Body: 'owner bytes', ACL: 'bucket-owner-full-control' }));
    await s3.send(new PutObjectCommand({ Bucket: open, Key: 'public.txt', Body: 'public bytes', ACL: 'public-read' }));
    expect((await anonymous(closed, 'private.txt')).status).toBe(401);
    const shown = await anonymous(open, 'public.txt');
    expect([shown.status, await shown.text()]).toEqual([200, 'public bytes']);
    const usedBefore = await storageUsed();

    // The other visibility is refused, and nothing is written or begun.
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: closed, Key: 'private.txt', Body: 'replaced', ACL: 'public-read' })))).toEqual(refused);
    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: open, Key: 'public.txt', Body: 'replaced', ACL: 'private' })))).toEqual(refused);
    expect(await s3Error(s3.send(new CopyObjectCommand({ Bucket: closed, Key: 'copy.txt', CopySource: `${open}/public.txt`, ACL: 'public-read' })))).toEqual(
      refused,
    );
    expect(await s3Error(s3.send(new CreateMultipartUploadCommand({ Bucket: closed, Key: 'big.bin', ACL: 'public-read' })))).toEqual(refused);
    const { url, fields } = await createPresignedPost(s3, { Bucket: closed, Key: 'form.txt', Fields: { acl: 'public-read' }, Expires: 600 });
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob(['form bytes']), 'form.txt');
    const posted = await fetch(url, { method: 'POST', body: form });
    expect([posted.status, /<Code>([^<]*)<\/Code>/.exec(await posted.text())?.[1]]).toEqual([400, 'AccessControlListNotSupported']);

    const keys = async (bucket: string) => (await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents?.map((c) => c.Key);
    expect(await keys(closed)).toEqual(['owner.txt', 'private.txt']);
    expect(await keys(open)).toEqual(['public.txt']);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: closed }))).Uploads ?? []).toEqual([]);
    expect(await (await s3.send(new GetObjectCommand({ Bucket: closed, Key: 'private.txt' }))).Body!.transformToString()).toBe('private bytes');
    expect(await (await anonymous(open, 'public.txt')).text()).toBe('public bytes');
    expect(await storageUsed()).toBe(usedBefore);
  });
});

/** A SigV4-signed request sent with node:http (as s3-operations.test.ts's), so any method, query and header can be sent as a tool would. */
async function signedFetch(
  method: string,
  pathAndQuery: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const { host, port } = new URL(server.s3Url!);
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
    port: Number(port),
    path: url.pathname,
    query,
    headers: { host, 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex'), ...headers },
    body,
  });
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: Number(port), method, path: pathAndQuery, headers: signed.headers }, (res) => {
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
