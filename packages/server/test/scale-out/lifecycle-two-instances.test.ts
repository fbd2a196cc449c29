/**
 * The lifecycle sweep on two server processes sharing one PostgreSQL schema,
 * Redis prefix and S3 bucket, both sweeping every second with a one-second
 * day: every expired file is deleted once (the tallies both instances log
 * add up to the files there were), and the counts and usage end exact.
 * Needs PAIL_TEST_BACKEND=scaled (the scaled project).
 */
import { CreateBucketCommand, ListObjectsV2Command, PutBucketLifecycleConfigurationCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backendKind, scaledBackendEnv, type BackendEnv } from '../helpers/backends.js';
import { json, signUp, type TestUser } from '../helpers/client.js';
import { sdkClient } from '../helpers/s3-client.js';
import { freePort } from '../helpers/server.js';
import { spawnServer, type ServerProcess } from './instances.js';

const FILES = 100;

let backend: BackendEnv;
let a: ServerProcess;
let b: ServerProcess;
let s3Url: string;

beforeAll(async () => {
  if (backendKind() !== 'scaled') throw new Error('lifecycle-two-instances.test.ts needs PAIL_TEST_BACKEND=scaled (run by the scaled project)');
  backend = await scaledBackendEnv();
  const shared = {
    ...backend.env,
    SESSION_SECRET: randomBytes(32).toString('hex'),
    PLAN_FREE_RATE_LIMIT: '100000',
    SIGNUP_RATE_LIMIT: '100000',
    LOG_LEVEL: 'info',
    LIFECYCLE_DAY_SECONDS: '1',
    LIFECYCLE_INTERVAL_SECONDS: '1',
  };
  const s3Port = await freePort();
  s3Url = `http://127.0.0.1:${s3Port}`;
  // One after the other: the first migrates the fresh schema.
  a = await spawnServer({ ...shared, S3_API_PORT: String(s3Port) });
  b = await spawnServer(shared);
}, 90_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await backend?.cleanup();
});

/** What an instance's sweeps logged they expired, summed. */
const expiredBy = (instance: ServerProcess): number =>
  instance
    .output()
    .split('\n')
    .filter((line) => line.includes('lifecycle rules applied'))
    .reduce((sum, line) => sum + (JSON.parse(line) as { expired: number }).expired, 0);

it('deletes each expired file once, whichever instance sweeps, and leaves the counts exact', { timeout: 420_000 }, async () => {
  const user: TestUser = await signUp(a.url);
  const s3: S3Client = sdkClient(s3Url, user);
  const bucket = `lc2-${Date.now().toString(36)}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const keys = Array.from({ length: FILES }, (_, i) => `old/${String(i).padStart(4, '0')}`);
  for (let i = 0; i < keys.length; i += 20) {
    await Promise.all(keys.slice(i, i + 20).map((Key) => s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: Buffer.alloc(100, 7) }))));
  }
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept/one', Body: 'kept' }));
  await s3.send(
    new PutBucketLifecycleConfigurationCommand({
      Bucket: bucket,
      LifecycleConfiguration: { Rules: [{ ID: 'old', Filter: { Prefix: 'old/' }, Status: 'Enabled', Expiration: { Days: 1 } }] },
    }),
  );
  const start = Date.now();
  for (;;) {
    const left = (await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? [];
    if (left.length === 1) break;
    if (Date.now() - start > 300_000) throw new Error(`${left.length} files left after five minutes`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // A pass logs its tally when it ends, after its last delete is visible: wait for the line, then a pass more for any double count.
  const logged = Date.now();
  while (expiredBy(a) + expiredBy(b) < FILES && Date.now() - logged < 30_000) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(expiredBy(a) + expiredBy(b)).toBe(FILES);
  for (const instance of [a, b]) {
    const buckets = (await json(await fetch(`${instance.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } }))).data as {
      name: string;
      object_count: number;
      total_bytes: number;
    }[];
    expect(buckets.find((item) => item.name === bucket)).toMatchObject({ object_count: 1, total_bytes: 4 });
    const me = (await json(await fetch(`${instance.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
    expect(me.storage_used_bytes).toBe(4);
  }
});
