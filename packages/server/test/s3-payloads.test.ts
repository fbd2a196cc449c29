/**
 * The S3 API's payload modes: the AWS SDK with its default flexible checksums
 * (aws-chunked bodies with trailing checksums, header checksums), and
 * hand-made aws-chunked requests signed with @smithy/signature-v4 for the
 * failures an SDK never sends: a bad chunk signature, a truncated body, a
 * wrong trailing checksum, a wrong Content-MD5. A refused body stores nothing.
 */
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac, randomBytes, type Hash, type Hmac } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsChunkedDecoder } from '../src/s3/aws-chunked.js';
import { S3Error } from '../src/s3/errors.js';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

let server: TestServer;
let s3Url: string;
let alice: TestUser;
let s3: S3Client;
let bucket: string;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3Url = server.s3Url;
  alice = await signUp(server.url);
  // Default settings: the SDK's flexible checksums are on (aws-chunked streams, trailing and header CRC32).
  s3 = sdkClient(s3Url, alice);
  bucket = `payloads-${Date.now().toString(36)}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
});
afterAll(() => server.close());

const bytesOf = async (key: string): Promise<Buffer> => {
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await got.Body!.transformToByteArray());
};

async function usedBytes(): Promise<number> {
  const response = await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${alice.token}` } });
  return (await json(response)).data.storage_used_bytes as number;
}

/** Nothing under `key`: HeadObject 404, not listed, and the owner's usage as it was. */
async function expectNothingStored(key: string, usedBefore: number): Promise<void> {
  const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
    () => 200,
    (error: unknown) => (error instanceof S3ServiceException ? error.$metadata.httpStatusCode : error),
  );
  expect(head).toBe(404);
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key }));
  expect(listed.KeyCount).toBe(0);
  expect(await usedBytes()).toBe(usedBefore);
}

describe('the AWS SDK with default checksums', () => {
  it.each([
    ['a small Buffer', 'small.bin', randomBytes(1234), false],
    ['a 6 MB Buffer', 'large.bin', randomBytes(6 * 1024 * 1024 + 17), false],
    ['a small stream', 'small-stream.bin', randomBytes(3000), true],
    ['a 6 MB stream', 'large-stream.bin', randomBytes(6 * 1024 * 1024 + 5), true],
  ])('PutObject of %s, GetObject byte-equal', async (_name, key, body, stream) => {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: stream ? Readable.from([body.subarray(0, 1000), body.subarray(1000)]) : body,
        ContentLength: body.length,
      }),
    );
    expect((await bytesOf(key)).equals(body)).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(head.ContentLength).toBe(body.length);
    // aws-chunked is how the body travelled, not the object's encoding.
    expect(head.ContentEncoding).toBeUndefined();
  });

  it('a string body with an explicit SHA256 checksum', async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'sha.txt', Body: 'checked by sha256', ChecksumAlgorithm: 'SHA256' }));
    expect((await bytesOf('sha.txt')).toString()).toBe('checked by sha256');
  });
});

// Hand-made requests: the header signature from @smithy/signature-v4, chunk and trailer signatures with its signString.

const bytes = (data: string | ArrayBuffer | ArrayBufferView): string | Buffer =>
  typeof data === 'string' ? data : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);

/** SignatureV4's hash: node:crypto's SHA-256, or HMAC-SHA256 when given a secret (as @smithy/hash-node). */
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

const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const EMPTY_SHA256 = sha256Hex('');
const crc32Base64 = (data: Buffer) => {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(data));
  return out.toString('base64');
};

interface ChunkedRequest {
  key: string;
  mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' | 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER' | 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
  chunks: Buffer[];
  /** A trailing crc32, as the value to send (the right one when omitted). */
  trailerCrc32?: string | true;
  /** Sign chunk `index` over other bytes than it sends. */
  badSignatureAt?: number;
  /** Cut the encoded body to this many bytes. */
  truncateTo?: number;
  headers?: Record<string, string>;
}

/** Sends one PutObject with an aws-chunked body, encoded and signed here. */
async function putChunked(request: ChunkedRequest): Promise<{ status: number; body: string }> {
  const url = new URL(`${s3Url}/${bucket}/${request.key}`);
  const signingDate = new Date();
  const signer = new SignatureV4({
    credentials: { accessKeyId: alice.accessKeyId, secretAccessKey: alice.secretAccessKey },
    region: 'us-east-1',
    service: 's3',
    sha256: NodeSha256,
  });
  const decoded = Buffer.concat(request.chunks);
  const trailing = request.trailerCrc32 !== undefined;
  const headers: Record<string, string> = {
    host: url.host,
    'content-encoding': 'aws-chunked',
    'x-amz-content-sha256': request.mode,
    'x-amz-decoded-content-length': String(decoded.length),
    ...(trailing ? { 'x-amz-trailer': 'x-amz-checksum-crc32' } : {}),
    ...request.headers,
  };
  const signed = await signer.sign(
    { method: 'PUT', protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, headers },
    { signingDate },
  );
  const signedHeaders = signed.headers as Record<string, string>;
  const amzDate = signedHeaders['x-amz-date']!;
  const scope = `${amzDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const chunkSigned = request.mode !== 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
  let previous = /Signature=([0-9a-f]{64})/.exec(signedHeaders.authorization!)![1]!;
  const parts: Buffer[] = [];
  for (const [index, data] of [...request.chunks, Buffer.alloc(0)].entries()) {
    let header = data.length.toString(16);
    if (chunkSigned) {
      const signedData = index === request.badSignatureAt ? Buffer.from('not these bytes') : data;
      previous = await signer.sign(['AWS4-HMAC-SHA256-PAYLOAD', amzDate, scope, previous, EMPTY_SHA256, sha256Hex(signedData)].join('\n'), {
        signingDate,
      });
      header += `;chunk-signature=${previous}`;
    }
    parts.push(Buffer.from(`${header}\r\n`), data);
    if (data.length > 0) parts.push(Buffer.from('\r\n'));
  }
  if (trailing) {
    const value = request.trailerCrc32 === true ? crc32Base64(decoded) : request.trailerCrc32!;
    const line = `x-amz-checksum-crc32:${value}`;
    parts.push(Buffer.from(`${line}\r\n`));
    if (chunkSigned) {
      const signature = await signer.sign(['AWS4-HMAC-SHA256-TRAILER', amzDate, scope, previous, sha256Hex(`${line}\n`)].join('\n'), { signingDate });
      parts.push(Buffer.from(`x-amz-trailer-signature:${signature}\r\n`));
    }
  }
  parts.push(Buffer.from('\r\n'));
  let body = Buffer.concat(parts);
  if (request.truncateTo !== undefined) body = body.subarray(0, request.truncateTo);
  const { host: _host, ...sendHeaders } = signedHeaders;
  const response = await fetch(url, { method: 'PUT', headers: sendHeaders, body });
  return { status: response.status, body: await response.text() };
}

const chunksOf = (data: Buffer, size: number): Buffer[] => {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < data.length; offset += size) chunks.push(data.subarray(offset, offset + size));
  return chunks;
};

describe('hand-made aws-chunked requests', () => {
  it('STREAMING-AWS4-HMAC-SHA256-PAYLOAD with good chunk signatures is stored', async () => {
    const data = randomBytes(200 * 1024 + 3);
    const sent = await putChunked({ key: 'signed-chunks.bin', mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', chunks: chunksOf(data, 64 * 1024) });
    expect(sent.status).toBe(200);
    expect((await bytesOf('signed-chunks.bin')).equals(data)).toBe(true);
  });

  it('signed chunks with a signed trailing crc32, and unsigned chunks with a trailing crc32, are stored', async () => {
    const data = randomBytes(70 * 1024);
    const signed = await putChunked({
      key: 'signed-trailer.bin',
      mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
      chunks: chunksOf(data, 16 * 1024),
      trailerCrc32: true,
    });
    expect(signed.status).toBe(200);
    expect((await bytesOf('signed-trailer.bin')).equals(data)).toBe(true);
    const unsigned = await putChunked({
      key: 'unsigned-trailer.bin',
      mode: 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
      chunks: chunksOf(data, 10_000),
      trailerCrc32: true,
    });
    expect(unsigned.status).toBe(200);
    expect((await bytesOf('unsigned-trailer.bin')).equals(data)).toBe(true);
  });

  it.each([
    ['a small body', 3 * 1024],
    ['a body past the inline limit', 300 * 1024],
  ])('a bad chunk signature in %s: 403 SignatureDoesNotMatch, nothing stored', async (_name, size) => {
    const before = await usedBytes();
    const key = `bad-signature-${size}.bin`;
    const sent = await putChunked({ key, mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', chunks: chunksOf(randomBytes(size), 8 * 1024), badSignatureAt: 1 });
    expect(sent.status).toBe(403);
    expect(sent.body).toContain('<Code>SignatureDoesNotMatch</Code>');
    await expectNothingStored(key, before);
  });

  it('a body cut mid-chunk: 400 IncompleteBody, nothing stored', async () => {
    const before = await usedBytes();
    const sent = await putChunked({
      key: 'truncated.bin',
      mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
      chunks: chunksOf(randomBytes(40 * 1024), 16 * 1024),
      truncateTo: 20_000,
    });
    expect(sent.status).toBe(400);
    expect(sent.body).toContain('<Code>IncompleteBody</Code>');
    await expectNothingStored('truncated.bin', before);
  });

  it('a wrong trailing crc32: 400 BadDigest, nothing stored (signed and unsigned chunks)', async () => {
    const before = await usedBytes();
    const wrong = crc32Base64(Buffer.from('other bytes'));
    for (const mode of ['STREAMING-UNSIGNED-PAYLOAD-TRAILER', 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER'] as const) {
      const sent = await putChunked({ key: 'wrong-crc.bin', mode, chunks: chunksOf(randomBytes(100 * 1024), 32 * 1024), trailerCrc32: wrong });
      expect(sent.status).toBe(400);
      expect(sent.body).toContain('<Code>BadDigest</Code>');
      expect(sent.body).toContain('CRC32');
    }
    await expectNothingStored('wrong-crc.bin', before);
  });

  it('a wrong Content-MD5: 400 BadDigest, nothing stored; a right one is stored', async () => {
    const before = await usedBytes();
    const data = randomBytes(5000);
    const otherMd5 = createHash('md5').update('other').digest('base64');
    const sent = await putChunked({ key: 'md5.bin', mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', chunks: [data], headers: { 'content-md5': otherMd5 } });
    expect(sent.status).toBe(400);
    expect(sent.body).toContain('<Code>BadDigest</Code>');
    await expectNothingStored('md5.bin', before);
    // And through the SDK with a plain body.
    const wrongBySdk = await s3
      .send(new PutObjectCommand({ Bucket: bucket, Key: 'md5.bin', Body: data, ContentMD5: otherMd5 }))
      .catch((error: unknown) => error);
    expect(wrongBySdk).toBeInstanceOf(S3ServiceException);
    expect((wrongBySdk as S3ServiceException).name).toBe('BadDigest');
    await expectNothingStored('md5.bin', before);
    const right = await putChunked({
      key: 'md5.bin',
      mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
      chunks: [data],
      headers: { 'content-md5': createHash('md5').update(data).digest('base64') },
    });
    expect(right.status).toBe(200);
  });
});

describe('the aws-chunked decoder, unsigned, fed in pieces', () => {
  /** Decodes `body` written `piece` bytes at a time: the bytes, or the S3 error code it fails with. */
  async function decode(body: string, decodedLength: number, piece: number, trailerNames: string[] = []): Promise<string> {
    const decoder = new AwsChunkedDecoder({ decodedLength, trailerNames });
    const out: Buffer[] = [];
    decoder.on('data', (chunk: Buffer) => out.push(chunk));
    const done = new Promise<string>((resolve) => {
      decoder.on('end', () => resolve(Buffer.concat(out).toString()));
      decoder.on('error', (error) => resolve(error instanceof S3Error ? error.code : `unexpected: ${error.message}`));
    });
    const bytes = Buffer.from(body);
    for (let offset = 0; offset < bytes.length && !decoder.destroyed; offset += piece) decoder.write(bytes.subarray(offset, offset + piece));
    if (!decoder.destroyed) decoder.end();
    return done;
  }

  const trailer = `x-amz-checksum-crc32:${crc32Base64(Buffer.from('hello world'))}`;
  it.each([
    ['two chunks', '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n', 11, [], 'hello world'],
    ['a trailer', `b\r\nhello world\r\n0\r\n${trailer}\r\n\r\n`, 11, ['x-amz-checksum-crc32'], 'hello world'],
    ['an empty body', '0\r\n\r\n', 0, [], ''],
    ['cut inside a chunk', '5\r\nhel', 5, [], 'IncompleteBody'],
    ['no last chunk', '5\r\nhello\r\n', 5, [], 'IncompleteBody'],
    ['fewer bytes than declared', '5\r\nhello\r\n0\r\n\r\n', 6, [], 'IncompleteBody'],
    ['more bytes than declared', '5\r\nhello\r\n0\r\n\r\n', 4, [], 'InvalidRequest'],
    ['a chunk longer than its size', '3\r\nhello\r\n0\r\n\r\n', 5, [], 'InvalidRequest'],
    ['a size that is not hex', 'zz\r\nhello\r\n0\r\n\r\n', 5, [], 'InvalidRequest'],
    ['a chunk signature in an unsigned body', `5;chunk-signature=${'0'.repeat(64)}\r\nhello\r\n0\r\n\r\n`, 5, [], 'InvalidRequest'],
    ['bytes after the end', '0\r\n\r\nextra', 0, [], 'InvalidRequest'],
    ['an announced trailer missing', 'b\r\nhello world\r\n0\r\n\r\n', 11, ['x-amz-checksum-crc32'], 'IncompleteBody'],
    ['a trailer not announced', `b\r\nhello world\r\n0\r\n${trailer}\r\n\r\n`, 11, [], 'InvalidRequest'],
    ['an endless header line', `${'1'.repeat(5000)}\r\n`, 5, [], 'InvalidRequest'],
  ])('%s', async (_name, body, decodedLength, trailerNames, expected) => {
    for (const piece of [1, 2, 3, 7, 1 << 20]) expect(await decode(body, decodedLength, piece, trailerNames)).toBe(expected);
  });
});
