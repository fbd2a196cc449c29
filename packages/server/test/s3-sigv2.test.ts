/**
 * AWS Signature Version 2 on the S3 API (issue 35): the Authorization header
 * (`AWS id:signature`), presigned urls (AWSAccessKeyId, Expires, Signature)
 * and POST policies (AWSAccessKeyId, policy, signature), signed here with
 * node:crypto as the SigV2 documentation builds the string to sign
 * (independently of the server's code), and by the real clients that still
 * sign so: AWS CLI v1's `s3 presign`, s3cmd with `signature_v2 = True` and
 * boto3 with `signature_version='s3'`.
 * The same rules as SigV4's hold: the clock, expiry, key limits, and every
 * x-amz-* header signed. S3_API_SIGNATURE_V2=off turns it off (400).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { missing, ok, PYTHON_BOTO3, required, run, S3CMD, s3cmd as makeS3cmd } from './helpers/s3-tools.js';

const DOMAIN = 's3.sigv2.test';

let server: TestServer;
let s3Url: string;
let alice: TestUser;
let bucket: string;
let scratch: string;

interface Key {
  accessKeyId: string;
  secretAccessKey: string;
}

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { S3_API_DOMAIN: DOMAIN } });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3Url = server.s3Url;
  alice = await signUp(server.url);
  bucket = `v2-${randomBytes(4).toString('hex')}`;
  scratch = await mkdtemp(path.join(os.tmpdir(), 'pail-sigv2-'));
  const created = await v2(alice, 'PUT', `/${bucket}`);
  expect(created.status).toBe(200);
});
afterAll(async () => {
  await server?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const hmacSha1 = (secret: string, text: string): string => createHmac('sha1', secret).update(text, 'utf8').digest('base64');

/** CanonicalizedAmzHeaders: every x-amz-* header, lowercased, sorted, `name:value\n`. */
const amzHeaders = (headers: Record<string, string>): string =>
  Object.entries(headers)
    .map(([name, value]) => [name.toLowerCase(), value.trim()] as const)
    .filter(([name]) => name.startsWith('x-amz-'))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]) => `${name}:${value}\n`)
    .join('');

/** SigV2's StringToSign: Method, Content-MD5, Content-Type, Date (or Expires), the x-amz-* headers, the resource. */
function stringToSign(method: string, headers: Record<string, string>, date: string, resource: string): string {
  const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return `${method}\n${lower['content-md5'] ?? ''}\n${lower['content-type'] ?? ''}\n${date}\n${amzHeaders(headers)}${resource}`;
}

interface V2Options {
  headers?: Record<string, string>;
  body?: Buffer;
  /** The resource signed, when it is not the url's path (sub-resources such as ?acl). */
  resource?: string;
  /** Headers added after signing. */
  unsigned?: Record<string, string>;
  /** Sign with another secret. */
  secret?: string;
  date?: Date;
}

/** A request signed with SigV2 in its Authorization header. `pathAndQuery` is sent as it is. */
async function v2(key: Key, method: string, pathAndQuery: string, options: V2Options = {}, base = s3Url): Promise<Response> {
  const headers = { date: (options.date ?? new Date()).toUTCString(), ...options.headers };
  const resource = options.resource ?? pathAndQuery.split('?')[0]!;
  const signature = hmacSha1(options.secret ?? key.secretAccessKey, stringToSign(method, headers, headers.date, resource));
  return fetch(`${base}${pathAndQuery}`, {
    method,
    headers: { ...headers, ...options.unsigned, authorization: `AWS ${key.accessKeyId}:${signature}` },
    ...(options.body ? { body: options.body as BodyInit } : {}),
  });
}

/** A SigV2 presigned url for `method` on `resource`, good until `expires` (seconds since the epoch). */
function presign(key: Key, method: string, resource: string, expires: number, headers: Record<string, string> = {}): string {
  const signature = hmacSha1(key.secretAccessKey, stringToSign(method, headers, String(expires), resource));
  return `${s3Url}${resource}?AWSAccessKeyId=${key.accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(signature)}`;
}

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

async function errorOf(response: Response): Promise<{ status: number; code: string | undefined; message: string | undefined }> {
  const body = await response.text();
  return { status: response.status, code: /<Code>([^<]*)<\/Code>/.exec(body)?.[1], message: /<Message>([^<]*)<\/Message>/.exec(body)?.[1] };
}

async function makeKey(limits: { buckets?: number[]; permissions?: string[] }): Promise<Key> {
  const created = await fetch(`${server.url}/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'limited', ...limits }),
  });
  expect(created.status).toBe(201);
  const { access_key_id, secret_access_key } = (await json(created)).data as { access_key_id: string; secret_access_key: string };
  return { accessKeyId: access_key_id, secretAccessKey: secret_access_key };
}

describe('SigV2 in the Authorization header', () => {
  it('PUT, GET, HEAD, list and DELETE an object', async () => {
    const bytes = randomBytes(5000);
    const put = await v2(alice, 'PUT', `/${bucket}/dir/caf%C3%A9.bin`, {
      headers: { 'content-type': 'application/x-test', 'x-amz-meta-colour': 'blue' },
      body: bytes,
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('etag')).toBe(`"${createHash('md5').update(bytes).digest('hex')}"`);

    const get = await v2(alice, 'GET', `/${bucket}/dir/caf%C3%A9.bin`);
    expect(get.status).toBe(200);
    expect(Buffer.from(await get.arrayBuffer())).toEqual(bytes);
    expect(get.headers.get('x-amz-meta-colour')).toBe('blue');

    const head = await v2(alice, 'HEAD', `/${bucket}/dir/caf%C3%A9.bin`);
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/x-test');
    expect(head.headers.get('content-length')).toBe('5000');

    const listed = await v2(alice, 'GET', `/${bucket}?prefix=dir%2F`);
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain('<Key>dir/café.bin</Key>');
    const buckets = await v2(alice, 'GET', '/');
    expect(await buckets.text()).toContain(`<Name>${bucket}</Name>`);

    expect((await v2(alice, 'DELETE', `/${bucket}/dir/caf%C3%A9.bin`)).status).toBe(204);
    expect((await v2(alice, 'HEAD', `/${bucket}/dir/caf%C3%A9.bin`)).status).toBe(404);
  });

  it('a sub-resource is part of the resource signed (?acl), and x-amz-date stands in for Date', async () => {
    const acl = await v2(alice, 'GET', `/${bucket}?acl`, { resource: `/${bucket}?acl` });
    expect(acl.status).toBe(200);
    expect(await acl.text()).toContain('<AccessControlPolicy');
    // Signed without the sub-resource: another request than the one sent.
    expect(await errorOf(await v2(alice, 'GET', `/${bucket}?acl`, { resource: `/${bucket}` }))).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    // With x-amz-date, the Date line is empty (and x-amz-date is among the signed x-amz-* headers).
    const amzDate = new Date().toUTCString();
    const signature = hmacSha1(alice.secretAccessKey, stringToSign('GET', { 'x-amz-date': amzDate }, '', `/${bucket}`));
    const response = await fetch(`${s3Url}/${bucket}`, { headers: { 'x-amz-date': amzDate, authorization: `AWS ${alice.accessKeyId}:${signature}` } });
    expect(response.status).toBe(200);
  });

  it('virtual-hosted style signs /<bucket>/<key>', async () => {
    expect((await v2(alice, 'PUT', `/${bucket}/vhost.txt`, { body: Buffer.from('by host') })).status).toBe(200);
    const date = new Date().toUTCString();
    const signature = hmacSha1(alice.secretAccessKey, stringToSign('GET', {}, date, `/${bucket}/vhost.txt`));
    const { port } = new URL(s3Url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/vhost.txt',
          headers: { host: `${bucket}.${DOMAIN}:${port}`, date, authorization: `AWS ${alice.accessKeyId}:${signature}` },
        },
        (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(answer).toEqual({ status: 200, body: 'by host' });
  });

  it('a wrong signature is 403 SignatureDoesNotMatch, an unknown key 403 InvalidAccessKeyId, a malformed header 400', async () => {
    expect(await errorOf(await v2(alice, 'GET', `/${bucket}`, { secret: 'not the secret' }))).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    const stranger = { accessKeyId: 'AAAAAAAAAAAAAAAAAAAA', secretAccessKey: 'whatever' };
    expect(await errorOf(await v2(stranger, 'GET', `/${bucket}`))).toMatchObject({ status: 403, code: 'InvalidAccessKeyId' });
    const malformed = await fetch(`${s3Url}/${bucket}`, { headers: { authorization: 'AWS HAHAHA', date: new Date().toUTCString() } });
    expect(await errorOf(malformed)).toMatchObject({ status: 400, code: 'InvalidArgument' });
  });

  it('a Date or x-amz-date more than 15 minutes off is 403 RequestTimeTooSkewed; none, or one that is no date, 403 AccessDenied', async () => {
    const skewed = new Date(Date.now() - 20 * 60 * 1000);
    expect(await errorOf(await v2(alice, 'GET', `/${bucket}`, { date: skewed }))).toMatchObject({ status: 403, code: 'RequestTimeTooSkewed' });
    const ahead = new Date(Date.now() + 20 * 60 * 1000).toUTCString();
    expect(await errorOf(await v2(alice, 'GET', `/${bucket}`, { headers: { 'x-amz-date': ahead } }))).toMatchObject({
      status: 403,
      code: 'RequestTimeTooSkewed',
    });
    expect(await errorOf(await v2(alice, 'GET', `/${bucket}`, { headers: { 'x-amz-date': 'Bad Date' } }))).toMatchObject({ status: 403, code: 'AccessDenied' });
    const signature = hmacSha1(alice.secretAccessKey, stringToSign('GET', {}, '', `/${bucket}`));
    const undated = await fetch(`${s3Url}/${bucket}`, { headers: { authorization: `AWS ${alice.accessKeyId}:${signature}` } });
    expect(await errorOf(undated)).toMatchObject({ status: 403, code: 'AccessDenied' });
  });

  it('an x-amz-copy-source added to a signed PUT fails the signature, and nothing is copied', async () => {
    expect((await v2(alice, 'PUT', `/${bucket}/source.txt`, { body: Buffer.from('secret bytes') })).status).toBe(200);
    const copy = await v2(alice, 'PUT', `/${bucket}/copied.txt`, { body: Buffer.from('x'), unsigned: { 'x-amz-copy-source': `/${bucket}/source.txt` } });
    expect(await errorOf(copy)).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    const url = presign(alice, 'PUT', `/${bucket}/copied.txt`, inAnHour());
    const presigned = await fetch(url, { method: 'PUT', headers: { 'x-amz-copy-source': `/${bucket}/source.txt` } });
    expect(await errorOf(presigned)).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect((await v2(alice, 'HEAD', `/${bucket}/copied.txt`)).status).toBe(404);
    // Signed, the same header copies: the signature covered it.
    const signed = await v2(alice, 'PUT', `/${bucket}/copied.txt`, { headers: { 'x-amz-copy-source': `/${bucket}/source.txt` } });
    expect(signed.status).toBe(200);
    expect(await (await v2(alice, 'GET', `/${bucket}/copied.txt`)).text()).toBe('secret bytes');
  });

  it('Content-MD5 is checked when sent: a wrong one is 400 BadDigest and nothing is stored', async () => {
    const wrong = createHash('md5').update('other bytes').digest('base64');
    const put = await v2(alice, 'PUT', `/${bucket}/digest.txt`, { headers: { 'content-md5': wrong }, body: Buffer.from('these bytes') });
    expect(await errorOf(put)).toMatchObject({ status: 400, code: 'BadDigest' });
    expect((await v2(alice, 'HEAD', `/${bucket}/digest.txt`)).status).toBe(404);
  });

  it('a key limited to one bucket and to reading is held to it', async () => {
    const other = `v2-other-${randomBytes(3).toString('hex')}`;
    expect((await v2(alice, 'PUT', `/${other}`)).status).toBe(200);
    expect((await v2(alice, 'PUT', `/${bucket}/readable.txt`, { body: Buffer.from('read me') })).status).toBe(200);
    const buckets = (await json(await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': alice.apiKey } }))).data as {
      id: number;
      name: string;
    }[];
    const limited = await makeKey({ buckets: [buckets.find((b) => b.name === bucket)!.id], permissions: ['read'] });

    expect(await (await v2(limited, 'GET', `/${bucket}/readable.txt`)).text()).toBe('read me');
    expect(await errorOf(await v2(limited, 'PUT', `/${bucket}/written.txt`, { body: Buffer.from('no') }))).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(await errorOf(await v2(limited, 'GET', `/${other}?list-type=2`))).toMatchObject({ status: 404, code: 'NoSuchBucket' });
    const url = presign(limited, 'PUT', `/${bucket}/written.txt`, inAnHour());
    expect(await errorOf(await fetch(url, { method: 'PUT', body: Buffer.from('no') }))).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect((await v2(alice, 'HEAD', `/${bucket}/written.txt`)).status).toBe(404);
  });
});

describe('SigV2 presigned urls', () => {
  it('GET with Expires returns the bytes; with response-* overrides signed as sub-resources', async () => {
    const bytes = randomBytes(2000);
    expect((await v2(alice, 'PUT', `/${bucket}/shared.bin`, { body: bytes })).status).toBe(200);
    const got = await fetch(presign(alice, 'GET', `/${bucket}/shared.bin`, inAnHour()));
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);

    const expires = inAnHour();
    const signature = hmacSha1(alice.secretAccessKey, stringToSign('GET', {}, String(expires), `/${bucket}/shared.bin?response-content-type=text/x-shared`));
    const overridden = await fetch(
      `${s3Url}/${bucket}/shared.bin?response-content-type=text%2Fx-shared&AWSAccessKeyId=${alice.accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(signature)}`,
    );
    expect(overridden.status).toBe(200);
    expect(overridden.headers.get('content-type')).toBe('text/x-shared');
  });

  it('a presigned PUT stores the bytes', async () => {
    const put = await fetch(presign(alice, 'PUT', `/${bucket}/uploaded.txt`, inAnHour()), { method: 'PUT', body: Buffer.from('via url') });
    expect(put.status).toBe(200);
    expect(await (await v2(alice, 'GET', `/${bucket}/uploaded.txt`)).text()).toBe('via url');
  });

  it('an expired url is 403 AccessDenied "Request has expired"; a tampered one 403 SignatureDoesNotMatch', async () => {
    const expired = await fetch(presign(alice, 'GET', `/${bucket}/shared.bin`, Math.floor(Date.now() / 1000) - 10));
    expect(await errorOf(expired)).toEqual({ status: 403, code: 'AccessDenied', message: 'Request has expired' });
    const tampered = presign(alice, 'GET', `/${bucket}/shared.bin`, inAnHour()).replace(/Expires=\d+/, `Expires=${inAnHour() + 60}`);
    expect(await errorOf(await fetch(tampered))).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    const unknown = presign({ accessKeyId: 'AAAAAAAAAAAAAAAAAAAA', secretAccessKey: 'x' }, 'GET', `/${bucket}/shared.bin`, inAnHour());
    expect(await errorOf(await fetch(unknown))).toMatchObject({ status: 403, code: 'InvalidAccessKeyId' });
    // No url lives longer than a SigV4 one may (7 days).
    const tooLong = presign(alice, 'GET', `/${bucket}/shared.bin`, Math.floor(Date.now() / 1000) + 8 * 24 * 3600);
    expect((await fetch(tooLong)).status).toBe(403);
  });
});

describe('SigV2 POST policies', () => {
  /** A form signed with SigV2: the fields, then the policy, its signature and the file (last). */
  async function post(fields: Record<string, string>, conditions: unknown[], file: Buffer, secret = alice.secretAccessKey): Promise<Response> {
    const policy = Buffer.from(JSON.stringify({ expiration: new Date(Date.now() + 3600_000).toISOString(), conditions })).toString('base64');
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('AWSAccessKeyId', alice.accessKeyId);
    form.append('policy', policy);
    form.append('signature', hmacSha1(secret, policy));
    form.append('file', new Blob([file as BlobPart]), 'photo.png');
    return fetch(`${s3Url}/${bucket}`, { method: 'POST', body: form });
  }

  it('uploads the file; a failed condition is 403 AccessDenied and stores nothing; a wrong signature 403', async () => {
    const conditions = [{ bucket }, ['starts-with', '$key', 'uploads/'], ['content-length-range', 1, 10_000]];
    const bytes = randomBytes(3000);
    const posted = await post({ key: 'uploads/${filename}' }, conditions, bytes);
    expect(posted.status).toBe(204);
    const back = await v2(alice, 'GET', `/${bucket}/uploads/photo.png`);
    expect(Buffer.from(await back.arrayBuffer())).toEqual(bytes);

    const outside = await post({ key: 'elsewhere.png' }, conditions, bytes);
    expect(await errorOf(outside)).toMatchObject({ status: 403, code: 'AccessDenied', message: expect.stringContaining('Policy Condition failed') });
    expect((await v2(alice, 'HEAD', `/${bucket}/elsewhere.png`)).status).toBe(404);

    const forged = await post({ key: 'uploads/forged.png' }, conditions, bytes, 'not the secret');
    expect(await errorOf(forged)).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
  });
});

// AWS CLI v1 signs `s3 presign` with SigV2 unless told otherwise; v2 (Debian's /usr/bin/aws) never does.
const AWS_V1 = process.env.PAIL_TEST_AWS_CLI_V1 ?? '/root/.pyenv/versions/3.11.7/bin/aws';
const awsV1Missing = !existsSync(AWS_V1);
if (awsV1Missing) console.log(`[pail] s3-sigv2: the AWS CLI v1 test is skipped: no AWS CLI v1 at ${AWS_V1} (set PAIL_TEST_AWS_CLI_V1)`);

describe.skipIf(awsV1Missing)('AWS CLI v1', () => {
  it('s3 presign makes a SigV2 url (AWSAccessKeyId=) that fetches the bytes', async () => {
    const version = await run(AWS_V1, ['--version'], { HOME: scratch });
    expect(`${version.stdout}${version.stderr}`).toMatch(/^aws-cli\/1\./);
    const bytes = randomBytes(1234);
    expect((await v2(alice, 'PUT', `/${bucket}/cli.bin`, { body: bytes })).status).toBe(200);
    const home = await mkdtemp(path.join(scratch, 'aws-'));
    await writeFile(path.join(home, 'config'), '[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n');
    await writeFile(path.join(home, 'credentials'), `[default]\naws_access_key_id = ${alice.accessKeyId}\naws_secret_access_key = ${alice.secretAccessKey}\n`);
    const env = {
      HOME: home,
      AWS_CONFIG_FILE: path.join(home, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(home, 'credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    const url = ok(await run(AWS_V1, ['--endpoint-url', s3Url, 's3', 'presign', `s3://${bucket}/cli.bin`], env, 60_000), 'aws s3 presign').trim();
    expect(url).toContain('AWSAccessKeyId=');
    expect(url).not.toContain('X-Amz-');
    const got = await fetch(url);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);
  });
});

describe.skipIf(missing('s3cmd', S3CMD))('s3cmd with signature_v2 = True', () => {
  it('put, ls, get (same bytes)', async () => {
    const s3cmd = await makeS3cmd(await mkdtemp(path.join(scratch, 's3cmd-')), s3Url, alice, { signatureV2: true });
    const local = path.join(s3cmd.home, 'up.bin');
    const bytes = randomBytes(70_000);
    await writeFile(local, bytes);
    const put = await s3cmd(['--debug', 'put', local, `s3://${bucket}/s3cmd/up.bin`]);
    ok(put, 's3cmd put');
    // It did sign with SigV2 (its debug output says so, and shows the string it signed).
    expect(put.stderr).toContain('Using signature v2');
    expect(put.stderr).toContain(`/${bucket}/s3cmd/up.bin'`);
    expect(ok(await s3cmd(['ls', `s3://${bucket}/s3cmd/`]), 's3cmd ls')).toContain(`s3://${bucket}/s3cmd/up.bin`);
    const back = path.join(s3cmd.home, 'down.bin');
    ok(await s3cmd(['get', `s3://${bucket}/s3cmd/up.bin`, back]), 's3cmd get');
    expect(await readFile(back)).toEqual(bytes);
  });
});

/** boto3 signing with SigV2 (as ceph/s3-tests' SigV2 tests do): it signs a bucket as `/bucket/` while sending `/bucket`. */
const BOTO3_V2_SCRIPT = `
import os, sys
import boto3
from botocore.config import Config
s3 = boto3.client('s3', endpoint_url=os.environ['PAIL_S3_URL'], region_name='us-east-1',
    aws_access_key_id=os.environ['PAIL_ACCESS_KEY_ID'], aws_secret_access_key=os.environ['PAIL_SECRET_ACCESS_KEY'],
    config=Config(signature_version='s3', s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))
bucket = os.environ['PAIL_BUCKET']
s3.create_bucket(Bucket=bucket)
s3.put_object(Bucket=bucket, Key='dir/boto.txt', Body=b'signed by boto3', Metadata={'colour': 'red'})
got = s3.get_object(Bucket=bucket, Key='dir/boto.txt')
print(got['Body'].read().decode(), got['Metadata']['colour'])
print(s3.get_bucket_acl(Bucket=bucket)['Owner']['ID'] != '')
print([o['Key'] for o in s3.list_objects(Bucket=bucket, Prefix='dir/')['Contents']])
url = s3.generate_presigned_url('get_object', Params={'Bucket': bucket, 'Key': 'dir/boto.txt'}, ExpiresIn=600)
print(url)
`;

describe.skipIf(missing('python3 with boto3', PYTHON_BOTO3))("boto3 with signature_version='s3'", () => {
  it('create_bucket, put_object, get_object, get_bucket_acl, list_objects, generate_presigned_url', async () => {
    const script = path.join(scratch, 'boto3-v2.py');
    await writeFile(script, BOTO3_V2_SCRIPT);
    const name = `v2-boto-${randomBytes(3).toString('hex')}`;
    const result = await run(required('python3 with boto3', PYTHON_BOTO3), [script], {
      HOME: scratch,
      PAIL_S3_URL: s3Url,
      PAIL_ACCESS_KEY_ID: alice.accessKeyId,
      PAIL_SECRET_ACCESS_KEY: alice.secretAccessKey,
      PAIL_BUCKET: name,
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    const [read, acl, listed, url] = ok(result, 'the boto3 script').trim().split('\n');
    expect([read, acl, listed]).toEqual(['signed by boto3 red', 'True', "['dir/boto.txt']"]);
    expect(url).toContain('AWSAccessKeyId=');
    expect(await (await fetch(url!)).text()).toBe('signed by boto3');
  });
});

describe('S3_API_SIGNATURE_V2=off', () => {
  let off: TestServer;
  let offUrl: string;
  let bob: TestUser;
  beforeAll(async () => {
    off = await startTestServer({ s3: true, env: { S3_API_SIGNATURE_V2: 'off' } });
    offUrl = off.s3Url!;
    bob = await signUp(off.url);
  });
  afterAll(() => off?.close());

  it('answers SigV2 (header, presigned url, POST policy) with 400 saying only Signature Version 4 is accepted', async () => {
    const header = await errorOf(await v2(bob, 'GET', '/', {}, offUrl));
    expect(header).toMatchObject({ status: 400, code: 'InvalidRequest', message: expect.stringContaining('Signature Version 4') });
    const expires = inAnHour();
    const signature = hmacSha1(bob.secretAccessKey, stringToSign('GET', {}, String(expires), '/some/key'));
    const query = await fetch(`${offUrl}/some/key?AWSAccessKeyId=${bob.accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(signature)}`);
    expect(await errorOf(query)).toMatchObject({ status: 400, code: 'InvalidRequest' });
    const form = new FormData();
    form.append('key', 'k');
    form.append('AWSAccessKeyId', bob.accessKeyId);
    form.append('policy', 'e30=');
    form.append('signature', hmacSha1(bob.secretAccessKey, 'e30='));
    form.append('file', new Blob([Buffer.from('x')]), 'x');
    expect(await errorOf(await fetch(`${offUrl}/some`, { method: 'POST', body: form }))).toMatchObject({ status: 400, code: 'InvalidRequest' });
  });
});
