/**
 * Backups into object-lock buckets, as a user runs them (README, "Backups"):
 * restic (Debian's, through its S3 backend) backing up a tree, `restic
 * check`, a restore compared byte for byte; rclone copying into a bucket
 * with a default retention; and the "ransomware" case: the backup's own
 * credentials cannot delete, overwrite or shorten what was written within
 * the retention, nor delete the bucket, on any door.
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
  PutObjectRetentionCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { missing, ok, RCLONE, required, run } from './helpers/s3-tools.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const RESTIC = ['/usr/bin/restic'].find((candidate) => spawnSync(candidate, ['version'], { stdio: 'ignore' }).status === 0) ?? null;

let server: TestServer;
let alice: TestUser;
let s3: S3Client;
let work: string;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  alice = await signUp(server.url);
  s3 = sdkClient(server.s3Url!, alice);
  work = await mkdtemp(path.join(os.tmpdir(), 'pail-backups-'));
});
afterAll(() => server.close());

/** A bucket with object lock and a COMPLIANCE default retention of one day: what a backup tool is pointed at. */
async function backupBucket(name: string): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: name, ObjectLockEnabledForBucket: true }));
  await s3.send(
    new PutObjectLockConfigurationCommand({
      Bucket: name,
      ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 1 } } },
    }),
  );
}

/** A small tree to back up: nested folders, an empty file, binary and UTF-8 names. */
async function sourceTree(root: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>([
    ['notes.txt', Buffer.from('what matters\n')],
    ['empty', Buffer.alloc(0)],
    ['photos/2026/café.jpg', randomBytes(300_000)],
    ['photos/2026/raw.bin', randomBytes(2_500_000)],
    ['docs/report.pdf', randomBytes(40_000)],
  ]);
  for (const [name, bytes] of files) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), bytes);
  }
  return files;
}

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode, message: error.message };
    throw error;
  }
  throw new Error('expected the request to fail');
}

/** What ransomware holding the backup's own key tries on one object written within the retention; each is refused, the bytes stay. */
async function cannotDestroy(bucket: string, key: string): Promise<Buffer> {
  const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  expect(head.ObjectLockMode).toBe('COMPLIANCE');
  const VersionId = head.VersionId!;
  const original = Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId }))).Body!.transformToByteArray());
  expect(await s3Error(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId, BypassGovernanceRetention: true })))).toMatchObject({
    name: 'AccessDenied',
    status: 403,
  });
  expect(
    await s3Error(
      s3.send(
        new PutObjectRetentionCommand({
          Bucket: bucket,
          Key: key,
          VersionId,
          Retention: { Mode: 'COMPLIANCE', RetainUntilDate: new Date(server.clock.now() + 1000) },
        }),
      ),
    ),
  ).toMatchObject({ status: 403 });
  // An overwrite and a plain delete only stack versions on top: the locked one is still there, byte for byte.
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'encrypted by ransomware' }));
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  const kept = Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId }))).Body!.transformToByteArray());
  expect(kept.equals(original)).toBe(true);
  return kept;
}

async function bucketIdOf(name: string): Promise<number> {
  const list = await json(await fetch(`${server.url}/api/v1/buckets`, { headers: { authorization: `Bearer ${alice.apiKey}` } }));
  return list.data.find((bucket: { name: string }) => bucket.name === name).id;
}

async function cannotDeleteBucket(bucket: string): Promise<void> {
  expect((await s3Error(s3.send(new DeleteBucketCommand({ Bucket: bucket })))).status).toBeGreaterThanOrEqual(400);
  const viaApi = await fetch(`${server.url}/api/v1/buckets/${await bucketIdOf(bucket)}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${alice.apiKey}` },
  });
  expect(viaApi.status).toBe(403);
  expect((await json(viaApi)).error).toMatch(/until \d{4}-\d\d-\d\dT/);
}

async function filesUnder(root: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(root, prefix), { withFileTypes: true })) {
    const name = path.posix.join(prefix, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(root, name)));
    else out.push(name);
  }
  return out.sort();
}

describe.skipIf(missing('restic', RESTIC))('restic', () => {
  it('backs up a tree into a locked bucket, checks it, restores it byte for byte; its own key cannot destroy the backup', async () => {
    await backupBucket('restic-backups');
    const source = path.join(work, 'restic-source');
    const files = await sourceTree(source);
    const home = path.join(work, 'restic-home');
    await mkdir(home, { recursive: true });
    const env = {
      HOME: home,
      RESTIC_REPOSITORY: `s3:${server.s3Url!}/restic-backups`,
      RESTIC_PASSWORD: 'correct horse battery staple',
      AWS_ACCESS_KEY_ID: alice.accessKeyId,
      AWS_SECRET_ACCESS_KEY: alice.secretAccessKey,
      AWS_DEFAULT_REGION: 'us-east-1',
      RESTIC_CACHE_DIR: path.join(home, 'cache'),
    };
    const restic = (args: string[]) => run(required('restic', RESTIC), args, env, 120_000);
    ok(await restic(['init']), 'restic init');
    ok(await restic(['backup', '--host', 'laptop', source]), 'restic backup');
    ok(await restic(['check', '--read-data']), 'restic check');
    const target = path.join(work, 'restic-restore');
    ok(await restic(['restore', 'latest', '--target', target]), 'restic restore');
    const restored = path.join(target, source);
    expect(await filesUnder(restored)).toEqual([...files.keys()].sort());
    for (const [name, bytes] of files) expect((await readFile(path.join(restored, name))).equals(bytes)).toBe(true);

    const { Contents } = await s3.send(new ListObjectsV2Command({ Bucket: 'restic-backups', Prefix: 'data/' }));
    expect(Contents?.length).toBeGreaterThan(0);
    const attacked = [Contents![0]!.Key!, 'config'];
    const kept = new Map<string, Buffer>();
    for (const key of attacked) kept.set(key, await cannotDestroy('restic-backups', key));
    await cannotDeleteBucket('restic-backups');
    // Recovery: the locked versions, written back as current, make the repository whole again.
    for (const [key, bytes] of kept) await s3.send(new PutObjectCommand({ Bucket: 'restic-backups', Key: key, Body: bytes }));
    ok(await restic(['check', '--read-data']), 'restic check after the attack and recovery');
  }, 300_000);
});

describe.skipIf(missing('rclone', RCLONE))('rclone', () => {
  it('copies a tree into a bucket with a default retention; every object is locked and its own key cannot destroy one', async () => {
    await backupBucket('rclone-backups');
    const source = path.join(work, 'rclone-source');
    const files = await sourceTree(source);
    const home = path.join(work, 'rclone-home');
    await mkdir(home, { recursive: true });
    const config = path.join(home, 'rclone.conf');
    await writeFile(
      config,
      [
        '[pail]',
        'type = s3',
        'provider = Other',
        `access_key_id = ${alice.accessKeyId}`,
        `secret_access_key = ${alice.secretAccessKey}`,
        `endpoint = ${server.s3Url!}`,
        'region = us-east-1',
        'force_path_style = true',
        '',
      ].join('\n'),
    );
    const rclone = (args: string[]) =>
      run(required('rclone', RCLONE), ['--config', config, '--retries', '1', '--low-level-retries', '1', ...args], { HOME: home }, 120_000);
    ok(await rclone(['copy', source, 'pail:rclone-backups/laptop']), 'rclone copy');
    ok(await rclone(['check', source, 'pail:rclone-backups/laptop']), 'rclone check');
    for (const name of files.keys()) {
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'rclone-backups', Key: `laptop/${name}` }));
      expect(head.ObjectLockMode).toBe('COMPLIANCE');
    }
    await cannotDestroy('rclone-backups', 'laptop/notes.txt');
    // rclone's own purge deletes nothing that is locked: the versions stay.
    await rclone(['purge', 'pail:rclone-backups']);
    await cannotDeleteBucket('rclone-backups');
  }, 300_000);
});
