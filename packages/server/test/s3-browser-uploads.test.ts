/**
 * Browser uploads through the S3 API (issue 24): presigned POST forms made
 * by @aws-sdk/s3-presigned-post and posted with fetch and FormData as a
 * browser page would, and bucket CORS (the SDK's Put/Get/DeleteBucketCors,
 * preflights, and the headers on actual requests). The same uploads from a
 * real page in Chromium are in s3-browser-uploads-chromium.test.ts.
 */
import {
  CreateBucketCommand,
  DeleteBucketCorsCommand,
  GetBucketCorsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { createPresignedPost, type PresignedPostOptions } from '@aws-sdk/s3-presigned-post';
import { createHash } from 'node:crypto';
import os from 'node:os';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';
import { missing, ok, PYTHON_BOTO3, required, run } from './helpers/s3-tools.js';

let server: TestServer;
let s3Url: string;
let alice: TestUser;
let s3: S3Client;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3Url = server.s3Url;
  alice = await signUp(server.url);
  s3 = sdkClient(s3Url, alice);
});
afterAll(() => server.close());

let bucketCount = 0;
async function newBucket(): Promise<string> {
  const name = `post-test-${++bucketCount}-${Date.now().toString(36)}`;
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  return name;
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

/** A form as a browser page builds it: the presigned fields, then (last) the file. */
async function postForm(url: string, fields: Record<string, string>, file: Buffer, filename = 'photo.png', extra: Record<string, string> = {}) {
  const form = new FormData();
  for (const [name, value] of Object.entries({ ...fields, ...extra })) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(file)]), filename);
  return fetch(url, { method: 'POST', body: form, redirect: 'manual' });
}

const errorCode = async (response: Response) => /<Code>([^<]*)<\/Code>/.exec(await response.text())?.[1];
const exists = (bucket: string, key: string) =>
  s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
    () => true,
    () => false,
  );
const presign = (options: PresignedPostOptions) => createPresignedPost(s3, options);

/** The presigned fields and then the file (a Blob, with its own type when given one). */
function formOf(fields: Record<string, string>, file: Blob, filename = 'a.txt'): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', file, filename);
  return form;
}

/**
 * A SigV4 form from boto3 posted as ceph/s3-tests posts its forms: requests'
 * files= gives every part, fields included, a filename. Prints {case: [status, body]}.
 */
const PYTHON_FORM = `
import boto3, json, os, requests
from botocore.config import Config
from collections import OrderedDict
s3 = boto3.client('s3', endpoint_url=os.environ['PAIL_S3_URL'], region_name='us-east-1',
    aws_access_key_id=os.environ['PAIL_ACCESS_KEY_ID'], aws_secret_access_key=os.environ['PAIL_SECRET_ACCESS_KEY'],
    config=Config(signature_version='s3v4', s3={'addressing_style': 'path'}))
out = {}
for case, content_type in (('text', 'text/plain'), ('image', 'image/png')):
    post = s3.generate_presigned_post(os.environ['PAIL_BUCKET'], 'py/' + case + '.txt',
        Conditions=[['starts-with', '$Content-Type', 'text/']], ExpiresIn=300)
    parts = OrderedDict(post['fields'])
    parts['Content-Type'] = content_type
    parts['file'] = ('foo.txt', 'bar')
    r = requests.post(post['url'], files=parts)
    out[case] = [r.status_code, r.text]
print(json.dumps(out))
`;

describe('presigned POST', () => {
  it('stores the file: 201 with a PostResponse, the S3 ETag, Content-Type and x-amz-meta-* fields kept', async () => {
    const bucket = await newBucket();
    const bytes = Buffer.from('a small picture');
    const { url, fields } = await presign({
      Bucket: bucket,
      Key: 'uploads/${filename}',
      Conditions: [
        ['starts-with', '$Content-Type', 'image/'],
        ['content-length-range', 1, 1024],
        { success_action_status: '201' },
        { 'x-amz-meta-by': 'alice' },
      ],
      Fields: { success_action_status: '201', 'Content-Type': 'image/png', 'x-amz-meta-by': 'alice' },
    });
    expect(url).toBe(`${s3Url}/${bucket}`);
    const response = await postForm(url, fields, bytes, 'cat.png');
    const body = await response.text();
    expect(response.status).toBe(201);
    const md5 = createHash('md5').update(bytes).digest('hex');
    expect(response.headers.get('etag')).toBe(`"${md5}"`);
    expect(body).toContain('<PostResponse>');
    expect(body).toContain('<Key>uploads/cat.png</Key>');
    expect(body).toContain(`<Bucket>${bucket}</Bucket>`);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'uploads/cat.png' }));
    expect(await got.Body?.transformToString()).toBe('a small picture');
    expect(got.ContentType).toBe('image/png');
    expect(got.ETag).toBe(`"${md5}"`);
    expect(got.Metadata).toEqual({ by: 'alice' });
  });

  it('answers 204 by default, and 303 to success_action_redirect with bucket, key and etag', async () => {
    const bucket = await newBucket();
    const plain = await presign({ Bucket: bucket, Key: 'a.txt' });
    const first = await postForm(plain.url, plain.fields, Buffer.from('one'));
    expect(first.status).toBe(204);
    expect(await exists(bucket, 'a.txt')).toBe(true);

    const redirected = await presign({
      Bucket: bucket,
      Key: 'b.txt',
      Fields: { success_action_redirect: 'https://app.example/done' },
    });
    const second = await postForm(redirected.url, redirected.fields, Buffer.from('two'));
    expect(second.status).toBe(303);
    const location = new URL(second.headers.get('location') ?? '');
    expect(location.origin + location.pathname).toBe('https://app.example/done');
    expect(location.searchParams.get('bucket')).toBe(bucket);
    expect(location.searchParams.get('key')).toBe('b.txt');
    expect(location.searchParams.get('etag')).toBe(`"${createHash('md5').update('two').digest('hex')}"`);
  });

  it('refuses a file outside content-length-range (EntityTooLarge / EntityTooSmall) and stores nothing', async () => {
    const bucket = await newBucket();
    const { url, fields } = await presign({ Bucket: bucket, Key: 'sized.bin', Conditions: [['content-length-range', 10, 100]] });
    const large = await postForm(url, fields, Buffer.alloc(101, 1));
    expect(large.status).toBe(400);
    expect(await errorCode(large)).toBe('EntityTooLarge');
    const small = await postForm(url, fields, Buffer.alloc(9, 1));
    expect(small.status).toBe(400);
    expect(await errorCode(small)).toBe('EntityTooSmall');
    expect(await exists(bucket, 'sized.bin')).toBe(false);
    // A large file past the range (beyond what is kept inline) is refused too.
    const { url: url2, fields: fields2 } = await presign({ Bucket: bucket, Key: 'big.bin', Conditions: [['content-length-range', 0, 200_000]] });
    const big = await postForm(url2, fields2, Buffer.alloc(300_000, 2));
    expect(await errorCode(big)).toBe('EntityTooLarge');
    expect(await exists(bucket, 'big.bin')).toBe(false);
    const ok = await postForm(url, fields, Buffer.alloc(50, 1));
    expect(ok.status).toBe(204);
  });

  it('refuses an expired policy, a tampered policy and a key outside its starts-with condition', async () => {
    const bucket = await newBucket();
    const expired = await presign({ Bucket: bucket, Key: 'late.txt', Expires: -60 });
    const late = await postForm(expired.url, expired.fields, Buffer.from('x'));
    expect(late.status).toBe(403);
    const lateBody = await late.text();
    expect(lateBody).toContain('<Code>AccessDenied</Code>');
    expect(lateBody).toContain('Invalid according to Policy: Policy expired.');

    const good = await presign({ Bucket: bucket, Key: 'user/${filename}' });
    const policy = JSON.parse(Buffer.from(good.fields.Policy ?? '', 'base64').toString()) as { conditions: unknown[] };
    policy.conditions = policy.conditions.map((c) => (Array.isArray(c) && c[1] === '$key' ? ['starts-with', '$key', ''] : c));
    const tampered = await postForm(
      good.url,
      { ...good.fields, Policy: Buffer.from(JSON.stringify(policy)).toString('base64'), key: 'elsewhere.txt' },
      Buffer.from('x'),
    );
    expect(tampered.status).toBe(403);
    expect(await errorCode(tampered)).toBe('SignatureDoesNotMatch');

    const outside = await postForm(good.url, { ...good.fields, key: 'admin/evil.txt' }, Buffer.from('x'));
    expect(outside.status).toBe(403);
    const outsideBody = await outside.text();
    // The message names the condition (quotes escaped in the XML).
    expect(outsideBody).toContain('Invalid according to Policy: Policy Condition failed: [&quot;starts-with&quot;,&quot;$key&quot;,&quot;user/&quot;]');
    // A field the policy does not name is refused as well (it could change what is stored).
    const extra = await postForm(good.url, good.fields, Buffer.from('x'), 'a.txt', { 'Content-Type': 'text/html' });
    expect(extra.status).toBe(403);
    expect(await extra.text()).toContain('Extra input fields: content-type');
    expect(await exists(bucket, 'admin/evil.txt')).toBe(false);
    expect(await exists(bucket, 'elsewhere.txt')).toBe(false);

    const inside = await postForm(good.url, good.fields, Buffer.from('fine'), 'ok.txt');
    expect(inside.status).toBe(204);
    expect(await exists(bucket, 'user/ok.txt')).toBe(true);

    // A condition object must name exactly one field, as S3 requires: an empty one is a malformed policy.
    for (const condition of [{}, { acl: 'private', key: 'two.txt' }]) {
      const malformed = await presign({ Bucket: bucket, Key: 'two.txt', Conditions: [condition as never] });
      const refused = await postForm(malformed.url, malformed.fields, Buffer.from('x'));
      expect(refused.status).toBe(400);
      const body = await refused.text();
      expect(body).toContain('<Code>InvalidPolicyDocument</Code>');
      expect(body).toContain('Simple-Conditions must have exactly one property specified.');
    }
    expect(await exists(bucket, 'two.txt')).toBe(false);
  });

  it('refuses a form whose file is not last, one without a file, and a body that is not multipart', async () => {
    const bucket = await newBucket();
    const { url, fields } = await presign({ Bucket: bucket, Key: 'first.txt' });
    const fileFirst = new FormData();
    fileFirst.append('file', new Blob(['x']), 'first.txt');
    for (const [name, value] of Object.entries(fields)) fileFirst.append(name, value);
    const first = await fetch(url, { method: 'POST', body: fileFirst });
    expect(first.status).toBe(400);
    const noFile = new FormData();
    for (const [name, value] of Object.entries(fields)) noFile.append(name, value);
    const none = await fetch(url, { method: 'POST', body: noFile });
    expect(none.status).toBe(400);
    const broken = await fetch(url, { method: 'POST', body: '--b\r\nnonsense', headers: { 'content-type': 'multipart/form-data; boundary=b' } });
    expect(broken.status).toBe(400);
    expect(await exists(bucket, 'first.txt')).toBe(false);
  });

  it('a ["starts-with", "$Content-Type", prefix] condition is met by the form\'s Content-Type field, which the object is stored with', async () => {
    const bucket = await newBucket();
    const form = (key: string, prefix: string) => presign({ Bucket: bucket, Key: key, Conditions: [['starts-with', '$Content-Type', prefix]] });
    const text = await form('notes.txt', 'text/');
    const stored = await postForm(text.url, text.fields, Buffer.from('some notes'), 'notes.txt', { 'Content-Type': 'text/markdown' });
    expect(stored.status).toBe(204);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'notes.txt' }));
    expect(got.ContentType).toBe('text/markdown');
    expect(await got.Body?.transformToString()).toBe('some notes');

    // Another type, or none (the file part's own type is not the field), fails the condition and stores nothing.
    const failed = 'Invalid according to Policy: Policy Condition failed: [&quot;starts-with&quot;,&quot;$Content-Type&quot;,&quot;text/&quot;]';
    const other = await form('other.txt', 'text/');
    const image = await postForm(other.url, other.fields, Buffer.from('x'), 'other.txt', { 'Content-Type': 'image/png' });
    expect(image.status).toBe(403);
    const imageBody = await image.text();
    expect(imageBody).toContain('<Code>AccessDenied</Code>');
    expect(imageBody).toContain(failed);
    const none = await fetch(other.url, { method: 'POST', body: formOf(other.fields, new Blob(['x'], { type: 'text/plain' })) });
    expect(none.status).toBe(403);
    expect(await none.text()).toContain(failed);
    expect(await exists(bucket, 'other.txt')).toBe(false);

    // An empty prefix allows any value, and no field at all (then the type is the key's, as for PutObject).
    const any = await form('any.bin', '');
    expect((await postForm(any.url, any.fields, Buffer.from('png?'), 'any.bin', { 'Content-Type': 'image/png' })).status).toBe(204);
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'any.bin' }))).ContentType).toBe('image/png');
    const untyped = await form('untyped.json', '');
    expect((await postForm(untyped.url, untyped.fields, Buffer.from('{}'), 'untyped.json')).status).toBe(204);
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'untyped.json' }))).ContentType).toBe('application/json');
  });

  it.skipIf(missing('python3 with boto3 and requests', PYTHON_BOTO3))(
    "boto3's generate_presigned_post posted by Python's requests with files= (a filename on every part): each part is a field by its name",
    async () => {
      const bucket = await newBucket();
      const result = await run(required('python3 with boto3', PYTHON_BOTO3), ['-c', PYTHON_FORM], {
        HOME: os.tmpdir(),
        PAIL_S3_URL: s3Url,
        PAIL_ACCESS_KEY_ID: alice.accessKeyId,
        PAIL_SECRET_ACCESS_KEY: alice.secretAccessKey,
        PAIL_BUCKET: bucket,
        AWS_CONFIG_FILE: '/dev/null',
        AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
        AWS_EC2_METADATA_DISABLED: 'true',
      });
      const out = JSON.parse(ok(result, 'python form')) as Record<string, [number, string]>;
      expect(out.text?.[0]).toBe(204);
      expect(out.image?.[0]).toBe(403);
      expect(out.image?.[1]).toContain('Invalid according to Policy: Policy Condition failed');
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'py/text.txt' }));
      expect(got.ContentType).toBe('text/plain');
      expect(await got.Body?.transformToString()).toBe('bar');
      expect(await exists(bucket, 'py/image.txt')).toBe(false);
    },
  );

  describe('checksum fields (x-amz-checksum-*), verified as PutObject verifies its headers', () => {
    const crc32Of = (data: Buffer) => {
      const digest = Buffer.alloc(4);
      digest.writeUInt32BE(zlib.crc32(data));
      return digest.toString('base64');
    };
    const bytes = Buffer.alloc(300_000, 'x');
    const sha256 = createHash('sha256').update(bytes).digest('base64');
    const crc32 = crc32Of(bytes);

    it('a matching sha256 or crc32 stores the object with its checksum, returned with checksum mode (the policy need not name it)', async () => {
      const bucket = await newBucket();
      for (const [key, field, value] of [
        ['sha.bin', 'x-amz-checksum-sha256', sha256],
        ['crc.bin', 'x-amz-checksum-crc32', crc32],
      ] as const) {
        const { url, fields } = await presign({ Bucket: bucket, Key: key });
        const response = await postForm(url, fields, bytes, key, { [field]: value });
        expect(response.status, await response.clone().text()).toBe(204);
        expect(response.headers.get(field)).toBe(value);
        const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
        expect(field === 'x-amz-checksum-sha256' ? head.ChecksumSHA256 : head.ChecksumCRC32).toBe(value);
        const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
        expect(field === 'x-amz-checksum-sha256' ? got.ChecksumSHA256 : got.ChecksumCRC32).toBe(value);
        expect(Buffer.from((await got.Body?.transformToByteArray()) ?? []).equals(bytes)).toBe(true);
      }
    });

    it("a checksum of other bytes is 400 BadDigest with S3's message for the algorithm, and nothing is stored", async () => {
      const bucket = await newBucket();
      const other = Buffer.from('other bytes');
      for (const [key, field, value, label] of [
        ['bad-sha.bin', 'x-amz-checksum-sha256', createHash('sha256').update(other).digest('base64'), 'SHA256'],
        ['bad-crc.bin', 'x-amz-checksum-crc32', crc32Of(other), 'CRC32'],
      ] as const) {
        const { url, fields } = await presign({ Bucket: bucket, Key: key });
        const response = await postForm(url, fields, bytes, key, { [field]: value });
        expect(response.status).toBe(400);
        const body = await response.text();
        expect(body).toContain('<Code>BadDigest</Code>');
        expect(body).toContain(`The ${label} you specified did not match the calculated checksum.`);
        expect(await exists(bucket, key)).toBe(false);
      }
    });

    it('a malformed checksum, or two of them, is 400 InvalidRequest before a byte is stored', async () => {
      const bucket = await newBucket();
      const { url, fields } = await presign({ Bucket: bucket, Key: 'malformed.bin' });
      const malformed = await postForm(url, fields, bytes, 'malformed.bin', { 'x-amz-checksum-sha256': 'sailorjerry' });
      expect(malformed.status).toBe(400);
      const body = await malformed.text();
      expect(body).toContain('<Code>InvalidRequest</Code>');
      expect(body).toContain('Value for x-amz-checksum-sha256 header is invalid.');
      const two = await postForm(url, fields, bytes, 'malformed.bin', { 'x-amz-checksum-sha256': sha256, 'x-amz-checksum-crc32': crc32 });
      expect(two.status).toBe(400);
      expect(await errorCode(two)).toBe('InvalidRequest');
      expect(await exists(bucket, 'malformed.bin')).toBe(false);
    });

    it('a Content-MD5 field (named by the policy, as every field but the checksums) is checked too', async () => {
      const bucket = await newBucket();
      const md5 = (data: Buffer | string) => createHash('md5').update(data).digest('base64');
      const wrong = await presign({ Bucket: bucket, Key: 'md5.bin', Fields: { 'Content-MD5': md5('other') } });
      const refused = await postForm(wrong.url, wrong.fields, bytes);
      expect(refused.status).toBe(400);
      expect(await errorCode(refused)).toBe('BadDigest');
      expect(await exists(bucket, 'md5.bin')).toBe(false);
      const right = await presign({ Bucket: bucket, Key: 'md5.bin', Fields: { 'Content-MD5': md5(bytes) } });
      expect((await postForm(right.url, right.fields, bytes)).status).toBe(204);
    });

    it('a policy that names the checksum holds the form to it', async () => {
      const bucket = await newBucket();
      const { url, fields } = await presign({ Bucket: bucket, Key: 'named.bin', Fields: { 'x-amz-checksum-sha256': sha256 } });
      const other = await postForm(url, { ...fields, 'x-amz-checksum-sha256': createHash('sha256').update('x').digest('base64') }, bytes);
      expect(other.status).toBe(403);
      expect(await other.text()).toContain('Invalid according to Policy: Policy Condition failed');
      expect((await postForm(url, fields, bytes)).status).toBe(204);
    });
  });
});

/** The bucket's storage_bucket_name (how unsigned requests name it), read from a file url of the Pail API. */
async function storageNameOf(bucket: string): Promise<string> {
  const headers = { 'x-api-key': alice.apiKey };
  const buckets = (await json(await fetch(`${server.url}/api/v1/buckets`, { headers }))).data as { id: number; name: string }[];
  const id = buckets.find((b) => b.name === bucket)?.id;
  const files = (await json(await fetch(`${server.url}/api/v1/buckets/${id}/files`, { headers }))).data as { url: string }[];
  return new URL(files[0]?.url ?? '').pathname.split('/').slice(-2, -1)[0] ?? '';
}

describe('bucket CORS', () => {
  const rules = [
    {
      ID: 'app',
      AllowedOrigins: ['https://app.example', 'https://*.preview.example'],
      AllowedMethods: ['GET', 'PUT', 'POST'],
      AllowedHeaders: ['content-type', 'x-amz-*'],
      ExposeHeaders: ['ETag'],
      MaxAgeSeconds: 600,
    },
    { AllowedOrigins: ['*'], AllowedMethods: ['HEAD'] },
  ];

  it('PutBucketCors, GetBucketCors and DeleteBucketCors round trip; none is NoSuchCORSConfiguration', async () => {
    const bucket = await newBucket();
    expect(await s3Error(s3.send(new GetBucketCorsCommand({ Bucket: bucket })))).toEqual({ name: 'NoSuchCORSConfiguration', status: 404 });
    await s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: rules } }));
    const got = await s3.send(new GetBucketCorsCommand({ Bucket: bucket }));
    expect(got.CORSRules).toEqual([rules[0], { AllowedOrigins: ['*'], AllowedMethods: ['HEAD'] }]);
    const bad = { AllowedOrigins: ['https://*.*.example'], AllowedMethods: ['GET'] };
    expect(await s3Error(s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: [bad] } })))).toMatchObject({ status: 400 });
    const patch = { AllowedOrigins: ['*'], AllowedMethods: ['PATCH'] };
    expect(await s3Error(s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: [patch] } })))).toMatchObject({ status: 400 });
    await s3.send(new DeleteBucketCorsCommand({ Bucket: bucket }));
    expect(await s3Error(s3.send(new GetBucketCorsCommand({ Bucket: bucket })))).toMatchObject({ name: 'NoSuchCORSConfiguration' });
  });

  it('answers preflights by the rules (storage name), and adds Access-Control-Allow-Origin to actual requests', async () => {
    const bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'pic.txt', Body: 'picture' }));
    const storageName = await storageNameOf(bucket);
    const objectUrl = `${s3Url}/${storageName}/pic.txt`;
    const preflight = (origin: string, method: string, headers?: string) =>
      fetch(objectUrl, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': method, ...(headers ? { 'access-control-request-headers': headers } : {}) },
      });

    const disabled = await preflight('https://app.example', 'PUT');
    expect(disabled.status).toBe(403);
    expect(await errorCode(disabled)).toBe('CORSResponse');

    await s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: rules } }));
    const allowed = await preflight('https://app.example', 'PUT', 'Content-Type, X-Amz-Date');
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(allowed.headers.get('access-control-allow-methods')).toBe('GET, PUT, POST');
    expect(allowed.headers.get('access-control-allow-headers')).toBe('content-type, x-amz-date');
    expect(allowed.headers.get('access-control-max-age')).toBe('600');
    expect(allowed.headers.get('vary')).toContain('Origin');
    const wildcard = await preflight('https://pr-7.preview.example', 'POST');
    expect(wildcard.headers.get('access-control-allow-origin')).toBe('https://pr-7.preview.example');
    const anyOrigin = await preflight('https://other.example', 'HEAD');
    expect(anyOrigin.headers.get('access-control-allow-origin')).toBe('*');

    for (const refused of [
      await preflight('https://evil.example', 'PUT'),
      await preflight('https://app.example', 'DELETE'),
      await preflight('https://app.example', 'PUT', 'authorization-extra'),
    ]) {
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('This CORS request is not allowed');
    }

    // An actual signed GET from an allowed origin (by the bucket's name), and an unsigned one refused (private bucket), both carry the headers.
    const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
    const signed = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: 'pic.txt' }), { expiresIn: 60 });
    const get = await fetch(signed, { headers: { origin: 'https://app.example' } });
    expect(get.status).toBe(200);
    expect(get.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(get.headers.get('access-control-expose-headers')).toBe('ETag');
    const denied = await fetch(objectUrl, { headers: { origin: 'https://app.example' } });
    expect(denied.status).toBe(403);
    expect(denied.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const foreign = await fetch(signed, { headers: { origin: 'https://evil.example' } });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a presigned POST from an allowed origin gets Access-Control-Allow-Origin on its answer', async () => {
    const bucket = await newBucket();
    await s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: rules } }));
    const { url, fields } = await presign({ Bucket: bucket, Key: 'from-browser.txt' });
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob(['hello']), 'from-browser.txt');
    const response = await fetch(url, { method: 'POST', body: form, headers: { origin: 'https://app.example' } });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });
});
