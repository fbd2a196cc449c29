/**
 * Presigned PUT urls as @aws-sdk/s3-request-presigner makes them (issue 35),
 * used with fetch as a browser or a script would. With its default settings
 * the SDK signs into the url's query the checksum of the body it has at
 * signing time (x-amz-checksum-crc32=AAAAAA==, the CRC32 of nothing) and
 * x-amz-sdk-checksum-algorithm. S3 signs those parameters but does not check
 * the body against them (its guide: presigned urls do not support the
 * flexible checksums; LocalStack and MinIO answer alike), so the url works
 * for any body. A checksum the url makes a signed header of is checked.
 */
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3ServiceException,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

let server: TestServer;
let alice: TestUser;
/** The SDK with its defaults (requestChecksumCalculation WHEN_SUPPORTED). */
let s3: S3Client;
let bucket: string;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  alice = await signUp(server.url);
  s3 = sdkClient(server.s3Url, alice);
  bucket = `presigned-put-${Date.now().toString(36)}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
});
afterAll(() => server.close());

const crc32Of = (bytes: Buffer): string => {
  const digest = Buffer.alloc(4);
  digest.writeUInt32BE(crc32(bytes));
  return digest.toString('base64');
};
const md5Of = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const put = (url: string, body: Buffer, headers: Record<string, string> = {}) => fetch(url, { method: 'PUT', body: new Uint8Array(body), headers });

const bytesOf = async (key: string): Promise<Buffer> => {
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await got.Body!.transformToByteArray());
};
const status = (key: string) =>
  s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
    () => 200,
    (error: unknown) => (error instanceof S3ServiceException ? error.$metadata.httpStatusCode : error),
  );

describe('presigned PutObject urls of the AWS SDK for JavaScript', () => {
  it("the default url (the CRC32 of an empty body in its query) takes a real body: 200, S3's ETag, the bytes stored", async () => {
    const url = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: 'default.bin' }), { expiresIn: 300 });
    const query = new URL(url).searchParams;
    // What makes this url different from an older SDK's: if the SDK stops adding these, this test says so.
    expect(query.get('x-amz-checksum-crc32')).toBe('AAAAAA==');
    expect(query.get('x-amz-sdk-checksum-algorithm')).toBe('CRC32');
    const body = randomBytes(70_000);
    const response = await put(url, body);
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(`"${md5Of(body)}"`);
    expect((await bytesOf('default.bin')).equals(body)).toBe(true);
  });

  it('a url made with requestChecksumCalculation WHEN_REQUIRED has no checksum and works', async () => {
    const whenRequired = sdkClient(server.s3Url!, alice, { requestChecksumCalculation: 'WHEN_REQUIRED' });
    const url = await getSignedUrl(whenRequired, new PutObjectCommand({ Bucket: bucket, Key: 'when-required.txt', ContentType: 'text/plain' }), {
      expiresIn: 300,
    });
    expect([...new URL(url).searchParams.keys()].filter((name) => /checksum/i.test(name))).toEqual([]);
    const response = await put(url, Buffer.from('hello'), { 'content-type': 'text/plain' });
    expect(response.status).toBe(200);
    expect((await bytesOf('when-required.txt')).toString()).toBe('hello');
  });

  it("a url carrying the body's own CRC32 (or another algorithm's checksum) in its query works", async () => {
    const body = Buffer.from('the body signed for');
    const url = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: 'own-crc.txt', ChecksumCRC32: crc32Of(body) }), { expiresIn: 300 });
    expect(new URL(url).searchParams.get('x-amz-checksum-crc32')).toBe(crc32Of(body));
    expect((await put(url, body)).status).toBe(200);
    expect((await bytesOf('own-crc.txt')).equals(body)).toBe(true);

    const sha = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: 'sha.txt', ChecksumAlgorithm: 'SHA256' }), { expiresIn: 300 });
    expect(new URL(sha).searchParams.get('x-amz-sdk-checksum-algorithm')).toBe('SHA256');
    expect((await put(sha, Buffer.from('sha'))).status).toBe(200);
    expect((await bytesOf('sha.txt')).toString()).toBe('sha');
  });

  it("the query's checksum is signed: changing it is 403 SignatureDoesNotMatch and nothing is stored", async () => {
    const url = new URL(await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: 'tampered.txt' }), { expiresIn: 300 }));
    const body = Buffer.from('tampered');
    url.searchParams.set('x-amz-checksum-crc32', crc32Of(body));
    const response = await put(url.toString(), body);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    expect(await status('tampered.txt')).toBe(404);
  });

  it('a checksum the url signs as a header is checked: a wrong one is 400 BadDigest and nothing is stored; the right one is kept', async () => {
    const body = Buffer.from('checked against the header');
    const signHeader = { expiresIn: 300, unhoistableHeaders: new Set(['x-amz-checksum-crc32']) };
    const wrongValue = crc32Of(Buffer.from('something else'));
    const wrongUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: 'header-crc.txt', ChecksumCRC32: wrongValue }), signHeader);
    expect(new URL(wrongUrl).searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-amz-checksum-crc32');
    const wrong = await put(wrongUrl, body, { 'x-amz-checksum-crc32': wrongValue });
    expect(wrong.status).toBe(400);
    const wrongBody = await wrong.text();
    expect(wrongBody).toContain('<Code>BadDigest</Code>');
    expect(wrongBody).toContain('The CRC32 you specified did not match the calculated checksum.');
    expect(await status('header-crc.txt')).toBe(404);

    const rightUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: 'header-crc.txt', ChecksumCRC32: crc32Of(body) }), signHeader);
    const right = await put(rightUrl, body, { 'x-amz-checksum-crc32': crc32Of(body) });
    expect(right.status).toBe(200);
    expect(right.headers.get('x-amz-checksum-crc32')).toBe(crc32Of(body));
    expect((await bytesOf('header-crc.txt')).equals(body)).toBe(true);
  });

  it('a checksum header the url did not sign is 403 AccessDenied (HeadersNotSigned), nothing stored', async () => {
    const url = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: 'unsigned-header.txt' }), { expiresIn: 300 });
    const body = Buffer.from('x');
    const response = await put(url, body, { 'x-amz-checksum-crc32': crc32Of(body) });
    expect(response.status).toBe(403);
    const text = await response.text();
    expect(text).toContain('<Code>AccessDenied</Code>');
    expect(text).toContain('x-amz-checksum-crc32');
    expect(await status('unsigned-header.txt')).toBe(404);
  });

  it("the default UploadPart url takes a part's bytes as well", async () => {
    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'parts.bin' }));
    const url = await getSignedUrl(s3, new UploadPartCommand({ Bucket: bucket, Key: 'parts.bin', UploadId: upload.UploadId, PartNumber: 1 }), {
      expiresIn: 300,
    });
    expect(new URL(url).searchParams.get('x-amz-checksum-crc32')).toBe('AAAAAA==');
    const part = randomBytes(1000);
    const response = await put(url, part);
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(`"${md5Of(part)}"`);
    const parts = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'parts.bin', UploadId: upload.UploadId }));
    expect(parts.Parts?.map((p) => [p.PartNumber, p.Size, p.ETag])).toEqual([[1, 1000, `"${md5Of(part)}"`]]);
  });
});
