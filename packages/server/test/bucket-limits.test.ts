/**
 * Per-bucket limits (decisions.md, "Per-bucket limits"): max_file_bytes and
 * allowed_types, set at create and by PATCH, shown in the bucket record, and
 * enforced on every upload path before any byte is kept, with the type read
 * from the file's first bytes as well as declared.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
});
afterAll(() => server?.close());

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A PNG's structure (signature, IHDR, one IDAT chunk of `size` bytes of anything): what a type detector reads. */
function png(size = 200): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(size);
  const ihdr = [Buffer.from([0, 0, 0, 13]), Buffer.from('IHDR'), Buffer.alloc(13, 1), Buffer.alloc(4)];
  return Buffer.concat([PNG_SIGNATURE, ...ihdr, length, Buffer.from('IDAT'), randomBytes(size), Buffer.alloc(4)]);
}
const text = (size = 200) => Buffer.from('just some words, no picture at all. '.repeat(Math.ceil(size / 36)).slice(0, size));

interface Bucket {
  id: number;
  name: string;
  max_file_bytes: number | null;
  allowed_types: string[] | null;
}

async function setUp(limits: { max_file_bytes?: number | null; allowed_types?: string[] | null } = {}) {
  const user = await signUp(server.url);
  const dev = devApi(server.url, user);
  const name = `limits-${randomBytes(4).toString('hex')}`;
  const created = await dev('', { method: 'POST', body: JSON.stringify({ name, ...limits }) });
  expect(created.status).toBe(201);
  const bucket = (await json(created)).data as Bucket;
  const s3 = sdkClient(server.s3Url!, user);
  return { user, dev, bucket, s3 };
}

async function files(dev: ReturnType<typeof devApi>, bucket: number): Promise<{ filename: string; content_type: string; size: number }[]> {
  return (await json(await dev(`/${bucket}/files`))).data;
}

async function usedBytes(user: TestUser): Promise<number> {
  return (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;
}

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode, message: error.message };
    throw error;
  }
  throw new Error('expected the command to fail');
}

describe('setting limits', () => {
  it('create takes them, the record shows them (null by default), PATCH changes and clears them on both APIs', async () => {
    const plain = await setUp();
    expect(plain.bucket).toMatchObject({ max_file_bytes: null, allowed_types: null });

    const { user, dev, bucket } = await setUp({ max_file_bytes: 1000, allowed_types: ['image/*', 'Application/PDF'] });
    expect(bucket).toMatchObject({ max_file_bytes: 1000, allowed_types: ['image/*', 'application/pdf'] });
    expect((await json(await dev(`/${bucket.id}`))).data).toMatchObject({ max_file_bytes: 1000, allowed_types: ['image/*', 'application/pdf'] });

    const patched = await dev(`/${bucket.id}`, { method: 'PATCH', body: JSON.stringify({ max_file_bytes: null }) });
    expect(patched.status).toBe(200);
    expect((await json(patched)).data).toMatchObject({ max_file_bytes: null, allowed_types: ['image/*', 'application/pdf'] });

    const client = await fetch(`${server.url}/api/buckets/${bucket.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ allowed_types: null, max_file_bytes: 5 }),
    });
    expect(client.status).toBe(200);
    expect((await json(client)).data).toMatchObject({ max_file_bytes: 5, allowed_types: null });
    const listed = (await json(await dev(''))).data as Bucket[];
    expect(listed.find((b) => b.id === bucket.id)).toMatchObject({ max_file_bytes: 5, allowed_types: null });
  });

  it('refuses bad limits with 400 {error}, changing nothing', async () => {
    const { dev, bucket } = await setUp({ max_file_bytes: 1000 });
    const cases: [unknown, RegExp][] = [
      [{ max_file_bytes: 0 }, /max_file_bytes/],
      [{ max_file_bytes: 'big' }, /max_file_bytes/],
      [{ allowed_types: 'image/*' }, /allowed_types/],
      [{ allowed_types: ['images'] }, /"images" is not a MIME type/],
      [{ allowed_types: ['*/*'] }, /is not a MIME type/],
      [{ allowed_types: [] }, /at least one type/],
    ];
    for (const [body, message] of cases) {
      const response = await dev(`/${bucket.id}`, { method: 'PATCH', body: JSON.stringify(body) });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await json(response)).error).toMatch(message);
    }
    expect((await json(await dev(`/${bucket.id}`))).data).toMatchObject({ max_file_bytes: 1000, allowed_types: null });
    const created = await dev('', { method: 'POST', body: JSON.stringify({ name: `bad-${randomBytes(3).toString('hex')}`, allowed_types: ['nope'] }) });
    expect(created.status).toBe(400);
  });
});

describe('max_file_bytes on every upload path', () => {
  it('over the limit is 413 (S3: EntityTooLarge) through multipart, PUT, a signed url, S3 PutObject, a presigned POST and CopyObject; nothing kept', async () => {
    const { user, dev, bucket, s3 } = await setUp({ max_file_bytes: 1000 });
    const big = randomBytes(1001);
    const form = new FormData();
    form.append('file', new Blob([big]), 'big.bin');
    const multipart = await dev(`/${bucket.id}/files`, { method: 'POST', body: form });
    expect(multipart.status).toBe(413);
    expect((await json(multipart)).error).toMatch(/File too large/);
    expect((await dev(`/${bucket.id}/files/big.bin`, { method: 'PUT', body: big })).status).toBe(413);
    // A body longer than it said: refused as it streams.
    const streamed = await dev(`/${bucket.id}/files/streamed.bin`, {
      method: 'PUT',
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(big);
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);

    const signing = await dev(`/${bucket.id}/files/signed.bin/signed-url`, { method: 'POST', body: JSON.stringify({ method: 'PUT' }) });
    expect(signing.status).toBe(201);
    expect((await fetch((await json(signing)).data.url, { method: 'PUT', body: big })).status).toBe(413);

    expect(await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket.name, Key: 'put.bin', Body: big })))).toMatchObject({
      name: 'EntityTooLarge',
      status: 400,
    });
    const post = await createPresignedPost(s3, { Bucket: bucket.name, Key: 'posted.bin' });
    const postForm = new FormData();
    for (const [name, value] of Object.entries(post.fields)) postForm.append(name, value);
    postForm.append('file', new Blob([big]), 'posted.bin');
    const posted = await fetch(post.url, { method: 'POST', body: postForm });
    expect(posted.status).toBe(400);
    expect(await posted.text()).toContain('<Code>EntityTooLarge</Code>');

    // A copy into the bucket obeys the bucket's limit, not its source's.
    const other = await dev('', { method: 'POST', body: JSON.stringify({ name: `src-${randomBytes(3).toString('hex')}` }) });
    const source = (await json(other)).data as Bucket;
    await s3.send(new PutObjectCommand({ Bucket: source.name, Key: 'big.bin', Body: big }));
    expect(await s3Error(s3.send(new CopyObjectCommand({ Bucket: bucket.name, Key: 'copy.bin', CopySource: `${source.name}/big.bin` })))).toMatchObject({
      name: 'EntityTooLarge',
    });

    expect(await files(dev, bucket.id)).toEqual([]);
    expect(await usedBytes(user)).toBe(1001);
    // At the limit is fine.
    expect((await dev(`/${bucket.id}/files/exact.bin`, { method: 'PUT', body: big.subarray(0, 1000) })).status).toBe(201);
  });
});

describe('allowed_types on every upload path', () => {
  it('a PNG declared as application/octet-stream is accepted into an image/* bucket and stored as image/png', async () => {
    const { dev, bucket, s3 } = await setUp({ allowed_types: ['image/*'] });
    const small = png(100);
    expect(
      (await dev(`/${bucket.id}/files/a.bin`, { method: 'PUT', body: small as BodyInit, headers: { 'content-type': 'application/octet-stream' } })).status,
    ).toBe(201);
    // Larger than the inline limit: the first bytes are read ahead of the stream to the store.
    const large = png(3 * 1024 * 1024);
    expect(
      (await dev(`/${bucket.id}/files/large`, { method: 'PUT', body: large as BodyInit, headers: { 'content-type': 'application/octet-stream' } })).status,
    ).toBe(201);
    await s3.send(new PutObjectCommand({ Bucket: bucket.name, Key: 's3.png', Body: png(500) }));
    const stored = await files(dev, bucket.id);
    expect(stored.map((file) => [file.filename, file.content_type])).toEqual([
      ['a.bin', 'image/png'],
      ['large', 'image/png'],
      ['s3.png', 'image/png'],
    ]);
    const got = await dev(`/${bucket.id}/files/large`);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await got.arrayBuffer()).equals(large)).toBe(true);
  });

  it('a text file named photo.png (declared image/png) is refused with 415 on every path, and nothing is kept', async () => {
    const { user, dev, bucket, s3 } = await setUp({ allowed_types: ['image/*'] });
    const fake = text(300);
    const form = new FormData();
    form.append('file', new Blob([fake], { type: 'image/png' }), 'photo.png');
    const multipart = await dev(`/${bucket.id}/files`, { method: 'POST', body: form });
    expect(multipart.status).toBe(415);
    expect((await json(multipart)).error).toBe("The file's content is not image/png, as declared");
    // No type at all: the name's extension says image/png, and the bytes say otherwise.
    expect((await dev(`/${bucket.id}/files/photo.png`, { method: 'PUT', body: fake })).status).toBe(415);
    const largeFake = text(2 * 1024 * 1024);
    expect((await dev(`/${bucket.id}/files/big.png`, { method: 'PUT', body: largeFake, headers: { 'content-type': 'image/png' } })).status).toBe(415);

    const signing = await dev(`/${bucket.id}/files/signed.png/signed-url`, { method: 'POST', body: JSON.stringify({ method: 'PUT' }) });
    const signed = await fetch((await json(signing)).data.url, { method: 'PUT', body: fake, headers: { 'content-type': 'image/png' } });
    expect(signed.status).toBe(415);

    const viaS3 = await s3Error(s3.send(new PutObjectCommand({ Bucket: bucket.name, Key: 'photo.png', Body: fake, ContentType: 'image/png' })));
    expect(viaS3).toMatchObject({ name: 'InvalidArgument', status: 400, message: "The file's content is not image/png, as declared" });

    const post = await createPresignedPost(s3, { Bucket: bucket.name, Key: 'posted.png', Fields: { 'Content-Type': 'image/png' } });
    const postForm = new FormData();
    for (const [name, value] of Object.entries(post.fields)) postForm.append(name, value);
    postForm.append('file', new Blob([fake]), 'posted.png');
    expect((await fetch(post.url, { method: 'POST', body: postForm })).status).toBe(400);

    expect(await files(dev, bucket.id)).toEqual([]);
    expect(await usedBytes(user)).toBe(0);
  });

  it('a type the bucket does not take is refused before the body is read, naming the allowed types; a generic one by its bytes', async () => {
    const { dev, bucket, s3 } = await setUp({ allowed_types: ['image/png', 'application/pdf'] });
    const declared = await dev(`/${bucket.id}/files/notes.txt`, { method: 'PUT', body: text(100), headers: { 'content-type': 'text/plain' } });
    expect(declared.status).toBe(415);
    expect((await json(declared)).error).toBe('File type text/plain is not allowed in this bucket (allowed: image/png, application/pdf)');
    const detected = await dev(`/${bucket.id}/files/blob`, { method: 'PUT', body: text(100), headers: { 'content-type': 'application/octet-stream' } });
    expect(detected.status).toBe(415);
    expect((await json(detected)).error).toBe('File type application/octet-stream is not allowed in this bucket (allowed: image/png, application/pdf)');
    expect(await s3Error(s3.send(new CreateMultipartUploadCommand({ Bucket: bucket.name, Key: 'notes.txt', ContentType: 'text/plain' })))).toMatchObject({
      name: 'InvalidArgument',
      status: 400,
    });
    expect(
      (await dev(`/${bucket.id}/files/doc.pdf`, { method: 'PUT', body: Buffer.from('%PDF-1.7\n...'), headers: { 'content-type': 'application/pdf' } })).status,
    ).toBe(201);
    expect((await files(dev, bucket.id)).map((file) => file.filename)).toEqual(['doc.pdf']);
  });

  it('a PATCH is in force for the very next upload', async () => {
    const { dev, bucket } = await setUp();
    expect((await dev(`/${bucket.id}/files/one.txt`, { method: 'PUT', body: text(10), headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    await dev(`/${bucket.id}`, { method: 'PATCH', body: JSON.stringify({ allowed_types: ['image/*'] }) });
    expect((await dev(`/${bucket.id}/files/two.txt`, { method: 'PUT', body: text(10), headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    await dev(`/${bucket.id}`, { method: 'PATCH', body: JSON.stringify({ allowed_types: null }) });
    expect((await dev(`/${bucket.id}/files/three.txt`, { method: 'PUT', body: text(10), headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  });
});

describe('S3 multipart uploads and the bucket limits', () => {
  /** A multipart upload of `parts` as one object under `key`; resolves with Complete's answer. */
  async function multipart(s3: S3Client, bucket: string, key: string, parts: Buffer[], contentType?: string) {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }));
    const listed = [];
    for (const [index, part] of parts.entries()) {
      const sent = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: index + 1, Body: part }));
      listed.push({ ETag: sent.ETag, PartNumber: index + 1 });
    }
    return s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: listed } }));
  }

  it('the assembled object over max_file_bytes is EntityTooLarge at Complete, and no object appears', async () => {
    const { dev, bucket, s3 } = await setUp({ max_file_bytes: 6 * 1024 * 1024 });
    const refused = await s3Error(multipart(s3, bucket.name, 'big.bin', [randomBytes(5 * 1024 * 1024), randomBytes(2 * 1024 * 1024)]));
    expect(refused).toMatchObject({ name: 'EntityTooLarge', status: 400 });
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: bucket.name, Key: 'big.bin' })))).toMatchObject({ status: 404 });
    expect(await files(dev, bucket.id)).toEqual([]);
  });

  it('the first bytes decide the type at Complete: text parts declared image/png are refused, PNG parts declared generic become image/png', async () => {
    const { dev, bucket, s3 } = await setUp({ allowed_types: ['image/*'] });
    const fake = await s3Error(multipart(s3, bucket.name, 'fake.png', [text(5 * 1024 * 1024), text(100)], 'image/png'));
    expect(fake).toMatchObject({ name: 'InvalidArgument', status: 400, message: "The file's content is not image/png, as declared" });
    await multipart(s3, bucket.name, 'real', [png(5 * 1024 * 1024), randomBytes(100)], 'application/octet-stream');
    expect((await files(dev, bucket.id)).map((file) => [file.filename, file.content_type])).toEqual([['real', 'image/png']]);
  });
});
