/**
 * The S3 API driven by the real tools people point at it: the AWS CLI, s3cmd,
 * boto3 and rclone, each as a child process with its own configuration in a
 * temporary directory (HOME included: never the user's ~/.aws or ~/.s3cfg),
 * against a real server with its S3 listener on a free port. The AWS CLI's
 * commands run one after another in one warm Python process, each a whole run
 * of the CLI's own script (helpers/s3-tools.ts).
 *
 * A tool that is not installed skips its tests with a printed reason, unless
 * CI is set: then it fails (.ci/run installs them from Debian).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import {
  AWS,
  awsCli as makeAwsCli,
  type AwsCli,
  missing,
  ok,
  PYTHON_BOTO3,
  RCLONE,
  required,
  run,
  S3CMD,
  s3cmd as makeS3cmd,
  type Result,
} from './helpers/s3-tools.js';

let server: TestServer;
let s3Url: string;
let alice: TestUser;
let bob: TestUser;
let scratch: string;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  s3Url = server.s3Url;
  [alice, bob] = await Promise.all([signUp(server.url), signUp(server.url)]);
  scratch = await mkdtemp(path.join(os.tmpdir(), 'pail-s3-tools-'));
});
afterAll(async () => {
  await server?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const bucketName = (tool: string) => `${tool}-${randomBytes(4).toString('hex')}`;

/** A fresh directory under the scratch directory: a tool's HOME and its config files. */
async function home(name: string): Promise<string> {
  const dir = path.join(scratch, `${name}-${randomBytes(3).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** The Pail API id of one of the user's buckets, by name. */
async function bucketId(user: TestUser, name: string): Promise<number> {
  const response = await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } });
  const bucket = ((await json(response)).data as { id: number; name: string }[]).find((b) => b.name === name);
  if (!bucket) throw new Error(`bucket ${name} not found through the Pail API`);
  return bucket.id;
}

/**
 * A bucket made through the Pail API in process, for the s3cmd tests that
 * need one but test something else (s3cmd's mb has a test of its own).
 */
async function makeBucket(user: TestUser, name: string): Promise<void> {
  const response = await server.app.inject({
    method: 'POST',
    url: '/api/v1/buckets',
    headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
    payload: JSON.stringify({ name, visibility: 'private' }),
  });
  if (response.statusCode !== 201) throw new Error(`making bucket ${name}: ${response.statusCode} ${response.body}`);
}

/**
 * Many files at once, through the Pail API's PUT injected in process: the
 * whole request as the server handles it, without a socket for each of
 * thousands of files (much faster than one tool run per file).
 */
async function seed(user: TestUser, id: number, names: string[], concurrency = 32): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++]!;
      const response = await server.app.inject({
        method: 'PUT',
        url: `/api/v1/buckets/${id}/files/${name}`,
        headers: { 'x-api-key': user.apiKey },
        payload: `body of ${name}`,
      });
      if (response.statusCode !== 201) throw new Error(`seeding ${name}: ${response.statusCode} ${response.body}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A local tree of small files with unicode and folder names. */
async function localTree(root: string): Promise<Record<string, Buffer>> {
  const files: Record<string, Buffer> = {
    'café ☕/😀.txt': Buffer.from('smile ☕\n'),
    'a/b/c.txt': Buffer.from('deep\n'),
    'top.bin': randomBytes(50_000),
  };
  for (const [name, bytes] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), bytes);
  }
  return files;
}

// ---------------------------------------------------------------- AWS CLI

/** The AWS CLI for one user, in a fresh HOME with its own config and credentials files. */
const awsCli = async (credentials: { accessKeyId: string; secretAccessKey: string }): Promise<AwsCli> => makeAwsCli(await home('aws'), s3Url, credentials);

describe.skipIf(missing('AWS CLI', AWS))('AWS CLI', () => {
  let aws: AwsCli;
  let bucket: string;
  beforeAll(async () => {
    required('aws', AWS);
    aws = await awsCli(alice);
    bucket = bucketName('aws');
    // The CLI's Python imports happen here, within the hook's time, not the first test's.
    ok(await aws(['--version']), 'aws --version');
  });

  it('mb, cp up and down (unicode names, folders), ls with and without --recursive', async () => {
    ok(await aws(['s3', 'mb', `s3://${bucket}`]), 'aws s3 mb');
    expect(ok(await aws(['s3', 'ls']), 'aws s3 ls')).toContain(bucket);

    const up = path.join(aws.home, 'up');
    const files: Record<string, Buffer> = {
      'café ☕/😀.txt': Buffer.from('smile ☕\n'),
      'a/b/c.txt': Buffer.from('deep\n'),
      'top.bin': randomBytes(70_000),
    };
    for (const [name, bytes] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(up, name)), { recursive: true });
      await writeFile(path.join(up, name), bytes);
    }
    // One file on its own, the rest recursively.
    ok(await aws(['s3', 'cp', path.join(up, 'café ☕/😀.txt'), `s3://${bucket}/café ☕/😀.txt`]), 'aws s3 cp (one file)');
    ok(await aws(['s3', 'cp', '--recursive', up, `s3://${bucket}/`]), 'aws s3 cp --recursive');

    const top = ok(await aws(['s3', 'ls', `s3://${bucket}/`]), 'aws s3 ls');
    expect(top).toMatch(/PRE a\/\n/);
    expect(top).toMatch(/PRE café ☕\/\n/);
    expect(top).toMatch(/ 70000 top\.bin\n/);
    expect(top).not.toContain('c.txt');
    const all = ok(await aws(['s3', 'ls', '--recursive', `s3://${bucket}/`]), 'aws s3 ls --recursive');
    expect(
      all
        .trim()
        .split('\n')
        .map((line) => line.replace(/^\S+ \S+\s+\d+ /, ''))
        .sort(),
    ).toEqual(Object.keys(files).sort());

    // Down: one file, then everything.
    const one = path.join(aws.home, 'one.txt');
    ok(await aws(['s3', 'cp', `s3://${bucket}/café ☕/😀.txt`, one]), 'aws s3 cp (download)');
    expect(await readFile(one)).toEqual(files['café ☕/😀.txt']);
    const down = path.join(aws.home, 'down');
    ok(await aws(['s3', 'cp', '--recursive', `s3://${bucket}/`, down]), 'aws s3 cp --recursive (download)');
    for (const [name, bytes] of Object.entries(files)) expect(await readFile(path.join(down, name)), name).toEqual(bytes);

    // Seen through the Pail API with the same bytes.
    const id = await bucketId(alice, bucket);
    const pail = await fetch(`${server.url}/api/v1/buckets/${id}/files/${encodeURIComponent('café ☕/😀.txt')}`, {
      headers: { 'x-api-key': alice.apiKey },
    });
    expect(pail.status).toBe(200);
    expect(Buffer.from(await pail.arrayBuffer())).toEqual(files['café ☕/😀.txt']);
  });

  it('s3api list-objects-v2: --delimiter /, and paging through 2000 keys (--page-size, --max-items, --starting-token)', async () => {
    const listBucket = bucketName('aws-list');
    ok(await aws(['s3', 'mb', `s3://${listBucket}`]), 'aws s3 mb');
    const names = Array.from({ length: 2000 }, (_, i) => `many/d${i % 10}/k${String(i).padStart(4, '0')}.txt`);
    await seed(alice, await bucketId(alice, listBucket), [...names, 'many/loose.txt']);

    const folders = JSON.parse(
      ok(await aws(['s3api', 'list-objects-v2', '--bucket', listBucket, '--prefix', 'many/', '--delimiter', '/']), 'list-objects-v2 --delimiter'),
    );
    expect(folders.CommonPrefixes.map((p: { Prefix: string }) => p.Prefix)).toEqual(Array.from({ length: 10 }, (_, i) => `many/d${i}/`));
    expect(folders.Contents.map((o: { Key: string }) => o.Key)).toEqual(['many/loose.txt']);

    // All of them, 300 a request: the CLI follows the continuation tokens itself.
    const everything = JSON.parse(
      ok(await aws(['s3api', 'list-objects-v2', '--bucket', listBucket, '--prefix', 'many/d', '--page-size', '300']), 'list-objects-v2 --page-size'),
    );
    expect(everything.Contents.map((o: { Key: string }) => o.Key)).toEqual([...names].sort());
    expect(everything.Contents[0]).toMatchObject({ Size: `body of ${[...names].sort()[0]}`.length });

    // At most 1500, then the rest from the token the CLI hands out.
    const first = JSON.parse(
      ok(
        await aws(['s3api', 'list-objects-v2', '--bucket', listBucket, '--prefix', 'many/d', '--page-size', '400', '--max-items', '1500']),
        'list-objects-v2 --max-items',
      ),
    );
    expect(first.Contents).toHaveLength(1500);
    expect(typeof first.NextToken).toBe('string');
    const rest = JSON.parse(
      ok(
        await aws(['s3api', 'list-objects-v2', '--bucket', listBucket, '--prefix', 'many/d', '--page-size', '400', '--starting-token', first.NextToken]),
        'list-objects-v2 --starting-token',
      ),
    );
    expect([...first.Contents, ...rest.Contents].map((o: { Key: string }) => o.Key)).toEqual([...names].sort());

    // The high-level listing agrees.
    const recursive = ok(await aws(['s3', 'ls', '--recursive', `s3://${listBucket}/many/d3/`]), 'aws s3 ls --recursive');
    expect(recursive.trim().split('\n')).toHaveLength(200);
  });

  it('s3 sync: uploads what changed, then --delete removes what is gone locally', async () => {
    const syncBucket = bucketName('aws-sync');
    ok(await aws(['s3', 'mb', `s3://${syncBucket}`]), 'aws s3 mb');
    const local = path.join(aws.home, 'sync');
    await localTree(local);
    const first = ok(await aws(['s3', 'sync', local, `s3://${syncBucket}/`]), 'aws s3 sync');
    expect(first.match(/^upload: /gm)).toHaveLength(3);
    // Changed: one file (another size). Gone: another.
    await writeFile(path.join(local, 'a/b/c.txt'), 'deeper\n');
    await rm(path.join(local, 'top.bin'));
    const second = ok(await aws(['s3', 'sync', '--delete', local, `s3://${syncBucket}/`]), 'aws s3 sync --delete');
    expect(
      second
        .match(/^(upload|delete): .*$/gm)
        ?.map((line) => line.trim())
        .sort(),
    ).toEqual([`delete: s3://${syncBucket}/top.bin`, expect.stringMatching(/^upload: .*c\.txt to s3:\/\/.*\/a\/b\/c\.txt$/)]);
    const back = path.join(aws.home, 'sync-back');
    ok(await aws(['s3', 'sync', `s3://${syncBucket}/`, back]), 'aws s3 sync (down)');
    expect(await readFile(path.join(back, 'a/b/c.txt'), 'utf8')).toBe('deeper\n');
    expect(await readFile(path.join(back, 'café ☕/😀.txt'), 'utf8')).toBe('smile ☕\n');
    expect(existsSync(path.join(back, 'top.bin'))).toBe(false);
  });

  it('s3 presign: a url plain fetch downloads', async () => {
    const url = ok(await aws(['s3', 'presign', `s3://${bucket}/a/b/c.txt`, '--expires-in', '300']), 'aws s3 presign').trim();
    expect(url).toContain('X-Amz-Signature=');
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('deep\n');
    // The same url for another key is refused.
    const tampered = await fetch(url.replace('/a/b/c.txt', '/top.bin'));
    expect(tampered.status).toBe(403);
  });

  it('errors: a wrong secret is SignatureDoesNotMatch, another owner’s bucket NoSuchBucket', async () => {
    const wrong = await awsCli({ accessKeyId: alice.accessKeyId, secretAccessKey: 'x'.repeat(40) });
    const refused = await wrong(['s3', 'ls', `s3://${bucket}/`]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('SignatureDoesNotMatch');

    const asBob = await awsCli(bob);
    const missingBucket = await asBob(['s3', 'ls', `s3://${bucket}/`]);
    expect(missingBucket.code).not.toBe(0);
    expect(missingBucket.stderr).toContain('NoSuchBucket');
    const download = await asBob(['s3', 'cp', `s3://${bucket}/a/b/c.txt`, path.join(asBob.home, 'stolen.txt')]);
    expect(download.code).not.toBe(0);
    expect(existsSync(path.join(asBob.home, 'stolen.txt'))).toBe(false);
    expect(ok(await asBob(['s3', 'ls']), 'aws s3 ls (bob)')).not.toContain(bucket);
  });

  it('rm, then rb', async () => {
    for (const key of ['café ☕/😀.txt', 'a/b/c.txt', 'top.bin']) ok(await aws(['s3', 'rm', `s3://${bucket}/${key}`]), `aws s3 rm ${key}`);
    expect(ok(await aws(['s3', 'ls', '--recursive', `s3://${bucket}/`]), 'aws s3 ls').trim()).toBe('');
    ok(await aws(['s3', 'rb', `s3://${bucket}`]), 'aws s3 rb');
    expect(ok(await aws(['s3', 'ls']), 'aws s3 ls')).not.toContain(bucket);
  });
});

// ---------------------------------------------------------------- s3cmd

const s3cmdRunner = async (user: TestUser) => makeS3cmd(await home('s3cmd'), s3Url, user);

describe.skipIf(missing('s3cmd', S3CMD))('s3cmd', () => {
  it('mb, ls, get (same bytes), del, rb', async () => {
    const s3cmd = await s3cmdRunner(alice);
    const bucket = bucketName('s3cmd');
    ok(await s3cmd(['mb', `s3://${bucket}`]), 's3cmd mb');
    expect(ok(await s3cmd(['ls']), 's3cmd ls')).toContain(`s3://${bucket}`);
    // Uploaded through the Pail API: s3cmd put is in the block below.
    const bytes = randomBytes(100_000);
    const id = await bucketId(alice, bucket);
    const put = await fetch(`${server.url}/api/v1/buckets/${id}/files/dir/caf%C3%A9.bin`, {
      method: 'PUT',
      headers: { 'x-api-key': alice.apiKey },
      body: bytes,
    });
    expect(put.status).toBe(201);
    const listed = ok(await s3cmd(['ls', `s3://${bucket}/dir/`]), 's3cmd ls bucket');
    expect(listed).toContain(`s3://${bucket}/dir/café.bin`);
    const back = path.join(s3cmd.home, 'download.bin');
    ok(await s3cmd(['get', `s3://${bucket}/dir/café.bin`, back]), 's3cmd get');
    expect(await readFile(back)).toEqual(bytes);
    ok(await s3cmd(['del', `s3://${bucket}/dir/café.bin`]), 's3cmd del');
    ok(await s3cmd(['rb', `s3://${bucket}`]), 's3cmd rb');
    expect(ok(await s3cmd(['ls']), 's3cmd ls')).not.toContain(`s3://${bucket}`);
  });
});

// ---------------------------------------------------------------- boto3

const BOTO3_SCRIPT = `
import hashlib, json, os, sys
import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

s3 = boto3.client(
    's3',
    endpoint_url=os.environ['PAIL_S3_URL'],
    region_name='us-east-1',
    aws_access_key_id=os.environ['PAIL_ACCESS_KEY_ID'],
    aws_secret_access_key=os.environ['PAIL_SECRET_ACCESS_KEY'],
    config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}),
)
bucket = os.environ['PAIL_BUCKET']
out = {}
def code(call):
    try:
        call()
    except ClientError as error:
        return [error.response['Error']['Code'], error.response['ResponseMetadata']['HTTPStatusCode']]
    return None

s3.create_bucket(Bucket=bucket)
body = bytes(range(256)) * 400
put = s3.put_object(Bucket=bucket, Key='dir/blob.bin', Body=body, ContentType='application/x-test')
out['put_etag'] = put.get('ETag')
out['md5'] = '"' + hashlib.md5(body).hexdigest() + '"'
s3.put_object(Bucket=bucket, Key='café ☕/😀.txt', Body='smile'.encode())
got = s3.get_object(Bucket=bucket, Key='dir/blob.bin')
out['get_equal'] = got['Body'].read() == body
out['get_content_type'] = got['ContentType']
out['get_etag'] = got.get('ETag')
out['get_length'] = got['ContentLength']
ranged = s3.get_object(Bucket=bucket, Key='dir/blob.bin', Range='bytes=10-19')
out['range_equal'] = ranged['Body'].read() == body[10:20]
out['unicode'] = s3.get_object(Bucket=bucket, Key='café ☕/😀.txt')['Body'].read().decode()
listed = s3.list_objects_v2(Bucket=bucket)
out['keys'] = [o['Key'] for o in listed.get('Contents', [])]
folders = s3.list_objects_v2(Bucket=bucket, Delimiter='/')
out['prefixes'] = [p['Prefix'] for p in folders.get('CommonPrefixes', [])]
out['head_length'] = s3.head_object(Bucket=bucket, Key='dir/blob.bin')['ContentLength']
out['missing'] = code(lambda: s3.get_object(Bucket=bucket, Key='nope.txt'))
s3.delete_object(Bucket=bucket, Key='dir/blob.bin')
s3.delete_object(Bucket=bucket, Key='café ☕/😀.txt')
out['after_delete'] = [o['Key'] for o in s3.list_objects_v2(Bucket=bucket).get('Contents', [])]
out['get_deleted'] = code(lambda: s3.get_object(Bucket=bucket, Key='dir/blob.bin'))
s3.delete_bucket(Bucket=bucket)
out['head_deleted_bucket'] = code(lambda: s3.head_bucket(Bucket=bucket))
print(json.dumps(out))
`;

/** The boto3 script's findings, run once for both blocks below. */
let boto3Run: Promise<Record<string, unknown>> | undefined;
function boto3Results(): Promise<Record<string, unknown>> {
  boto3Run ??= (async () => {
    const dir = await home('boto3');
    const script = path.join(dir, 'pail_boto3.py');
    await writeFile(script, BOTO3_SCRIPT);
    const result = await run(required('python3 with boto3', PYTHON_BOTO3), [script], {
      HOME: dir,
      PAIL_S3_URL: s3Url,
      PAIL_ACCESS_KEY_ID: alice.accessKeyId,
      PAIL_SECRET_ACCESS_KEY: alice.secretAccessKey,
      PAIL_BUCKET: bucketName('boto3'),
      AWS_CONFIG_FILE: path.join(dir, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'none'),
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    return JSON.parse(ok(result, 'boto3 script')) as Record<string, unknown>;
  })();
  return boto3Run;
}

describe.skipIf(missing('boto3 (python3-boto3)', PYTHON_BOTO3))('boto3', () => {
  it('put_object, get_object (and a range), list_objects_v2, head_object, delete_object, path-style', async () => {
    const out = await boto3Results();
    expect(out).toMatchObject({
      get_equal: true,
      get_content_type: 'application/x-test',
      get_length: 256 * 400,
      range_equal: true,
      unicode: 'smile',
      keys: ['café ☕/😀.txt', 'dir/blob.bin'],
      prefixes: ['café ☕/', 'dir/'],
      head_length: 256 * 400,
      missing: ['NoSuchKey', 404],
      after_delete: [],
      get_deleted: ['NoSuchKey', 404],
      head_deleted_bucket: ['404', 404],
    });
  });
});

// ---------------------------------------------------------------- rclone

async function rcloneRunner(user: TestUser): Promise<{ (args: string[]): Promise<Result>; home: string }> {
  const dir = await home('rclone');
  const config = path.join(dir, 'rclone.conf');
  await writeFile(
    config,
    [
      '[pail]',
      'type = s3',
      'provider = Other',
      `access_key_id = ${user.accessKeyId}`,
      `secret_access_key = ${user.secretAccessKey}`,
      `endpoint = ${s3Url}`,
      'region = us-east-1',
      'force_path_style = true',
      '',
    ].join('\n'),
  );
  const runner = (args: string[]) =>
    run(required('rclone', RCLONE), ['--config', config, '--retries', '1', '--low-level-retries', '1', ...args], { HOME: dir });
  return Object.assign(runner, { home: dir });
}

describe.skipIf(missing('rclone', RCLONE))('rclone', () => {
  it('mkdir, copy up (unicode names, folders), lsf, cat, copy down (same bytes), delete, rmdir', async () => {
    const rclone = await rcloneRunner(alice);
    const bucket = bucketName('rclone');
    ok(await rclone(['mkdir', `pail:${bucket}`]), 'rclone mkdir');
    expect(ok(await rclone(['lsd', 'pail:']), 'rclone lsd')).toContain(bucket);
    const up = path.join(rclone.home, 'up');
    const files = await localTree(up);
    ok(await rclone(['copy', up, `pail:${bucket}`]), 'rclone copy (up)');
    expect(
      ok(await rclone(['lsf', '-R', '--files-only', `pail:${bucket}`]), 'rclone lsf')
        .trim()
        .split('\n')
        .sort(),
    ).toEqual(Object.keys(files).sort());
    expect(ok(await rclone(['cat', `pail:${bucket}/café ☕/😀.txt`]), 'rclone cat')).toBe('smile ☕\n');
    const down = path.join(rclone.home, 'down');
    ok(await rclone(['copy', `pail:${bucket}`, down]), 'rclone copy (down)');
    for (const [name, bytes] of Object.entries(files)) expect(await readFile(path.join(down, name)), name).toEqual(bytes);
    ok(await rclone(['delete', `pail:${bucket}`]), 'rclone delete');
    expect(ok(await rclone(['lsf', '-R', `pail:${bucket}`]), 'rclone lsf').trim()).toBe('');
    ok(await rclone(['rmdir', `pail:${bucket}`]), 'rclone rmdir');
    expect(ok(await rclone(['lsd', 'pail:']), 'rclone lsd')).not.toContain(bucket);
  });

  it('copy, then purge (a bucket and everything in it)', async () => {
    const rclone = await rcloneRunner(alice);
    const bucket = bucketName('rclone');
    ok(await rclone(['mkdir', `pail:${bucket}`]), 'rclone mkdir');
    await localTree(path.join(rclone.home, 'up'));
    ok(await rclone(['copy', path.join(rclone.home, 'up'), `pail:${bucket}`]), 'rclone copy');
    ok(await rclone(['purge', `pail:${bucket}`]), 'rclone purge');
    expect(ok(await rclone(['lsd', 'pail:']), 'rclone lsd')).not.toContain(bucket);
  });

  it('--s3-versions lists an overwritten file’s old version under its dated name and copies it back out byte for byte; --s3-version-at reads the tree as it was', async () => {
    const rclone = await rcloneRunner(alice);
    const bucket = bucketName('rclone');
    ok(await rclone(['mkdir', `pail:${bucket}`]), 'rclone mkdir');
    expect(ok(await rclone(['backend', 'versioning', `pail:${bucket}`, 'Enabled']), 'rclone backend versioning').trim()).toBe('Enabled');
    const first = { 'docs/report.bin': randomBytes(70_000), 'top.bin': randomBytes(30_000) };
    const second = { 'docs/report.bin': randomBytes(50_000), 'top.bin': randomBytes(20_000) };
    const upload = async (files: Record<string, Buffer>) => {
      const dir = path.join(rclone.home, `up-${randomBytes(3).toString('hex')}`);
      for (const [name, bytes] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
        await writeFile(path.join(dir, name), bytes);
      }
      ok(await rclone(['copy', dir, `pail:${bucket}`]), 'rclone copy');
    };
    await upload(first);
    // rclone names a version by its Last-Modified: the overwrite comes a second later, with a moment between to read the tree at.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const between = new Date();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await upload(second);

    // Without --s3-versions only the current files; with it, the old versions too, named by their Last-Modified (UTC).
    expect(
      ok(await rclone(['lsf', '-R', '--files-only', `pail:${bucket}`]), 'rclone lsf')
        .trim()
        .split('\n')
        .sort(),
    ).toEqual(['docs/report.bin', 'top.bin']);
    const listed = ok(await rclone(['lsf', '-R', '--files-only', '--format', 'ps', '--s3-versions', `pail:${bucket}`]), 'rclone lsf --s3-versions')
      .trim()
      .split('\n')
      .sort();
    const dated = /-v(\d{4})-(\d{2})-(\d{2})-(\d{2})(\d{2})(\d{2})-\d{3}\.bin;/;
    expect(listed).toEqual([
      expect.stringMatching(/^docs\/report-v\d{4}-\d{2}-\d{2}-\d{6}-\d{3}\.bin;70000$/),
      'docs/report.bin;50000',
      expect.stringMatching(/^top-v\d{4}-\d{2}-\d{2}-\d{6}-\d{3}\.bin;30000$/),
      'top.bin;20000',
    ]);
    const [oldReport, oldTop] = [listed[0]!, listed[2]!];
    const [year, month, day, hour, minute, second_] = dated.exec(oldReport)!.slice(1).map(Number) as [number, number, number, number, number, number];
    const named = Date.UTC(year, month - 1, day, hour, minute, second_);
    expect(between.getTime() - named).toBeGreaterThan(0);
    expect(between.getTime() - named).toBeLessThan(60_000);

    // An old version copied out by its dated name: a file at the top by itself, one in a folder through its folder
    // (rclone 1.60 finds a dated name below the top only in a listing, not as a single file path).
    const out = path.join(rclone.home, 'out');
    ok(await rclone(['copyto', '--s3-versions', `pail:${bucket}/${oldTop.split(';')[0]!}`, path.join(out, 'top-old.bin')]), 'rclone copyto (old version)');
    expect(await readFile(path.join(out, 'top-old.bin'))).toEqual(first['top.bin']);
    const oldReportName = path.basename(oldReport.split(';')[0]!);
    ok(await rclone(['copy', '--s3-versions', '--include', oldReportName, `pail:${bucket}/docs`, out]), 'rclone copy (old version)');
    expect(await readFile(path.join(out, oldReportName))).toEqual(first['docs/report.bin']);

    // The whole tree as it was between the two uploads: the first bytes under the files' own names.
    const then = path.join(rclone.home, 'then');
    ok(await rclone(['copy', '--s3-version-at', between.toISOString(), `pail:${bucket}`, then]), 'rclone copy --s3-version-at');
    for (const [name, bytes] of Object.entries(first)) expect(await readFile(path.join(then, name)), name).toEqual(bytes);
    const now = path.join(rclone.home, 'now');
    ok(await rclone(['copy', `pail:${bucket}`, now]), 'rclone copy (current)');
    for (const [name, bytes] of Object.entries(second)) expect(await readFile(path.join(now, name)), name).toEqual(bytes);
  });
});

// ---------------------------------------------------------------- needing what is being built

/**
 * What the tools do by default that needs operations the S3 API is still
 * gaining (ETags as MD5 on PutObject, DeleteObjects, ListObjects v1, ACLs,
 * metadata, versioning answers). Written for what a user expects.
 */
describe('S3 tools, on what the first slice did not have', () => {
  it.skipIf(missing('boto3 (python3-boto3)', PYTHON_BOTO3))('boto3: PutObject and GetObject answer the MD5 of the bytes as ETag', async () => {
    const out = await boto3Results();
    expect({ put: out.put_etag, get: out.get_etag }).toEqual({ put: out.md5, get: out.md5 });
  });

  it.skipIf(missing('s3cmd', S3CMD))('s3cmd: put (it checks the answered ETag against its MD5), then get', async () => {
    const s3cmd = await s3cmdRunner(alice);
    const bucket = bucketName('s3cmd');
    await makeBucket(alice, bucket);
    const local = path.join(s3cmd.home, 'upload.bin');
    const bytes = randomBytes(100_000);
    await writeFile(local, bytes);
    ok(await s3cmd(['put', local, `s3://${bucket}/dir/café.bin`]), 's3cmd put');
    const back = path.join(s3cmd.home, 'download.bin');
    ok(await s3cmd(['get', `s3://${bucket}/dir/café.bin`, back]), 's3cmd get');
    expect(await readFile(back)).toEqual(bytes);
  });

  it.skipIf(missing('s3cmd', S3CMD))('s3cmd: setacl --acl-public (PutBucketAcl), then the files are public', async () => {
    const s3cmd = await s3cmdRunner(alice);
    const bucket = bucketName('s3cmd');
    await makeBucket(alice, bucket);
    ok(await s3cmd(['setacl', '--acl-public', `s3://${bucket}`]), 's3cmd setacl --acl-public');
    expect(ok(await s3cmd(['info', `s3://${bucket}`]), 's3cmd info')).toMatch(/ACL:\s+\*anon\*: READ/);
    const visible = await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': alice.apiKey } });
    expect(((await json(visible)).data as { name: string; public: boolean }[]).find((b) => b.name === bucket)?.public).toBe(true);
  });

  it.skipIf(missing('s3cmd', S3CMD))('s3cmd: del --recursive (DeleteObjects), then rb', async () => {
    const s3cmd = await s3cmdRunner(alice);
    const bucket = bucketName('s3cmd');
    await makeBucket(alice, bucket);
    await seed(alice, await bucketId(alice, bucket), ['dir/one.txt', 'dir/two.txt', 'dir/sub/three.txt', 'keep.txt']);
    ok(await s3cmd(['del', '--recursive', '--force', `s3://${bucket}/dir/`]), 's3cmd del --recursive');
    expect(ok(await s3cmd(['ls', '--recursive', `s3://${bucket}`]), 's3cmd ls --recursive')).not.toContain('/dir/');
    ok(await s3cmd(['del', `s3://${bucket}/keep.txt`]), 's3cmd del');
    ok(await s3cmd(['rb', `s3://${bucket}`]), 's3cmd rb');
  });

  describe.skipIf(missing('AWS CLI', AWS))('AWS CLI', () => {
    let aws: AwsCli;
    let bucket: string;
    beforeAll(async () => {
      aws = await awsCli(alice);
      bucket = bucketName('aws-more');
      ok(await aws(['s3', 'mb', `s3://${bucket}`]), 'aws s3 mb');
      await seed(alice, await bucketId(alice, bucket), ['site/index.html', 'site/other.html', 'root.html']);
    });

    it('cp with --content-type, --cache-control, --metadata: head-object answers them', async () => {
      const local = path.join(aws.home, 'page.html');
      await writeFile(local, '<p>hi</p>');
      ok(
        await aws([
          's3',
          'cp',
          local,
          `s3://${bucket}/meta/index.html`,
          '--content-type',
          'text/html; charset=utf-8',
          '--cache-control',
          'max-age=60',
          '--metadata',
          'owner=alice,purpose=test',
        ]),
        'aws s3 cp --metadata',
      );
      const head = JSON.parse(ok(await aws(['s3api', 'head-object', '--bucket', bucket, '--key', 'meta/index.html']), 's3api head-object'));
      expect(head).toMatchObject({
        ContentType: 'text/html; charset=utf-8',
        CacheControl: 'max-age=60',
        Metadata: { owner: 'alice', purpose: 'test' },
        ContentLength: 9,
      });
    });

    it('s3api list-objects (v1) with --delimiter /', async () => {
      const v1 = JSON.parse(ok(await aws(['s3api', 'list-objects', '--bucket', bucket, '--prefix', 's', '--delimiter', '/']), 's3api list-objects'));
      expect(v1.CommonPrefixes).toEqual([{ Prefix: 'site/' }]);
      expect(v1.Contents ?? []).toEqual([]);
      const all = JSON.parse(ok(await aws(['s3api', 'list-objects', '--bucket', bucket, '--prefix', 'site/', '--page-size', '1']), 's3api list-objects'));
      expect(all.Contents.map((o: { Key: string }) => o.Key)).toEqual(['site/index.html', 'site/other.html']);
    });

    it('s3api put-bucket-acl public-read, get-bucket-acl', async () => {
      ok(await aws(['s3api', 'put-bucket-acl', '--bucket', bucket, '--acl', 'public-read']), 's3api put-bucket-acl');
      const acl = JSON.parse(ok(await aws(['s3api', 'get-bucket-acl', '--bucket', bucket]), 's3api get-bucket-acl'));
      const grants = acl.Grants as { Grantee: { URI?: string }; Permission: string }[];
      expect(grants.some((g) => /AllUsers/.test(g.Grantee.URI ?? '') && g.Permission === 'READ')).toBe(true);
      ok(await aws(['s3api', 'put-bucket-acl', '--bucket', bucket, '--acl', 'private']), 's3api put-bucket-acl private');
    });

    it('s3api delete-objects (a missing key counts as deleted)', async () => {
      const keys = ['site/index.html', 'site/other.html', 'root.html', 'never.txt'];
      const deleted = JSON.parse(
        ok(
          await aws(['s3api', 'delete-objects', '--bucket', bucket, '--delete', JSON.stringify({ Objects: keys.map((Key) => ({ Key })) })]),
          's3api delete-objects',
        ),
      );
      expect(deleted.Deleted.map((d: { Key: string }) => d.Key).sort()).toEqual([...keys].sort());
      expect(deleted.Errors ?? []).toEqual([]);
      // An empty listing: AWS CLI v2 prints nothing at all.
      const left = ok(await aws(['s3api', 'list-objects-v2', '--bucket', bucket, '--prefix', 'site/']), 's3api list-objects-v2').trim();
      expect(left === '' ? [] : (JSON.parse(left).Contents ?? [])).toEqual([]);
    });
  });

  it.skipIf(missing('rclone', RCLONE))('rclone: check compares every file by MD5', async () => {
    const rclone = await rcloneRunner(alice);
    const bucket = bucketName('rclone');
    ok(await rclone(['mkdir', `pail:${bucket}`]), 'rclone mkdir');
    const up = path.join(rclone.home, 'up');
    await localTree(up);
    ok(await rclone(['copy', up, `pail:${bucket}`]), 'rclone copy');
    const check = await rclone(['check', up, `pail:${bucket}`]);
    expect(check.stderr).toContain('3 matching files');
    expect(check.stderr).not.toMatch(/hashes could not be checked/);
    ok(check, 'rclone check');
  });
});
