/**
 * A resumable upload's requests ending at awkward moments (issue 33, review of
 * the tus door): a PATCH whose body was already gone when its bytes were to be
 * written must still answer and let go of the upload; and cancelling an upload
 * (the unfinished-uploads API or tus DELETE) while a PATCH is still writing
 * stops that PATCH first, so no staged bytes outlive the upload, counted or not.
 */
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilCut } from '../src/blob/staging.js';
import { findOwnLiveBucket } from '../src/db/repositories/buckets.js';
import { advanceResumableUpload, removeResumableUpload } from '../src/db/repositories/resumable-uploads.js';
import { findUserByEmail } from '../src/db/repositories/users.js';
import {
  appendToResumableUpload,
  expireResumableUploads,
  findOwnResumableUpload,
  receiveResumableBytes,
  RESUMABLE_IDLE_SECONDS,
} from '../src/domain/resumable-uploads.js';
import { backendKind } from './helpers/backends.js';
import { json, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createUpload, patchUpload, sha256, TUS, tusBucket, untilWriting } from './helpers/tus.js';
import { eventually } from './helpers/eventually.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const storage = () => server.app.pail.storage;
const setUp = () => tusBucket(server, 'ending');

/** HEAD's status and offset, bounded: an upload left held answers 409 only after 30 s. */
async function head(url: string, user: TestUser): Promise<{ status: number; offset: number }> {
  const response = await fetch(url, { method: 'HEAD', headers: { ...TUS, 'x-api-key': user.apiKey }, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, offset: Number(response.headers.get('upload-offset')) };
}

/**
 * The first `bytes` of an upload received as if by another instance (or
 * before a restart): staged and recorded, with no running hash here, so the
 * next PATCH's body goes to the store as it is.
 */
async function receivedElsewhere(id: string, bytes: Buffer): Promise<void> {
  await storage().blobs.staging.append(id, 0, Readable.from([bytes]), bytes.length);
  expect(await advanceResumableUpload(storage().db, id, { from: 0, to: bytes.length, at: new Date().toISOString() })).toBe(true);
}

/** A body whose client went away before anyone read it. */
function goneBody(): Readable {
  const body = new PassThrough();
  body.on('error', () => {});
  body.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
  return body;
}

const within = <T>(ms: number, work: Promise<T>) =>
  Promise.race([work, new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms).unref())]);

/** A PATCH on a raw socket whose `body` goes out in twenty pieces over about 1.5 s; settles with its status, or 'closed' when the server closed it unanswered. */
function slowPatch(url: string, user: TestUser, offset: number, body: Buffer): Promise<number | 'closed'> {
  const target = new URL(url);
  return new Promise((resolve) => {
    let answer = '';
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(
        `PATCH ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nTus-Resumable: 1.0.0\r\nX-Api-Key: ${user.apiKey}\r\n` +
          `Upload-Offset: ${offset}\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      const piece = Math.ceil(body.length / 20);
      let sent = 0;
      const timer = setInterval(() => {
        if (socket.destroyed || sent >= body.length) return clearInterval(timer);
        socket.write(body.subarray(sent, sent + piece));
        sent += piece;
      }, 75);
    });
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
      resolve(status ? Number(status) : 'closed');
    });
  });
}

/** The upload's staged bytes as the blob store holds them: parts in the S3 store, the staging file on disk. */
async function staged(id: string): Promise<string[]> {
  if (backendKind() === 'scaled') {
    const keys: string[] = [];
    for await (const { key } of storage().blobs.list(`staging/${id}/`)) keys.push(key);
    return keys;
  }
  const names = await readdir(path.join(server.dataDir, 'blobs', 'staging')).catch(() => [] as string[]);
  return names.filter((name) => name === id);
}

const usedBytes = async (user: TestUser): Promise<number> =>
  (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;

const heldBytes = async (user: TestUser): Promise<number> =>
  (await json(await fetch(`${server.url}/api/v1/uploads`, { headers: { 'x-api-key': user.apiKey } }))).held_bytes as number;

describe('a PATCH whose body is gone before its bytes are written', () => {
  it('untilCut ends at once for a body already destroyed, or already read to its end', async () => {
    const read = async (stream: Readable) => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).length;
    };
    expect(await within(2000, read(untilCut(goneBody(), 100)))).toBe(0);
    const ended = Readable.from([Buffer.from('abc')]);
    await read(ended);
    expect(await within(2000, read(untilCut(ended, 100)))).toBe(0);
  });

  it('at an offset with no running hash: the append settles, the upload is not held, and a resumed PATCH finishes the file', async () => {
    const { user, dev, bucket, endpoint } = await setUp();
    const body = randomBytes(300_000);
    const url = await createUpload(endpoint, user, body.length, 'gone.bin');
    const id = url.split('/').pop()!;
    await receivedElsewhere(id, body.subarray(0, 100_000));
    const owner = (await findUserByEmail(storage().db, user.email))!;
    const bucketRow = (await findOwnLiveBucket(storage().db, owner.id, bucket.id))!;
    const upload = await findOwnResumableUpload(storage(), id, owner, bucketRow);
    // Held as a PATCH holds it, its body gone meanwhile (the client reset while it was looked up).
    const release = await storage().resumableWriters.hold(id, () => {});
    try {
      expect(await within(5000, appendToResumableUpload(storage(), upload, owner, 100_000, goneBody(), { rawRequestBody: true }))).toEqual({
        offset: 100_000,
        finished: null,
      });
    } finally {
      await release();
    }
    expect(await within(5000, receiveResumableBytes(storage(), id, { owner, bucket: bucketRow }, 100_000, goneBody(), { rawRequestBody: true }))).toEqual({
      offset: 100_000,
      finished: null,
    });
    expect(await head(url, user)).toEqual({ status: 200, offset: 100_000 });
    expect((await patchUpload(url, user, 100_000, body.subarray(100_000))).status).toBe(204);
    const file = await dev(`/${bucket.id}/files/gone.bin`);
    expect(sha256(Buffer.from(await file.arrayBuffer()))).toBe(sha256(body));
  });

  it('PATCHes reset 0-2 ms after a few bytes, forty times: HEAD answers at once, and the upload finishes with the right bytes', async () => {
    const { user, dev, bucket, endpoint } = await setUp();
    const body = randomBytes(200_000);
    const url = await createUpload(endpoint, user, body.length, 'reset.bin');
    await receivedElsewhere(url.split('/').pop()!, body.subarray(0, 50_000));
    const target = new URL(url);
    for (let i = 0; i < 40; i++) {
      const { offset } = await head(url, user);
      await new Promise<void>((resolve) => {
        const socket = connect(Number(target.port), target.hostname, () => {
          socket.write(
            `PATCH ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nTus-Resumable: 1.0.0\r\nX-Api-Key: ${user.apiKey}\r\n` +
              `Upload-Offset: ${offset}\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: 1000\r\n\r\n`,
          );
          socket.write(body.subarray(offset, offset + 10));
          setTimeout(() => socket.resetAndDestroy(), i % 3);
        });
        socket.on('error', () => {});
        socket.on('close', () => resolve());
      });
    }
    const { status, offset } = await head(url, user);
    expect(status).toBe(200);
    expect((await patchUpload(url, user, offset, body.subarray(offset))).status).toBe(204);
    const file = await dev(`/${bucket.id}/files/reset.bin`);
    expect(sha256(Buffer.from(await file.arrayBuffer()))).toBe(sha256(body));
  }, 60_000);
});

describe('ending an upload while a PATCH is still writing it', () => {
  /** Each way an upload is ended without a file; true when it says it ended it. */
  const cancellers: Record<string, (url: string, user: TestUser) => Promise<boolean>> = {
    'the unfinished-uploads API': async (url, user) =>
      (await fetch(`${server.url}/api/v1/uploads/resumable/${url.split('/').pop()}`, { method: 'DELETE', headers: { 'x-api-key': user.apiKey } })).status ===
      200,
    'tus DELETE': async (url, user) => (await fetch(url, { method: 'DELETE', headers: { ...TUS, 'x-api-key': user.apiKey } })).status === 204,
    // As if a day had passed: the PATCH that stops records its bytes, and the upload is still idle by then.
    'the expiry sweep': async () => (await expireResumableUploads(storage(), RESUMABLE_IDLE_SECONDS, Date.now() + 2 * RESUMABLE_IDLE_SECONDS * 1000)) >= 1,
  };

  for (const [door, cancel] of Object.entries(cancellers)) {
    // Each on an upload of its own user, so the two request doors run side by side; the sweep ends every idle
    // upload, so it runs alone.
    const test = door === 'the expiry sweep' ? it : it.concurrent;
    test(`${door}: the cancel answers, the PATCH is ended at once, and no staged byte is left or held`, async ({ expect }) => {
      const { user, endpoint } = await setUp();
      const body = randomBytes(2_000_000);
      const url = await createUpload(endpoint, user, body.length, 'cancelled.bin');
      const id = url.split('/').pop()!;
      const writing = slowPatch(url, user, 0, body);
      // Cancelled while it writes: a cancel that came first would leave the PATCH an upload to be refused, not ended.
      await untilWriting(server, id);
      expect(await cancel(url, user)).toBe(true);
      // Ended as a newer request ends it: its connection closed at once, not read to its end first.
      expect(await within(10_000, writing)).toBe('closed');
      expect((await head(url, user)).status).toBe(404);
      // The PATCH's store write may still be settling when its socket closes: wait for it (a loaded machine takes its time), then look.
      await eventually(async () => (await staged(id)).length === 0 && (await heldBytes(user)) === 0, 10_000, 'the staged bytes and their hold to go');
      expect(await staged(id)).toEqual([]);
      expect(await heldBytes(user)).toBe(0);
      expect(await usedBytes(user)).toBe(0);
    }, 30_000);
  }

  it('a PATCH whose upload ended under it (its lease ran out) leaves none of its bytes staged', async () => {
    const { user, bucket, endpoint } = await setUp();
    const url = await createUpload(endpoint, user, 100_000, 'orphan.bin');
    const id = url.split('/').pop()!;
    const owner = (await findUserByEmail(storage().db, user.email))!;
    const bucketRow = (await findOwnLiveBucket(storage().db, owner.id, bucket.id))!;
    const upload = await findOwnResumableUpload(storage(), id, owner, bucketRow);
    // Ended by someone who did not wait for this writer (as another instance may once its lease ran out).
    expect(await removeResumableUpload(storage().db, id)).toEqual({ owner_id: owner.id, bucket_id: bucket.id, filename: 'orphan.bin' });
    await expect(appendToResumableUpload(storage(), upload, owner, 0, Readable.from([randomBytes(40_000)]))).rejects.toMatchObject({ status: 409 });
    expect(await staged(id)).toEqual([]);
  });
});

describe('a request whose client went away while it waited for the upload', () => {
  it('stops waiting at once instead of for 30 s', async () => {
    const { user, endpoint } = await setUp();
    const id = (await createUpload(endpoint, user, 1000, 'waited.bin')).split('/').pop()!;
    // A holder that does not let go (a PATCH's store write that takes long).
    const release = await storage().resumableWriters.hold(id, () => {});
    try {
      const gone = new AbortController();
      const waiting = storage().resumableWriters.hold(id, () => {}, undefined, gone.signal);
      waiting.catch(() => {});
      setTimeout(() => gone.abort(), 100);
      expect(
        await within(
          3000,
          waiting.then(
            () => 'held',
            () => 'gave up',
          ),
        ),
      ).toBe('gave up');
    } finally {
      await release();
    }
  });
});
