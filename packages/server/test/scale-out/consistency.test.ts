/**
 * Consistency after crashes, on whichever backends PAIL_TEST_BACKEND picks (the
 * embedded project runs this on SQLite + files, the scaled one on PostgreSQL +
 * S3): garbage collection removes blobs no row references, also when several
 * instances run it at once, and a bucket deletion that an instance abandoned
 * halfway is finished by the next instance that starts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/domain/garbage-collection.js';
import { backendEnv, backendKind, type BackendEnv } from '../helpers/backends.js';
import { json, signUp, type TestUser } from '../helpers/client.js';
import { bootApp, eventually, type InProcessApp } from './instances.js';

let backend: BackendEnv;
let dataDir: string;
const open: InProcessApp[] = [];

beforeAll(async () => {
  backend = await backendEnv();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-consistency-'));
});

afterAll(async () => {
  for (const instance of open.splice(0)) await instance.close().catch(() => {});
  await backend?.cleanup();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** An instance on the shared backends (and, for the embedded kind, the shared DATA_DIR). */
async function instance(): Promise<InProcessApp> {
  const started = await bootApp(backend.env, dataDir);
  open.push(started);
  return started;
}

async function stop(target: InProcessApp): Promise<void> {
  open.splice(open.indexOf(target), 1);
  await target.close();
}

function devApi(url: string, user: TestUser, pathname: string, init: RequestInit = {}) {
  return fetch(`${url}/api/v1/buckets${pathname}`, {
    ...init,
    headers: {
      'x-api-key': user.apiKey,
      ...(typeof init.body === 'string' && !init.headers ? { 'content-type': 'application/json' } : {}),
      ...(init.headers as Record<string, string>),
    },
  });
}

async function newBucketWithFiles(url: string, user: TestUser, files: Record<string, string>) {
  const created = await devApi(url, user, '', { method: 'POST', body: JSON.stringify({ name: `b-${randomUUID().slice(0, 8)}` }) });
  expect(created.status).toBe(201);
  const bucketId = (await json(created)).data.id as number;
  for (const [name, content] of Object.entries(files)) {
    const put = await devApi(url, user, `/${bucketId}/files/${encodeURIComponent(name)}`, {
      method: 'PUT',
      body: content,
      headers: { 'content-type': 'text/plain' },
    });
    expect(put.status, await put.clone().text()).toBe(201);
  }
  return bucketId;
}

async function blobKeys(target: InProcessApp, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  for await (const blob of target.app.pail.storage.blobs.list(prefix)) keys.push(blob.key);
  return keys.sort();
}

async function inlineKeys(target: InProcessApp, prefix = ''): Promise<string[]> {
  const rows = await target.app.pail.db.selectFrom('inline_blobs').select('storage_key').where('storage_key', 'like', `${prefix}%`).execute();
  return rows.map((row) => row.storage_key).sort();
}

function objectRows(target: InProcessApp, bucketId: number) {
  return target.app.pail.db.selectFrom('objects').select(['filename', 'storage_key', 'inline']).where('bucket_id', '=', bucketId).execute();
}

/** Over the default INLINE_MAX_BYTES, so its bytes go to the blob store; small files stay in the database. */
const LARGE = 'L'.repeat(64 * 1024 + 1);

describe(`consistency across crashes (${backendKind()} backends)`, () => {
  it('garbage collection removes unreferenced blobs, keeps referenced ones, and is safe on several instances at once', async () => {
    const a = await instance();
    const b = await instance();
    const user = await signUp(a.url);
    const bucketId = await newBucketWithFiles(a.url, user, { 'keep-1.txt': 'first', 'keep-2.txt': LARGE });
    const rows = await objectRows(a, bucketId);
    const referenced = rows.filter((row) => !row.inline).map((row) => row.storage_key);
    const inline = rows.filter((row) => row.inline).map((row) => row.storage_key);
    expect(referenced).toHaveLength(1);
    expect(inline).toHaveLength(1);
    const storageName = referenced[0]!.split('/')[0]!;

    // A crash between storing the bytes and committing the row leaves blobs like these.
    const orphans = [`${storageName}/${randomUUID()}`, `gone-bucket-0123456789ab/${randomUUID()}`];
    for (const key of orphans) await a.app.pail.storage.blobs.put(key, Readable.from([Buffer.from(`orphan ${key}`)]));
    expect(await blobKeys(a)).toEqual(expect.arrayContaining([...referenced, ...orphans]));

    // Within the grace period nothing is touched: it could be an upload in flight.
    const early = await collectGarbage(a.app.pail.storage, 3600);
    expect(early.orphansRemoved).toBe(0);
    expect(await blobKeys(a)).toEqual(expect.arrayContaining(orphans));

    // Past it, three passes on two instances at once: all succeed, the orphans go, the rest stays.
    // (`now` a little ahead, because S3 reports modification times in whole seconds.)
    const later = Date.now() + 5_000;
    const reports = await Promise.all([
      collectGarbage(a.app.pail.storage, 0, later),
      collectGarbage(b.app.pail.storage, 0, later),
      collectGarbage(b.app.pail.storage, 0, later),
    ]);
    expect(reports.reduce((sum, report) => sum + report.orphansRemoved, 0)).toBeGreaterThanOrEqual(orphans.length);
    const left = await blobKeys(a);
    for (const key of orphans) expect(left).not.toContain(key);
    expect(left).toEqual(expect.arrayContaining(referenced));
    expect(await inlineKeys(a, `${storageName}/`)).toEqual(inline);

    // The files are whole, through either instance.
    for (const [url, name, content] of [
      [a.url, 'keep-1.txt', 'first'],
      [b.url, 'keep-2.txt', LARGE],
    ] as const) {
      const got = await devApi(url, user, `/${bucketId}/files/${name}`);
      expect(got.status).toBe(200);
      expect(await got.text()).toBe(content);
    }
    await stop(a);
    await stop(b);
  });

  it('a bucket deletion abandoned halfway is finished by the next instance that starts', async () => {
    const first = await instance();
    const user = await signUp(first.url);
    const files = { 'one.txt': '1', 'two.txt': LARGE, 'three.txt': LARGE };
    const bucketId = await newBucketWithFiles(first.url, user, files);
    const rows = await objectRows(first, bucketId);
    const keys = rows
      .filter((row) => !row.inline)
      .map((row) => row.storage_key)
      .sort();
    expect(keys).toHaveLength(2);
    const storageName = keys[0]!.split('/')[0]!;
    expect(await inlineKeys(first, `${storageName}/`)).toHaveLength(1);
    const db = first.app.pail.db;

    // What deleteBucket's transaction does, then a crash one blob into the purge:
    // the bucket is deleted and its bytes are off the owner's usage, but its
    // object rows and the other blobs remain.
    await db.transaction().execute(async (trx) => {
      const bucket = await trx.selectFrom('buckets').select('total_bytes').where('id', '=', bucketId).executeTakeFirstOrThrow();
      await trx.updateTable('buckets').set({ deleted_at: new Date().toISOString() }).where('id', '=', bucketId).execute();
      await trx
        .updateTable('users')
        .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '-', bucket.total_bytes) }))
        .where('id', '=', user.id)
        .execute();
    });
    await first.app.pail.storage.blobs.delete([keys[0]!]);
    await stop(first);

    const second = await instance();
    // Already gone for the API, before the purge finishes.
    expect((await devApi(second.url, user, `/${bucketId}`)).status).toBe(404);
    // Start-up resumes the purge in the background.
    await eventually(async () => (await objectRows(second, bucketId)).length === 0, 15_000, 'the purge to remove the object rows');
    expect(await blobKeys(second, `${storageName}/`)).toEqual([]);
    expect(await inlineKeys(second, `${storageName}/`)).toEqual([]);

    const me = await json(await fetch(`${second.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data.storage_used_bytes).toBe(0);
    // The name can be used again, and the new bucket starts empty.
    const bucketName = (await second.app.pail.db.selectFrom('buckets').select('name').where('id', '=', bucketId).executeTakeFirstOrThrow()).name;
    const again = await devApi(second.url, user, '', { method: 'POST', body: JSON.stringify({ name: bucketName }) });
    expect(again.status).toBe(201);
    expect((await json(again)).data).toMatchObject({ object_count: 0, total_bytes: 0 });
    await stop(second);
  });

  it('a garbage-collection pass also finishes abandoned bucket deletions', async () => {
    const a = await instance();
    const user = await signUp(a.url);
    const bucketId = await newBucketWithFiles(a.url, user, { 'x.txt': 'x', 'y.txt': LARGE });
    const keys = (await objectRows(a, bucketId)).map((row) => row.storage_key);
    await a.app.pail.db.updateTable('buckets').set({ deleted_at: new Date().toISOString() }).where('id', '=', bucketId).execute();

    const report = await collectGarbage(a.app.pail.storage, 3600);
    expect(report.bucketsPurged).toBe(1);
    expect(await objectRows(a, bucketId)).toEqual([]);
    const left = [...(await blobKeys(a)), ...(await inlineKeys(a))];
    for (const key of keys) expect(left).not.toContain(key);
    await stop(a);
  });
});
