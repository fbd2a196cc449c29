/**
 * Where ceph/s3-tests found the S3 door answering otherwise than S3 does
 * (issue 35): each behaviour as a client sees it, through the AWS SDK or a
 * raw signed request where the SDK would not send what the tools send.
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  GetObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { signRequest } from './helpers/s3-signing.js';
import { missing, ok, PYTHON_BOTO3, required, run } from './helpers/s3-tools.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let alice: TestUser;
let s3: S3Client;
let bucket: string;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  alice = await signUp(server.url);
  s3 = sdkClient(server.s3Url!, alice);
  bucket = `as-s3-${Date.now()}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
});
afterAll(() => server.close());

describe('objects as S3 keeps them', () => {
  it('keeps empty x-amz-meta-* values and returns them', async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'meta-empty', Body: 'x', Metadata: { meta1: '', meta2: 'two' } }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'meta-empty' }));
    expect(head.Metadata).toEqual({ meta1: '', meta2: 'two' });
  });

  it('keeps Content-Language, and sends no Cache-Control for an object stored without one', async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'lang', Body: 'x', ContentLanguage: 'de-CH' }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'lang' }));
    expect(head.ContentLanguage).toBe('de-CH');
    expect(head.CacheControl).toBeUndefined();
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'lang' }));
    expect(got.CacheControl).toBeUndefined();
    expect(got.ContentLanguage).toBe('de-CH');
    await got.Body!.transformToString();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'cached', Body: 'x', CacheControl: 'max-age=60' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'cached' }))).CacheControl).toBe('max-age=60');
  });

  it('keeps the Content-Encoding list as sent, without aws-chunked', async () => {
    const encodings: [string, string | undefined][] = [
      ['gzip', 'gzip'],
      ['deflate, gzip', 'deflate, gzip'],
      ['gzip, aws-chunked', 'gzip'],
      ['aws-chunked, gzip', 'gzip'],
      ['aws-chunked', undefined],
      ['aws-chunked, aws-chunked', undefined],
    ];
    for (const [sent, kept] of encodings) {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'encoding', Body: 'x', ContentEncoding: sent }));
      expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'encoding' }))).ContentEncoding, sent).toBe(kept);
    }
  });

  it('stores an object sent with an empty Content-Type, with the default type', async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'no-type', Body: 'bar', ContentType: '' }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'no-type' }));
    expect(head.ContentType).toBe('application/octet-stream');
    expect(head.ContentLength).toBe(3);
  });
});

const UNICODE_SCRIPT = `
import boto3, json, os
from botocore.config import Config
s3 = boto3.client('s3', endpoint_url=os.environ['PAIL_S3_URL'], aws_access_key_id=os.environ['PAIL_ACCESS_KEY_ID'],
                  aws_secret_access_key=os.environ['PAIL_SECRET_ACCESS_KEY'], region_name='us-east-1',
                  config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))
bucket = os.environ['PAIL_BUCKET']
# As s3-tests sets it: the header itself, which botocore sends and signs as UTF-8.
def unicode_metadata(**kwargs):
    kwargs['params']['headers']['x-amz-meta-meta1'] = u"Hello World\\xe9"
    kwargs['params']['headers']['x-amz-meta-meta2'] = u"\\u2615 coffee"
s3.meta.events.register('before-call.s3.PutObject', unicode_metadata)
s3.put_object(Bucket=bucket, Key='unicode-meta', Body=b'bar')
print(json.dumps(s3.get_object(Bucket=bucket, Key='unicode-meta')['Metadata']))
`;

describe('metadata beyond ASCII', () => {
  it.skipIf(missing('boto3 (python3-boto3)', PYTHON_BOTO3))('UTF-8 metadata from boto3 is signed as its bytes, kept, and read back', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-unicode-'));
    const script = path.join(dir, 'unicode.py');
    await writeFile(script, UNICODE_SCRIPT);
    const result = await run(required('python3 with boto3', PYTHON_BOTO3), [script], {
      HOME: dir,
      PAIL_S3_URL: server.s3Url!,
      PAIL_ACCESS_KEY_ID: alice.accessKeyId,
      PAIL_SECRET_ACCESS_KEY: alice.secretAccessKey,
      PAIL_BUCKET: bucket,
      AWS_CONFIG_FILE: path.join(dir, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'none'),
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    // boto3 reads header bytes as latin1: é comes back as itself; ☕ cannot be one byte, so it comes RFC 2047 encoded.
    expect(JSON.parse(ok(result, 'boto3 unicode metadata'))).toEqual({
      meta1: 'Hello World\u00e9',
      meta2: `=?UTF-8?B?${Buffer.from('\u2615 coffee').toString('base64')}?=`,
    });
  });

  it('latin1 metadata from the AWS SDK for JavaScript is kept and read back', async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'latin1-meta', Body: 'x', Metadata: { place: 'café' } }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'latin1-meta' }))).Metadata).toEqual({ place: 'café' });
  });
});

describe('bodies as S3 takes them', () => {
  it('a PutObject sent chunked, without Content-Length, is stored; with neither it is 411 MissingContentLength', async () => {
    const path = `/${bucket}/chunked.txt`;
    // Signed with Transfer-Encoding, as boto3 signs it when told to send chunked.
    const headers = await signRequest(server.s3Url!, alice, 'PUT', path, {}, { 'transfer-encoding': 'chunked' });
    const pieces = ['first piece, ', 'second piece'];
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${server.s3Url}${path}`, { method: 'PUT', headers }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      request.on('error', reject);
      for (const piece of pieces) request.write(piece);
      request.end();
    });
    expect(status).toBe(200);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'chunked.txt' }));
    expect(await got.Body!.transformToString()).toBe(pieces.join(''));

    // Neither header: raw, as no HTTP client sends a PUT that way on its own.
    const bare = await signRequest(server.s3Url!, alice, 'PUT', `/${bucket}/no-length.txt`);
    const answer = await new Promise<string>((resolve, reject) => {
      const { hostname, port } = new URL(server.s3Url!);
      const socket = connect(Number(port), hostname, () => {
        const lines = Object.entries(bare).map(([name, value]) => `${name}: ${value}\r\n`);
        socket.write(`PUT /${bucket}/no-length.txt HTTP/1.1\r\n${lines.join('')}connection: close\r\n\r\n`);
      });
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 411 /);
    expect(answer).toContain('<Code>MissingContentLength</Code>');
  });
});

describe('keys S3 cannot parse', () => {
  it('a key with control characters, or not UTF-8, is 400 InvalidURI on any operation', async () => {
    for (const key of ['\u00ae\u008a-', 'tab\there']) {
      const error = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })).then(
        () => null,
        (caught: { name: string; message: string; $metadata: { httpStatusCode?: number } }) => caught,
      );
      expect(error, key).toMatchObject({ name: 'InvalidURI', message: "Couldn't parse the specified URI." });
      expect(error?.$metadata.httpStatusCode).toBe(400);
    }
    const signed = await signRequest(server.s3Url!, alice, 'GET', `/${bucket}/bad%FFkey`);
    const raw = await fetch(`${server.s3Url}/${bucket}/bad%FFkey`, { headers: signed });
    expect(raw.status).toBe(400);
    const text = await raw.text();
    expect(text, text).toContain('<Code>InvalidURI</Code>');
  });
});

describe('listings as S3 answers them', () => {
  it('echoes an empty continuation-token and lists from the start', async () => {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: '' }));
    expect(listed.ContinuationToken).toBe('');
    expect(listed.IsTruncated).toBe(false);
    expect(listed.Contents?.length).toBeGreaterThan(0);
  });

  it('pages ListBuckets by max-buckets and continuation-token, in name order, and filters by prefix', async () => {
    const carol = await signUp(server.url);
    const client = sdkClient(server.s3Url!, carol);
    expect((await client.send(new ListBucketsCommand({ MaxBuckets: 1 }))).Buckets).toEqual([]);
    for (const name of ['paged-c', 'paged-a', 'paged-b', 'other-d']) await client.send(new CreateBucketCommand({ Bucket: name }));
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListBucketsCommand({ MaxBuckets: 1, ContinuationToken: token, Prefix: 'paged-' }));
      expect(page.Buckets).toHaveLength(1);
      expect(page.Prefix).toBe('paged-');
      names.push(page.Buckets![0]!.Name!);
      token = page.ContinuationToken;
    } while (token !== undefined);
    expect(names).toEqual(['paged-a', 'paged-b', 'paged-c']);
    const all = await client.send(new ListBucketsCommand({}));
    expect(all.Buckets!.map((b) => b.Name)).toEqual(['other-d', 'paged-a', 'paged-b', 'paged-c']);
    expect(all.ContinuationToken).toBeUndefined();
    const signed = await signRequest(server.s3Url!, carol, 'GET', '/', { 'max-buckets': '0' });
    const bad = await fetch(`${server.s3Url}/?max-buckets=0`, { headers: signed });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('<Code>InvalidArgument</Code>');
  });
});

describe('public buckets named as S3 tools name them', () => {
  it("an unsigned request names a bucket by its own name while no other bucket has had it; later owners' get a suffix, never a reused name", async () => {
    const name = `plain-${Date.now().toString(36)}`;
    const unsigned = (key: string) => fetch(`${server.s3Url}/${name}/${key}`);
    const first = sdkClient(server.s3Url!, await signUp(server.url));
    await first.send(new CreateBucketCommand({ Bucket: name, ACL: 'public-read' }));
    await first.send(new PutObjectCommand({ Bucket: name, Key: 'who.txt', Body: 'first' }));
    const read = await unsigned('who.txt');
    expect(read.status).toBe(200);
    expect(await read.text()).toBe('first');

    // Another owner's bucket of the same name is theirs by name, and not what the plain name reaches.
    const second = sdkClient(server.s3Url!, await signUp(server.url));
    await second.send(new CreateBucketCommand({ Bucket: name, ACL: 'public-read' }));
    await second.send(new PutObjectCommand({ Bucket: name, Key: 'who.txt', Body: 'second' }));
    expect(await (await unsigned('who.txt')).text()).toBe('first');

    // Deleted, the plain name is not given to anyone else.
    await first.send(new DeleteObjectCommand({ Bucket: name, Key: 'who.txt' }));
    await first.send(new DeleteBucketCommand({ Bucket: name }));
    const third = sdkClient(server.s3Url!, await signUp(server.url));
    await third.send(new CreateBucketCommand({ Bucket: name, ACL: 'public-read' }));
    await third.send(new PutObjectCommand({ Bucket: name, Key: 'who.txt', Body: 'third' }));
    const gone = await unsigned('who.txt');
    expect(gone.status).toBe(403);
    expect(await gone.text()).toContain('<Code>AccessDenied</Code>');
  });
});
