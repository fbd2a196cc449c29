/**
 * Two instances on one PostgreSQL, Redis and S3 store (issue 37): one version
 * history between them. Writes to one name through both at once keep every
 * version and exactly one current; a delete marker made through one is seen
 * through the other at once (caches included); an old version read and
 * restored through one is the current file through the other; the counts and
 * usage both report are exact. Object lock too: a lock set through one holds
 * on the other at once. Needs PAIL_TEST_BACKEND=scaled.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backendKind, scaledBackendEnv, type BackendEnv } from '../helpers/backends.js';
import { devApi, json, signUp, type TestUser } from '../helpers/client.js';
import { bootApp, type InProcessApp } from './instances.js';

let backend: BackendEnv;
let dataDir: string;
let a: InProcessApp;
let b: InProcessApp;

beforeAll(async () => {
  if (backendKind() !== 'scaled') throw new Error('versions-two-instances.test.ts needs PAIL_TEST_BACKEND=scaled (run by the scaled project)');
  backend = await scaledBackendEnv();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-versions-two-'));
  const env = { ...backend.env, S3_API_PORT: 'off' };
  a = await bootApp(env, dataDir);
  b = await bootApp(env, dataDir);
});
afterAll(async () => {
  for (const instance of [a, b]) await instance?.close().catch(() => {});
  await backend?.cleanup();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface Version {
  version_id: string;
  size: number;
  etag: string;
  is_latest: boolean;
  is_delete_marker: boolean;
}

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

it('one version history: racing writes through both, a delete marker, a restore, counts and usage exact on each', { timeout: 120_000 }, async () => {
  const user: TestUser = await signUp(a.url);
  const devA = devApi(a.url, user);
  const devB = devApi(b.url, user);
  const created = await devA('', { method: 'POST', body: JSON.stringify({ name: `v2-${randomBytes(3).toString('hex')}` }) });
  expect(created.status).toBe(201);
  const bucket = (await json(created)).data.id as number;
  expect((await devB(`/${bucket}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);

  // 20 writes of one name at once, alternating instances, each of its own size so every version is told apart.
  const bodies = Array.from({ length: 20 }, (_, i) => randomBytes(1000 + i));
  const answers = await Promise.all(bodies.map((body, i) => (i % 2 === 0 ? devA : devB)(`/${bucket}/files/doc.bin`, { method: 'PUT', body })));
  expect(answers.map((response) => response.status)).toEqual(bodies.map(() => 201));
  const stored = bodies.reduce((sum, body) => sum + body.length, 0);

  for (const dev of [devA, devB]) {
    const versions = (await json(await dev(`/${bucket}/files/doc.bin/versions`))).data as Version[];
    expect(versions).toHaveLength(20);
    expect(versions.filter((version) => version.is_latest)).toHaveLength(1);
    expect(new Set(versions.map((version) => version.version_id)).size).toBe(20);
    expect(versions.map((version) => version.size).sort()).toEqual(bodies.map((body) => body.length).sort());
  }
  const versions = (await json(await devB(`/${bucket}/files/doc.bin/versions`))).data as Version[];
  const current = versions.find((version) => version.is_latest)!;
  const currentBody = bodies.find((body) => body.length === current.size)!;
  // The current file is the newest version, read whole through either instance.
  for (const dev of [devA, devB]) expect(md5(Buffer.from(await (await dev(`/${bucket}/files/doc.bin`)).arrayBuffer()))).toBe(md5(currentBody));

  // A delete through A: B answers 404 at once (its caches told), and lists the marker first.
  expect((await devA(`/${bucket}/files/doc.bin`)).status).toBe(200);
  expect((await devB(`/${bucket}/files/doc.bin`)).status).toBe(200);
  expect((await devA(`/${bucket}/files/doc.bin`, { method: 'DELETE' })).status).toBe(200);
  expect((await devB(`/${bucket}/files/doc.bin`)).status).toBe(404);
  const afterDelete = (await json(await devB(`/${bucket}/files/doc.bin/versions`))).data as Version[];
  expect(afterDelete).toHaveLength(21);
  expect(afterDelete[0]).toMatchObject({ is_latest: true, is_delete_marker: true });

  // The oldest write's version, read through B and restored through B: the current file through A.
  const oldest = versions.find((version) => version.size === 1000)!;
  const read = await devB(`/${bucket}/files/doc.bin?version_id=${oldest.version_id}`);
  expect(read.status).toBe(200);
  expect(md5(Buffer.from(await read.arrayBuffer()))).toBe(md5(bodies[0]!));
  expect((await devB(`/${bucket}/files/doc.bin/restore`, { method: 'POST', body: JSON.stringify({ version_id: oldest.version_id }) })).status).toBe(201);
  const restored = await devA(`/${bucket}/files/doc.bin`);
  expect(restored.status).toBe(200);
  expect(md5(Buffer.from(await restored.arrayBuffer()))).toBe(md5(bodies[0]!));

  // Counts: one current file; total_bytes every stored version (the restore is a copy of 1000 bytes); usage the same.
  for (const instance of [a, b]) {
    const listed = (await json(await fetch(`${instance.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } }))).data as {
      id: number;
      object_count: number;
      total_bytes: number;
      noncurrent_bytes: number;
    }[];
    expect(listed.find((item) => item.id === bucket)).toMatchObject({ object_count: 1, total_bytes: stored + 1000, noncurrent_bytes: stored });
    const me = (await json(await fetch(`${instance.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
    expect(me.storage_used_bytes).toBe(stored + 1000);
  }
});

it(
  'a lock set through one instance holds on the other at once: the version, the bucket, and a legal hold lifted through the first',
  { timeout: 120_000 },
  async () => {
    const user: TestUser = await signUp(a.url);
    const devA = devApi(a.url, user);
    const devB = devApi(b.url, user);
    const created = await devA('', { method: 'POST', body: JSON.stringify({ name: `lock2-${randomBytes(3).toString('hex')}`, object_lock: true }) });
    expect(created.status).toBe(201);
    const bucket = (await json(created)).data.id as number;
    expect((await devB(`/${bucket}/files/kept.bin`, { method: 'PUT', body: randomBytes(100) })).status).toBe(201);
    const [version] = (await json(await devB(`/${bucket}/files/kept.bin/versions`))).data as Version[];

    // A legal hold through A: B refuses to remove the version and to delete the bucket.
    expect((await devA(`/${bucket}/legal-hold/kept.bin`, { method: 'PUT', body: JSON.stringify({ legal_hold: true }) })).status).toBe(200);
    const removal = await devB(`/${bucket}/files/kept.bin?version_id=${version!.version_id}`, { method: 'DELETE' });
    expect(removal.status).toBe(403);
    expect((await json(removal)).code).toBe('ObjectLocked');
    expect((await devB(`/${bucket}`, { method: 'DELETE' })).status).toBe(403);

    // Lifted through A, a COMPLIANCE retention set through B: A refuses until its date, and refuses to shorten it.
    expect((await devA(`/${bucket}/legal-hold/kept.bin`, { method: 'PUT', body: JSON.stringify({ legal_hold: false }) })).status).toBe(200);
    const until = new Date(Date.now() + 3 * 86_400_000).toISOString();
    expect((await devB(`/${bucket}/retention/kept.bin`, { method: 'PUT', body: JSON.stringify({ mode: 'COMPLIANCE', retain_until: until }) })).status).toBe(
      200,
    );
    const again = await devA(`/${bucket}/files/kept.bin?version_id=${version!.version_id}`, { method: 'DELETE' });
    expect(again.status).toBe(403);
    expect((await json(again)).error).toContain(until.slice(0, 10));
    const earlier = new Date(Date.now() + 86_400_000).toISOString();
    expect((await devA(`/${bucket}/retention/kept.bin`, { method: 'PUT', body: JSON.stringify({ mode: 'COMPLIANCE', retain_until: earlier }) })).status).toBe(
      403,
    );
    const details = (await json(await fetch(`${a.url}/api/v1/buckets/${bucket}/details/kept.bin`, { headers: { 'x-api-key': user.apiKey } }))).data;
    expect(details.retention).toEqual({ mode: 'COMPLIANCE', retain_until: until });
  },
);
