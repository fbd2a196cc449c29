/**
 * The S3 door's guards (issue 33): S3 signs what it acts on (an x-amz-*
 * header a request carries but did not sign is refused, on presigned urls
 * and signed headers alike), bodies are bounded before they are parsed and
 * after the cheap checks, and presigned urls and POST policies live 7 days
 * at most. Driven by the AWS SDK's presigners and signer, and by raw requests
 * that send only part of a body, to show the answer comes before the rest.
 */
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';
import { signRequest } from './helpers/s3-signing.js';

let server: TestServer;
let s3Url: string;
let alice: TestUser;
let s3: S3Client;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3Url = server.s3Url;
  alice = await signUp(server.url);
  // No body checksum baked into presigned urls (the presigner would sign the CRC32 of an empty body).
  s3 = sdkClient(s3Url, alice, { requestChecksumCalculation: 'WHEN_REQUIRED' });
});
afterAll(() => server.close());

let bucketCount = 0;
async function newBucket(acl?: 'public-read'): Promise<string> {
  const name = `guard-${++bucketCount}-${Date.now().toString(36)}`;
  await s3.send(new CreateBucketCommand({ Bucket: name, ...(acl ? { ACL: acl } : {}) }));
  return name;
}

const exists = (bucket: string, key: string) =>
  s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
    () => true,
    () => false,
  );

/** Headers signed by the AWS signer for `method path?query` with an unsigned payload. */
const signedHeaders = (method: string, path: string, query: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  signRequest(s3Url, alice, method, path, query, headers);

/**
 * A signed request that declares `declared` bytes of body but sends only
 * `sent`, then waits for the answer: it can come only if the server answers
 * without the rest of the body.
 */
async function partialRequest(method: string, path: string, query: Record<string, string>, declared: number, sent: Buffer) {
  const headers = await signedHeaders(method, path, query);
  const url = new URL(`${s3Url}${path}`);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest(url, { method, headers: { ...headers, 'content-length': String(declared) } });
    const timer = setTimeout(() => {
      request.destroy();
      reject(new Error('no answer before the whole body was sent'));
    }, 15_000);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(timer);
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.write(sent);
  });
}

describe('S3 signs what it acts on', () => {
  it('a presigned PutObject url with an added x-amz-copy-source is 403 HeadersNotSigned, and nothing is copied', async () => {
    const secret = await newBucket();
    const avatars = await newBucket('public-read');
    await s3.send(new PutObjectCommand({ Bucket: secret, Key: 'diary.txt', Body: 'private words' }));
    const url = await getSignedUrl(s3, new PutObjectCommand({ Bucket: avatars, Key: 'me.png' }), { expiresIn: 300 });
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe('host');

    const copied = await fetch(url, { method: 'PUT', headers: { 'x-amz-copy-source': `/${secret}/diary.txt` } });
    expect(copied.status).toBe(403);
    const body = await copied.text();
    expect(body).toContain('<Code>AccessDenied</Code>');
    expect(body).toContain('<Message>There were headers present in the request which were not signed</Message>');
    expect(body).toContain('<HeadersNotSigned>x-amz-copy-source</HeadersNotSigned>');
    expect(await exists(avatars, 'me.png')).toBe(false);

    // Unsigned headers that are not x-amz-* stay allowed, as in S3 (a browser sends Content-Type).
    const put = await fetch(url, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: 'a picture' });
    expect(put.status).toBe(200);
    const stored = await s3.send(new GetObjectCommand({ Bucket: avatars, Key: 'me.png' }));
    expect(await stored.Body!.transformToString()).toBe('a picture');
  });

  it('a presigned UploadPart url with an added x-amz-copy-source is 403, and no part is kept', async () => {
    const secret = await newBucket();
    const avatars = await newBucket('public-read');
    await s3.send(new PutObjectCommand({ Bucket: secret, Key: 'diary.txt', Body: 'private words' }));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: avatars, Key: 'big.bin' }));
    const url = await getSignedUrl(s3, new UploadPartCommand({ Bucket: avatars, Key: 'big.bin', UploadId, PartNumber: 1 }), { expiresIn: 300 });
    const copied = await fetch(url, { method: 'PUT', headers: { 'x-amz-copy-source': `/${secret}/diary.txt` } });
    expect(copied.status).toBe(403);
    expect(await copied.text()).toContain('<HeadersNotSigned>x-amz-copy-source</HeadersNotSigned>');
    const parts = await s3.send(new ListPartsCommand({ Bucket: avatars, Key: 'big.bin', UploadId }));
    expect(parts.Parts ?? []).toEqual([]);
  });

  it('a header-signed request carrying an unsigned x-amz-meta-* or x-amz-copy-source is 403, and nothing is stored', async () => {
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'source.txt', Body: 'source bytes' }));
    const headers = await signedHeaders('PUT', `/${bucket}/meta.txt`);
    const withMeta = await fetch(`${s3Url}/${bucket}/meta.txt`, { method: 'PUT', headers: { ...headers, 'x-amz-meta-note': 'unsigned' }, body: 'x' });
    expect(withMeta.status).toBe(403);
    const body = await withMeta.text();
    expect(body).toContain('<Code>AccessDenied</Code>');
    expect(body).toContain('<HeadersNotSigned>x-amz-meta-note</HeadersNotSigned>');
    expect(await exists(bucket, 'meta.txt')).toBe(false);

    const copyHeaders = await signedHeaders('PUT', `/${bucket}/copy.txt`);
    const copied = await fetch(`${s3Url}/${bucket}/copy.txt`, { method: 'PUT', headers: { ...copyHeaders, 'x-amz-copy-source': `/${bucket}/source.txt` } });
    expect(copied.status).toBe(403);
    expect(await copied.text()).toContain('<HeadersNotSigned>x-amz-copy-source</HeadersNotSigned>');
    expect(await exists(bucket, 'copy.txt')).toBe(false);

    // Signed, the same headers are served.
    const signedMeta = await signedHeaders('PUT', `/${bucket}/meta.txt`, {}, { 'x-amz-meta-note': 'signed' });
    expect((await fetch(`${s3Url}/${bucket}/meta.txt`, { method: 'PUT', headers: signedMeta, body: 'x' })).status).toBe(200);
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'meta.txt' }))).Metadata).toEqual({ note: 'signed' });
  });
});

describe('bodies are bounded before they are parsed', () => {
  it('a CompleteMultipartUpload declaring more than 10,000 parts can need is 400 MaxMessageLengthExceeded before its body is read', async () => {
    const bucket = await newBucket();
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'big.bin' }));
    const answer = await partialRequest('POST', `/${bucket}/big.bin`, { uploadId: UploadId! }, 10_000 * 320 + 1025, Buffer.from('<Complete'));
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<Code>MaxMessageLengthExceeded</Code>');
  });

  it('4 MB of empty elements is refused as soon as it passes the tag bound, never parsed, while /healthz answers', async () => {
    const bucket = await newBucket();
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'big.bin' }));
    // 1 MB of a declared 3 MB (within the byte bound): 262,144 tags, past the 160,064 that 10,000 parts can have.
    const sent = Buffer.from(`<CompleteMultipartUpload>${'<a/>'.repeat(262_144)}`);
    const answering = partialRequest('POST', `/${bucket}/big.bin`, { uploadId: UploadId! }, 3_000_000, sent);
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const answer = await answering;
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<Code>MalformedXML</Code>');
  });

  it('an unknown upload id is 404 NoSuchUpload before its body is read', async () => {
    const bucket = await newBucket();
    const answer = await partialRequest('POST', `/${bucket}/big.bin`, { uploadId: 'no-such-upload' }, 3_000_000, Buffer.from('<CompleteMultipartUpload>'));
    expect(answer.status).toBe(404);
    expect(answer.body).toContain('<Code>NoSuchUpload</Code>');
  });

  it('a part list as large as 10,000 parts with checksums make is read and parsed (its parts are then unknown)', async () => {
    const bucket = await newBucket();
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'big.bin' }));
    let parts = '';
    for (let number = 1; number <= 10_000; number++) {
      parts += `  <Part>\n    <PartNumber>${number}</PartNumber>\n    <ETag>"${'0123456789abcdef'.repeat(2)}"</ETag>\n    <ChecksumSHA256>${'A'.repeat(43)}=</ChecksumSHA256>\n  </Part>\n`;
    }
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\n${parts}</CompleteMultipartUpload>`;
    const headers = await signedHeaders('POST', `/${bucket}/big.bin`, { uploadId: UploadId! });
    const response = await fetch(`${s3Url}/${bucket}/big.bin?uploadId=${encodeURIComponent(UploadId!)}`, { method: 'POST', headers, body });
    expect(await response.text()).toContain('<Code>InvalidPart</Code>');
    expect(response.status).toBe(400);
  });

  it('a bucket configuration is at most 64 KiB and 8192 tags: past either it is refused unparsed', async () => {
    const bucket = await newBucket();
    const putCors = async (body: string) => {
      const headers = await signedHeaders('PUT', `/${bucket}`, { cors: '' });
      return fetch(`${s3Url}/${bucket}?cors=`, { method: 'PUT', headers, body });
    };
    const manyTags = await putCors(`<CORSConfiguration>${'<a/>'.repeat(9000)}</CORSConfiguration>`);
    expect(manyTags.status).toBe(400);
    expect(await manyTags.text()).toContain('<Code>MalformedXML</Code>');
    const large = await putCors(`<CORSConfiguration>${' '.repeat(64 * 1024)}</CORSConfiguration>`);
    expect(large.status).toBe(400);
    expect(await large.text()).toContain('<Code>MaxMessageLengthExceeded</Code>');
    const rule = '<CORSRule><AllowedOrigin>https://a.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>';
    expect((await putCors(`<CORSConfiguration>${rule}</CORSConfiguration>`)).status).toBe(200);
  });

  it('a DeleteObjects body of 1000 long keys is served; a larger one is MaxMessageLengthExceeded', async () => {
    const bucket = await newBucket();
    const keys = Array.from({ length: 1000 }, (_, index) => `${String(index).padStart(4, '0')}/${'k'.repeat(1000)}`);
    const deleteBody = (list: string[]) => `<Delete><Quiet>true</Quiet>${list.map((key) => `<Object><Key>${key}</Key></Object>`).join('')}</Delete>`;
    const send = async (body: string) => {
      const md5 = createHash('md5').update(body).digest('base64');
      const headers = await signedHeaders('POST', `/${bucket}`, { delete: '' }, { 'content-md5': md5 });
      return fetch(`${s3Url}/${bucket}?delete=`, { method: 'POST', headers, body });
    };
    const served = await send(deleteBody(keys));
    expect(served.status).toBe(200);
    const tooLarge = await send(deleteBody(keys.map((key) => key + 'k'.repeat(1100))));
    expect(tooLarge.status).toBe(400);
    expect(await tooLarge.text()).toContain('<Code>MaxMessageLengthExceeded</Code>');
  });
});

describe('7 days at most', () => {
  it('a POST policy expiring more than 7 days after its x-amz-date is 400 InvalidPolicyDocument, and nothing is stored', async () => {
    const bucket = await newBucket();
    const post = async (expires: number, key: string) => {
      const { url, fields } = await createPresignedPost(s3, { Bucket: bucket, Key: key, Expires: expires });
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      form.append('file', new Blob([new Uint8Array(Buffer.from('form bytes'))]), 'a.txt');
      return fetch(url, { method: 'POST', body: form });
    };
    const century = await post(100 * 365 * 24 * 3600, 'century.txt');
    expect(century.status).toBe(400);
    const body = await century.text();
    expect(body).toContain('<Code>InvalidPolicyDocument</Code>');
    expect(body).toContain('more than 7 days');
    expect(await exists(bucket, 'century.txt')).toBe(false);
    expect((await post(7 * 24 * 3600, 'week.txt')).status).toBe(204);
  });

  it('a presigned url dated ahead is served within the clock skew, but never so that it outlives 7 days from now', async () => {
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a.txt', Body: 'a' }));
    const get = new GetObjectCommand({ Bucket: bucket, Key: 'a.txt' });
    const ahead = (minutes: number) => new Date(Date.now() + minutes * 60_000);

    const week = await fetch(await getSignedUrl(s3, get, { expiresIn: 7 * 24 * 3600, signingDate: ahead(14) }));
    expect(week.status).toBe(403);
    const body = await week.text();
    expect(body).toContain('<Code>AccessDenied</Code>');
    expect(body).toContain('Request is not yet valid');

    const hour = await fetch(await getSignedUrl(s3, get, { expiresIn: 3600, signingDate: ahead(14) }));
    expect(hour.status).toBe(200);
    const far = await fetch(await getSignedUrl(s3, get, { expiresIn: 60, signingDate: ahead(20) }));
    expect(far.status).toBe(403);
    expect(await far.text()).toContain('Request is not yet valid');
    // A url dated now lives its whole 7 days.
    expect((await fetch(await getSignedUrl(s3, get, { expiresIn: 7 * 24 * 3600 }))).status).toBe(200);
  });
});
