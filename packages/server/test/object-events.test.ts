/**
 * The commit seam (domain/object-events.ts). Through the real doors, a
 * listener hears each change that committed, once, when the database already
 * shows it, carrying what the file now is (as the API lists and serves it),
 * and hears nothing of a write that was refused. A listener that fails, or
 * never finishes, changes nothing a user sees.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOwnLiveBucket } from '../src/db/repositories/buckets.js';
import { findUpload } from '../src/db/repositories/multipart.js';
import { findObjectRow } from '../src/db/repositories/objects.js';
import { findResumableUpload } from '../src/db/repositories/resumable-uploads.js';
import type { Db } from '../src/db/schema.js';
import { expireMultipartUploads } from '../src/domain/multipart-expiry.js';
import { ObjectEvents, type ObjectEvent } from '../src/domain/object-events.js';
import { expireResumableUploads, RESUMABLE_IDLE_SECONDS } from '../src/domain/resumable-uploads.js';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createUpload, patchUpload, TUS } from './helpers/tus.js';

const KiB = 1024;
const CAP_BYTES = 1024 * KiB;

let server: TestServer;
let stopListening: () => void;

/** Each event heard, with what the database showed of its subject at that moment. */
const heard: { event: ObjectEvent; seen: Promise<string | boolean | null> }[] = [];

/**
 * The subject of an event as the database shows it: a file's current
 * version (its storage key, or null), whether a bucket is live, whether an
 * upload is still there.
 */
function subjectNow(db: Db, event: ObjectEvent): Promise<string | boolean | null> {
  switch (event.type) {
    case 'object-created':
    case 'object-edited':
    case 'object-removed':
      return findObjectRow(db, event.bucketId, event.filename).then((row) => row?.storage_key ?? null);
    case 'bucket-removed':
      return findOwnLiveBucket(db, event.ownerId, event.bucketId).then((bucket) => bucket !== undefined);
    case 'upload-ended':
      return (event.kind === 'multipart' ? findUpload(db, event.uploadId, event.bucketId) : findResumableUpload(db, event.uploadId)).then(
        (upload) => upload !== undefined,
      );
  }
}

/** The events heard since the last call, in order, each with what the database showed when it was heard. */
async function takeHeard(): Promise<{ event: ObjectEvent; seen: string | boolean | null }[]> {
  return Promise.all(heard.splice(0).map(async ({ event, seen }) => ({ event, seen: await seen })));
}

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(CAP_BYTES) } });
  const { db, events } = server.app.pail.storage;
  stopListening = events.listen((event) => {
    heard.push({ event, seen: subjectNow(db, event) });
  });
});
afterAll(async () => {
  stopListening?.();
  await server?.close();
});

interface Owner {
  user: TestUser;
  dev: ReturnType<typeof devApi>;
  s3: S3Client;
  bucket: { id: number; name: string; storageName: string };
}

/** A new user with a bucket (its storage name read from a file's url, as a user sees it). */
async function owner(): Promise<Owner> {
  const user = await signUp(server.url);
  const dev = devApi(server.url, user);
  const name = `events-${randomBytes(4).toString('hex')}`;
  const created = await json(await dev('', { method: 'POST', body: JSON.stringify({ name }) }));
  const id = created.data.id as number;
  expect((await dev(`/${id}/files/probe`, { method: 'PUT', body: 'x' })).status).toBe(201);
  const listed = await json(await dev(`/${id}/files`));
  const storageName = new URL(listed.data[0].url as string).pathname.split('/')[2]!;
  expect((await dev(`/${id}/files/probe`, { method: 'DELETE' })).status).toBe(200);
  await takeHeard();
  return { user, dev, s3: sdkClient(server.s3Url!, user), bucket: { id, name, storageName } };
}

/** A file as the Developer API lists it and serves it: its storage name (the version's key), size, type and ETag. */
async function fileAsServed(o: Owner, filename: string) {
  const listed = await json(await o.dev(`/${o.bucket.id}/files?prefix=${encodeURIComponent(filename)}`));
  const view = (listed.data as { filename: string; storage_name: string; size: number; content_type: string }[]).find((f) => f.filename === filename)!;
  const download = await o.dev(`/${o.bucket.id}/files/${filename}`);
  await download.arrayBuffer();
  return { storageKey: view.storage_name, size: view.size, contentType: view.content_type, etag: download.headers.get('etag')!.replace(/"/g, '') };
}

const where = (o: Owner, filename: string) => ({ ownerId: o.user.id, bucketId: o.bucket.id, bucketStorageName: o.bucket.storageName, filename });

async function s3Refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return error.name;
    throw error;
  }
  throw new Error('the request was not refused');
}

describe('the Pail API', () => {
  it('an upload is heard once committed, as the file is then served; its replacement names the version it replaced', async () => {
    const o = await owner();
    expect((await o.dev(`/${o.bucket.id}/files/notes/a.txt`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'first' })).status).toBe(201);
    const first = await fileAsServed(o, 'notes/a.txt');
    const [created, ...rest] = await takeHeard();
    expect(rest).toEqual([]);
    expect(created).toEqual({
      event: { type: 'object-created', ...where(o, 'notes/a.txt'), ...first, replaced: null, cause: 'stored', operation: 'uploadRaw' },
      seen: first.storageKey,
    });

    const large = randomBytes(200 * KiB);
    expect(
      (await o.dev(`/${o.bucket.id}/files/notes/a.txt`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: large })).status,
    ).toBe(201);
    const second = await fileAsServed(o, 'notes/a.txt');
    expect(second.storageKey).not.toBe(first.storageKey);
    expect(await takeHeard()).toEqual([
      {
        event: {
          type: 'object-created',
          ...where(o, 'notes/a.txt'),
          ...second,
          size: large.length,
          replaced: first.storageKey,
          cause: 'stored',
          operation: 'uploadRaw',
        },
        seen: second.storageKey,
      },
    ]);
  });

  it('a multipart form upload and a signed-url upload are heard with their own operations', async () => {
    const o = await owner();
    const form = new FormData();
    form.append('file', new Blob(['from a form'], { type: 'text/plain' }), 'form.txt');
    expect((await o.dev(`/${o.bucket.id}/files`, { method: 'POST', body: form })).status).toBe(201);
    const signed = await json(
      await fetch(`${server.url}/api/v1/buckets/${o.bucket.id}/files/signed.txt/signed-url`, {
        method: 'POST',
        headers: { 'x-api-key': o.user.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ method: 'PUT' }),
      }),
    );
    expect((await fetch(signed.data.url as string, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'by a signed url' })).status).toBe(201);
    const events = (await takeHeard()).map(({ event }) => event);
    expect(events).toMatchObject([
      { type: 'object-created', ...where(o, 'form.txt'), operation: 'uploadMultipart' },
      { type: 'object-created', ...where(o, 'signed.txt'), operation: 'uploadBySignedUrl' },
    ]);
  });

  it('a delete is heard once the row is gone, naming the version removed; deleting a missing file is heard as nothing', async () => {
    const o = await owner();
    await o.dev(`/${o.bucket.id}/files/gone.txt`, { method: 'PUT', body: 'soon gone' });
    const file = await fileAsServed(o, 'gone.txt');
    await takeHeard();
    expect((await o.dev(`/${o.bucket.id}/files/gone.txt`, { method: 'DELETE' })).status).toBe(200);
    expect((await o.dev(`/${o.bucket.id}/files/gone.txt`, { method: 'DELETE' })).status).toBe(404);
    expect(await takeHeard()).toEqual([
      {
        event: {
          type: 'object-removed',
          ...where(o, 'gone.txt'),
          storageKey: file.storageKey,
          size: file.size,
          etag: file.etag,
          cause: 'deleted',
          operation: 'deleteFile',
        },
        seen: null,
      },
    ]);
  });

  it('a move is heard as the version removed from its old name, then created under the new one (no byte written); a folder deletion as each file removed', async () => {
    const o = await owner();
    await o.dev(`/${o.bucket.id}/files/dir/a.txt`, { method: 'PUT', body: 'move me' });
    await o.dev(`/${o.bucket.id}/files/dir/b.bin`, { method: 'PUT', body: randomBytes(100 * KiB) });
    await o.dev(`/${o.bucket.id}/files/taken.txt`, { method: 'PUT', body: 'replaced by the move' });
    const a = await fileAsServed(o, 'dir/a.txt');
    const taken = await fileAsServed(o, 'taken.txt');
    await takeHeard();
    const moved = await o.dev(`/${o.bucket.id}/move`, { method: 'POST', body: JSON.stringify({ from: 'dir/a.txt', to: 'taken.txt', overwrite: true }) });
    expect(moved.status).toBe(200);
    const version = { storageKey: a.storageKey, size: a.size, etag: a.etag };
    expect(await takeHeard()).toEqual([
      { event: { type: 'object-removed', ...where(o, 'dir/a.txt'), ...version, cause: 'moved', operation: 'moveFiles' }, seen: null },
      {
        event: {
          type: 'object-created',
          ...where(o, 'taken.txt'),
          ...version,
          contentType: a.contentType,
          replaced: taken.storageKey,
          cause: 'moved',
          operation: 'moveFiles',
        },
        seen: a.storageKey,
      },
    ]);

    const b = await fileAsServed(o, 'dir/b.bin');
    await takeHeard();
    expect((await o.dev(`/${o.bucket.id}/folders/dir/`, { method: 'DELETE' })).status).toBe(200);
    expect(await takeHeard()).toEqual([
      {
        event: {
          type: 'object-removed',
          ...where(o, 'dir/b.bin'),
          storageKey: b.storageKey,
          size: b.size,
          etag: b.etag,
          cause: 'deleted',
          operation: 'deleteFolder',
        },
        seen: null,
      },
    ]);
  });

  it("a bucket's deletion is heard once it is gone, then each file's row as it is purged", async () => {
    const o = await owner();
    await o.dev(`/${o.bucket.id}/files/one.txt`, { method: 'PUT', body: 'one' });
    await o.dev(`/${o.bucket.id}/files/two.bin`, { method: 'PUT', body: randomBytes(100 * KiB) });
    const one = await fileAsServed(o, 'one.txt');
    const two = await fileAsServed(o, 'two.bin');
    await takeHeard();
    expect((await o.dev(`/${o.bucket.id}`, { method: 'DELETE' })).status).toBe(200);
    const [removed, ...purged] = await takeHeard();
    expect(removed).toEqual({
      event: { type: 'bucket-removed', ownerId: o.user.id, bucketId: o.bucket.id, bucketStorageName: o.bucket.storageName, operation: 'deleteBucket' },
      seen: false,
    });
    expect(purged.sort((a, b) => ((a.event as { filename: string }).filename < (b.event as { filename: string }).filename ? -1 : 1))).toEqual(
      [
        ['one.txt', one],
        ['two.bin', two],
      ].map(([filename, file]) => ({
        event: {
          type: 'object-removed',
          ...where(o, filename as string),
          storageKey: (file as typeof one).storageKey,
          size: (file as typeof one).size,
          etag: (file as typeof one).etag,
          cause: 'bucket-deleted',
          operation: 'deleteBucket',
        },
        seen: null,
      })),
    );
  });

  it('a write the cap refuses, in its commit or before, is heard as nothing', async () => {
    const o = await owner();
    // Nearly the whole cap in one large file; then a small one (committed with its row, the cap asked in that transaction) does not fit.
    expect((await o.dev(`/${o.bucket.id}/files/big.bin`, { method: 'PUT', body: randomBytes(CAP_BYTES - 8 * KiB) })).status).toBe(201);
    await takeHeard();
    const small = await o.dev(`/${o.bucket.id}/files/small.bin`, { method: 'PUT', body: randomBytes(16 * KiB) });
    expect(small.status).toBe(409);
    const large = await o.dev(`/${o.bucket.id}/files/large.bin`, { method: 'PUT', body: randomBytes(200 * KiB) });
    expect(large.status).toBe(409);
    expect(await takeHeard()).toEqual([]);
  });
});

describe('the S3 API', () => {
  it('PutObject and DeleteObject are heard with S3 ETags; a failed condition and a missing key are heard as nothing', async () => {
    const o = await owner();
    const body = Buffer.from('through the S3 door');
    await o.s3.send(new PutObjectCommand({ Bucket: o.bucket.name, Key: 'dir/s3.txt', Body: body, ContentType: 'text/plain' }));
    const file = await fileAsServed(o, 'dir/s3.txt');
    expect(file.etag).toBe(createHash('md5').update(body).digest('hex'));
    expect(await s3Refusal(o.s3.send(new PutObjectCommand({ Bucket: o.bucket.name, Key: 'dir/s3.txt', Body: 'again', IfNoneMatch: '*' })))).toBe(
      'PreconditionFailed',
    );
    await o.s3.send(new DeleteObjectCommand({ Bucket: o.bucket.name, Key: 'dir/s3.txt' }));
    await o.s3.send(new DeleteObjectCommand({ Bucket: o.bucket.name, Key: 'dir/never.txt' }));
    expect(await takeHeard()).toEqual([
      { event: { type: 'object-created', ...where(o, 'dir/s3.txt'), ...file, replaced: null, cause: 'stored', operation: 'PutObject' }, seen: file.storageKey },
      {
        event: {
          type: 'object-removed',
          ...where(o, 'dir/s3.txt'),
          storageKey: file.storageKey,
          size: file.size,
          etag: file.etag,
          cause: 'deleted',
          operation: 'DeleteObject',
        },
        seen: null,
      },
    ]);
  });

  it('a completed multipart upload is heard as its object, then the upload ended; an abort as the upload ended; a refused completion as nothing', async () => {
    const o = await owner();
    const Bucket = o.bucket.name;
    const part = randomBytes(100 * KiB);
    const begun = await o.s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'mp.bin', ContentType: 'application/octet-stream' }));
    const { ETag } = await o.s3.send(new UploadPartCommand({ Bucket, Key: 'mp.bin', UploadId: begun.UploadId, PartNumber: 1, Body: part }));
    const wrong = { Parts: [{ PartNumber: 1, ETag: '"00000000000000000000000000000000"' }] };
    expect(await s3Refusal(o.s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'mp.bin', UploadId: begun.UploadId, MultipartUpload: wrong })))).toBe(
      'InvalidPart',
    );
    expect(await takeHeard()).toEqual([]);
    await o.s3.send(
      new CompleteMultipartUploadCommand({ Bucket, Key: 'mp.bin', UploadId: begun.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] } }),
    );
    const file = await fileAsServed(o, 'mp.bin');
    expect(file.etag).toMatch(/-1$/);

    const abandoned = await o.s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'abandoned.bin' }));
    await o.s3.send(new UploadPartCommand({ Bucket, Key: 'abandoned.bin', UploadId: abandoned.UploadId, PartNumber: 1, Body: part }));
    await o.s3.send(new AbortMultipartUploadCommand({ Bucket, Key: 'abandoned.bin', UploadId: abandoned.UploadId }));

    const ended = (uploadId: string | undefined, filename: string, outcome: string, operation: string) => ({
      event: { type: 'upload-ended', kind: 'multipart', uploadId, ownerId: o.user.id, bucketId: o.bucket.id, filename, outcome, operation },
      seen: false,
    });
    expect(await takeHeard()).toEqual([
      {
        event: { type: 'object-created', ...where(o, 'mp.bin'), ...file, replaced: null, cause: 'stored', operation: 'CompleteMultipartUpload' },
        seen: file.storageKey,
      },
      ended(begun.UploadId, 'mp.bin', 'completed', 'CompleteMultipartUpload'),
      ended(abandoned.UploadId, 'abandoned.bin', 'aborted', 'AbortMultipartUpload'),
    ]);
  });
});

describe('tus', () => {
  it('the last PATCH is heard as the file, then the upload ended; a termination as the upload ended', async () => {
    const o = await owner();
    const endpoint = `${server.url}/api/v1/buckets/${o.bucket.id}/uploads`;
    const bytes = randomBytes(150 * KiB);
    const url = await createUpload(endpoint, o.user, bytes.length, 'resumed.bin');
    expect((await patchUpload(url, o.user, 0, bytes.subarray(0, 50 * KiB))).status).toBe(204);
    expect(await takeHeard()).toEqual([]);
    expect((await patchUpload(url, o.user, 50 * KiB, bytes.subarray(50 * KiB))).status).toBe(204);
    const file = await fileAsServed(o, 'resumed.bin');

    const dropped = await createUpload(endpoint, o.user, 1000, 'dropped.bin');
    expect((await fetch(dropped, { method: 'DELETE', headers: { ...TUS, 'x-api-key': o.user.apiKey } })).status).toBe(204);

    const idOf = (uploadUrl: string) => uploadUrl.split('/').pop();
    const ended = (uploadUrl: string, filename: string, outcome: string) => ({
      event: {
        type: 'upload-ended',
        kind: 'resumable',
        uploadId: idOf(uploadUrl),
        ownerId: o.user.id,
        bucketId: o.bucket.id,
        filename,
        outcome,
        operation: 'resumeUpload',
      },
      seen: false,
    });
    expect(await takeHeard()).toEqual([
      {
        event: { type: 'object-created', ...where(o, 'resumed.bin'), ...file, replaced: null, cause: 'stored', operation: 'resumeUpload' },
        seen: file.storageKey,
      },
      ended(url, 'resumed.bin', 'completed'),
      ended(dropped, 'dropped.bin', 'aborted'),
    ]);
  });
});

describe('unfinished uploads', () => {
  it("a cancel on the Pail API and the expiry sweeps are heard as the uploads' end, each once", async () => {
    const o = await owner();
    const endpoint = `${server.url}/api/v1/buckets/${o.bucket.id}/uploads`;
    const Bucket = o.bucket.name;
    const idOf = (uploadUrl: string) => uploadUrl.split('/').pop()!;
    const cancelledResumable = idOf(await createUpload(endpoint, o.user, 1000, 'cancelled.bin'));
    const cancelledMultipart = (await o.s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'cancelled.mp' }))).UploadId!;
    for (const [kind, id] of [
      ['resumable', cancelledResumable],
      ['multipart', cancelledMultipart],
    ]) {
      expect((await fetch(`${server.url}/api/v1/uploads/${kind}/${id}`, { method: 'DELETE', headers: { 'x-api-key': o.user.apiKey } })).status).toBe(200);
    }
    const expiredResumable = idOf(await createUpload(endpoint, o.user, 1000, 'expired.bin'));
    const expiredMultipart = (await o.s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'expired.mp' }))).UploadId!;
    const { storage, config } = server.app.pail;
    const later = Date.now() + 2 * RESUMABLE_IDLE_SECONDS * 1000 + 2 * config.multipartExpirySeconds * 1000;
    expect(await expireResumableUploads(storage, RESUMABLE_IDLE_SECONDS, later)).toBe(1);
    expect(await expireMultipartUploads(storage, config.multipartExpirySeconds, later)).toBe(1);
    expect(await expireResumableUploads(storage, RESUMABLE_IDLE_SECONDS, later)).toBe(0);

    const ended = (kind: string, uploadId: string, filename: string, outcome: string, operation: string | null) => ({
      event: { type: 'upload-ended', kind, uploadId, ownerId: o.user.id, bucketId: o.bucket.id, filename, outcome, operation },
      seen: false,
    });
    expect(await takeHeard()).toEqual([
      ended('resumable', cancelledResumable, 'cancelled.bin', 'aborted', 'cancelUnfinishedUpload'),
      ended('multipart', cancelledMultipart, 'cancelled.mp', 'aborted', 'cancelUnfinishedUpload'),
      ended('resumable', expiredResumable, 'expired.bin', 'expired', null),
      ended('multipart', expiredMultipart, 'expired.mp', 'expired', null),
    ]);
  });
});

describe('listeners', () => {
  it('one that throws, rejects or never finishes neither fails nor holds up the write, and the others still hear it', async () => {
    const o = await owner();
    const { events } = server.app.pail.storage;
    const stops = [
      events.listen(() => {
        throw new Error('a listener that throws');
      }),
      events.listen(() => Promise.reject(new Error('a listener that rejects'))),
      events.listen(() => new Promise<void>(() => {})),
    ];
    try {
      const started = Date.now();
      expect((await o.dev(`/${o.bucket.id}/files/calm.txt`, { method: 'PUT', body: 'calm' })).status).toBe(201);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await (await o.dev(`/${o.bucket.id}/files/calm.txt`)).text()).toBe('calm');
      expect((await takeHeard()).map(({ event }) => event.type)).toEqual(['object-created']);
    } finally {
      for (const stop of stops) stop();
    }
  });

  it('the announcement waits for the listeners the answer waits for, never rejects, and logs every failure', async () => {
    const failures: string[] = [];
    const events = new ObjectEvents((error, what) => failures.push(`${what}: ${(error as Error).message}`));
    const event: ObjectEvent = { type: 'bucket-removed', ownerId: 1, bucketId: 2, bucketStorageName: 'b', operation: null };
    expect(events.announce(event)).toBeUndefined();

    let finish = () => {};
    let finished = false;
    events.listen(() => new Promise<void>((resolve) => (finish = resolve)).then(() => void (finished = true)), { beforeAnswer: true });
    events.listen(() => Promise.reject(new Error('rejected')), { beforeAnswer: true });
    events.listen(() => {
      throw new Error('thrown');
    });
    const announced = events.announce(event);
    expect(announced).toBeInstanceOf(Promise);
    let settled = false;
    void announced!.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    finish();
    await announced;
    expect(finished).toBe(true);
    expect(failures.sort()).toEqual([
      'a listener of bucket-removed failed (the change itself stands): rejected',
      'a listener of bucket-removed failed (the change itself stands): thrown',
    ]);
  });
});
