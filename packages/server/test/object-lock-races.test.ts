/**
 * A lock set while a delete of the same version is under way: S3's
 * PutObjectRetention (COMPLIANCE) and DeleteObject of that version, sent
 * together, again and again; and a legal hold put on while the bucket is
 * deleted. Whichever comes first wins, and the other is refused: a lock that
 * was answered 200 always holds a version that is still there, so never both
 * succeed. (A delete reads the lock in its own transaction, under the
 * bucket's lock the lock change takes too.)
 */
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  PutObjectCommand,
  PutObjectRetentionCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const ROUNDS = 60;
let server: TestServer;
let s3: S3Client;
let user: TestUser;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  user = await signUp(server.url);
  s3 = sdkClient(server.s3Url, user);
});
afterAll(() => server.close());

/** 'ok', or the S3 error's name and status. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof S3ServiceException) return `${error.name} ${error.$metadata.httpStatusCode}`;
    throw error;
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const api = (path: string, init: { method?: string; body?: unknown; raw?: string } = {}) =>
  fetch(`${server.url}/api/v1/buckets${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${user.apiKey}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : init.raw !== undefined ? { body: init.raw } : {}),
  });

describe('a retention and a delete of one version at once', () => {
  it('never answers both: a retention that took holds a version still there, a delete that took leaves no retention answered', async () => {
    const Bucket = `race-${Date.now().toString(36)}`;
    await s3.send(new CreateBucketCommand({ Bucket, ObjectLockEnabledForBucket: true }));
    const until = new Date(server.clock.now() + 86_400_000);
    const seen = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const Key = `r${round}`;
      const put = await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'x', ContentMD5: 'ndTkYSaMgDT1yFZOFVxnpg==' }));
      const VersionId = put.VersionId!;
      // The two requests a little apart each round, one way or the other, so the window between them moves.
      const lead = (round % 5) - 2;
      const [retention, deletion] = await Promise.all([
        pause(Math.max(0, lead)).then(() =>
          outcome(s3.send(new PutObjectRetentionCommand({ Bucket, Key, VersionId, Retention: { Mode: 'COMPLIANCE', RetainUntilDate: until } }))),
        ),
        pause(Math.max(0, -lead)).then(() => outcome(s3.send(new DeleteObjectCommand({ Bucket, Key, VersionId })))),
      ]);
      seen.add(`${retention} / ${deletion}`);
      const there = await outcome(s3.send(new HeadObjectCommand({ Bucket, Key, VersionId })));
      if (retention === 'ok') {
        expect({ round, deletion, there }).toEqual({ round, deletion: 'AccessDenied 403', there: 'ok' });
        const held = await s3.send(new GetObjectRetentionCommand({ Bucket, Key, VersionId }));
        expect(held.Retention?.Mode).toBe('COMPLIANCE');
      } else {
        expect({ round, deletion, there }).toEqual({ round, deletion: 'ok', there: 'NotFound 404' });
        expect(retention).toMatch(/^NoSuchVersion 404$|^NoSuchKey 404$/);
      }
    }
    // Both orders happened: the rounds raced rather than ran one after the other.
    expect(seen.size).toBeGreaterThan(1);
  }, 120_000);

  it('a legal hold put on while the bucket is deleted: either the hold is refused or the bucket stays, holding the file', async () => {
    const seen = new Set<string>();
    for (let round = 0; round < ROUNDS / 2; round++) {
      const bucket = (await json(await api('', { method: 'POST', body: { name: `held-${round}`, object_lock: true } }))).data.id as number;
      expect((await api(`/${bucket}/files/f.txt`, { method: 'PUT', raw: 'f' })).status).toBe(201);
      const lead = (round % 5) - 2;
      const [hold, deletion] = await Promise.all([
        pause(Math.max(0, lead)).then(() => api(`/${bucket}/legal-hold/f.txt`, { method: 'PUT', body: { legal_hold: true } })),
        pause(Math.max(0, -lead)).then(() => api(`/${bucket}`, { method: 'DELETE' })),
      ]);
      seen.add(`${hold.status} / ${deletion.status}`);
      const file = await api(`/${bucket}/files/f.txt`);
      if (hold.status === 200) {
        expect({ round, deletion: deletion.status, file: file.status }).toEqual({ round, deletion: 403, file: 200 });
        // Lifted, so the bucket can go and the next round has room.
        await api(`/${bucket}/legal-hold/f.txt`, { method: 'PUT', body: { legal_hold: false } });
        expect((await api(`/${bucket}`, { method: 'DELETE' })).status).toBe(200);
      } else {
        expect({ round, hold: hold.status, deletion: deletion.status, file: file.status }).toEqual({ round, hold: 404, deletion: 200, file: 404 });
      }
    }
    expect(seen.size).toBeGreaterThan(1);
  }, 120_000);

  it('a legal hold put on while the file is moved: either the hold is refused or the file stays where it was held', async () => {
    const bucket = (await json(await api('', { method: 'POST', body: { name: 'moving', object_lock: true } }))).data.id as number;
    const seen = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const from = `m${round}.txt`;
      expect((await api(`/${bucket}/files/${from}`, { method: 'PUT', raw: 'm' })).status).toBe(201);
      const lead = (round % 5) - 2;
      const [hold, move] = await Promise.all([
        pause(Math.max(0, lead)).then(() => api(`/${bucket}/legal-hold/${from}`, { method: 'PUT', body: { legal_hold: true } })),
        pause(Math.max(0, -lead)).then(() => api(`/${bucket}/move`, { method: 'POST', body: { from, to: `moved/${from}` } })),
      ]);
      seen.add(`${hold.status} / ${move.status}`);
      const [there, moved] = await Promise.all([api(`/${bucket}/files/${from}`), api(`/${bucket}/files/moved/${from}`)]);
      if (hold.status === 200) {
        expect({ round, move: move.status, there: there.status, moved: moved.status }).toEqual({ round, move: 403, there: 200, moved: 404 });
      } else {
        expect({ round, hold: hold.status, move: move.status, there: there.status, moved: moved.status }).toEqual({
          round,
          hold: 404,
          move: 200,
          there: 404,
          moved: 200,
        });
      }
    }
    expect(seen.size).toBeGreaterThan(1);
  }, 120_000);
});
