/**
 * The operator deleting a user (domain/user-deletion.ts, what `pail users
 * delete` runs), against a running server: afterwards nothing of the account
 * answers (API key 401, S3 credential 403 InvalidAccessKeyId, session 401,
 * public and signed urls gone, bytes gone from the store), its bucket.deleted
 * events go out, its email signs up again to an empty account, and another
 * user's buckets, files and usage are as they were. A user holding a version
 * under COMPLIANCE or GOVERNANCE retention or a legal hold is refused before
 * anything changes, with the date the last lock ends.
 */
import { CreateMultipartUploadCommand, ListBucketsCommand, ListMultipartUploadsCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/domain/errors.js';
import { findUser, listUsers } from '../src/commands.js';
import { deleteUser } from '../src/domain/user-deletion.js';
import { readAudit } from '../src/domain/audit.js';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createUpload, patchUpload } from './helpers/tus.js';
import { recordsOf, startReceiver, type Receiver } from './helpers/webhook-receiver.js';

const DAY = 86_400_000;
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50' } });
  receiver = await startReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const BIG = randomBytes(100 * 1024); // past INLINE_MAX_BYTES: its bytes are in the blob store

async function bucketOf(user: TestUser, body: Record<string, unknown>): Promise<{ id: number; name: string }> {
  const name = `b-${randomBytes(4).toString('hex')}`;
  const created = await devApi(server.url, user)('', { method: 'POST', body: JSON.stringify({ name, ...body }) });
  expect(created.status).toBe(201);
  return { id: (await json(created)).data.id as number, name };
}

async function put(user: TestUser, bucket: number, name: string, body: string | Buffer): Promise<void> {
  expect((await devApi(server.url, user)(`/${bucket}/files/${name}`, { method: 'PUT', body: body as BodyInit })).status).toBe(201);
}

const uploadsOf = async (user: TestUser): Promise<unknown[]> =>
  (await json(await fetch(`${server.url}/api/v1/uploads`, { headers: { 'x-api-key': user.apiKey } }))).data;

/** What a user sees of their account: buckets (with counts), each bucket's files, usage. */
async function seen(user: TestUser) {
  const dev = devApi(server.url, user);
  const buckets = (await json(await dev(''))).data as { id: number; name: string; object_count: number; total_bytes: number }[];
  const files = await Promise.all(
    buckets.map(async (b) => (await json(await dev(`/${b.id}/files`))).data.map((f: { filename: string; size: number }) => [f.filename, f.size])),
  );
  const me = (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
  return { buckets: buckets.map((b) => [b.name, b.object_count, b.total_bytes]), files, used: me.storage_used_bytes, held: me.storage_held_bytes };
}

/** A user with a public bucket (two files, one large; a webhook for its deletion), a versioned one (two versions), an S3 multipart and a tus upload under way. */
async function fullAccount() {
  const user = await signUp(server.url);
  const photos = await bucketOf(user, { public: true });
  await put(user, photos.id, 'a.txt', `a of ${user.id}`);
  await put(user, photos.id, 'big.bin', BIG);
  const hook = await devApi(server.url, user)(`/${photos.id}/webhooks`, {
    method: 'POST',
    body: JSON.stringify({ url: receiver.url, events: ['bucket.deleted'] }),
  });
  expect(hook.status).toBe(201);
  const docs = await bucketOf(user, {});
  expect((await devApi(server.url, user)(`/${docs.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
  await put(user, docs.id, 'v.txt', 'one');
  await put(user, docs.id, 'v.txt', 'two');
  const s3 = sdkClient(server.s3Url!, user);
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: docs.name, Key: 'parts.bin' }));
  await s3.send(new UploadPartCommand({ Bucket: docs.name, Key: 'parts.bin', UploadId, PartNumber: 1, Body: Buffer.alloc(1024, 7) }));
  const tus = await createUpload(`${server.url}/api/v1/buckets/${photos.id}/uploads`, user, 4096, 'film.mov');
  expect((await patchUpload(tus, user, 0, Buffer.alloc(1024, 1))).status).toBe(204);
  expect(await uploadsOf(user)).toHaveLength(2);
  const files = (await json(await devApi(server.url, user)(`/${photos.id}/files`))).data as { filename: string; url: string }[];
  const signed = await devApi(server.url, user)(`/${photos.id}/files/a.txt/signed-url`, { method: 'POST', body: JSON.stringify({ method: 'GET' }) });
  expect(signed.status).toBe(201);
  return { user, photos, docs, s3, publicUrl: files.find((f) => f.filename === 'a.txt')!.url, signedUrl: (await json(signed)).data.url as string };
}

const row = async (email: string) => (await findUser(server.app.pail.db, email))!;

/** The storage keys of a user's versions and parts: what must leave the blob store. */
async function blobKeysOf(userId: number): Promise<string[]> {
  const { db } = server.app.pail;
  const buckets = db.selectFrom('buckets').select('id').where('owner_id', '=', userId);
  const current = await db.selectFrom('objects').select('storage_key').where('bucket_id', 'in', buckets).where('inline', '=', 0).execute();
  const kept = await db.selectFrom('object_versions').select('storage_key').where('bucket_id', 'in', buckets).where('inline', '=', 0).execute();
  const parts = await db
    .selectFrom('multipart_parts')
    .innerJoin('multipart_uploads', 'multipart_uploads.id', 'multipart_parts.upload_id')
    .select('multipart_parts.storage_key')
    .where('multipart_uploads.owner_id', '=', userId)
    .execute();
  return [...current, ...kept, ...parts].flatMap((r) => (r.storage_key === null ? [] : [r.storage_key]));
}

async function refusal(run: Promise<unknown>): Promise<AppError> {
  const error = await run.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('deleting a user', () => {
  it('removes everything of theirs: key 401, S3 403 InvalidAccessKeyId, session 401, public and signed urls gone; the email signs up again to nothing; others untouched', async () => {
    const alice = await fullAccount();
    const bob = await fullAccount();
    const bobBefore = await seen(bob.user);
    expect((await fetch(alice.publicUrl)).status).toBe(200);
    expect(await (await fetch(alice.signedUrl)).text()).toBe(`a of ${alice.user.id}`);
    const keys = await blobKeysOf(alice.user.id);
    expect(keys.length).toBeGreaterThanOrEqual(2); // big.bin and the part
    const usersBefore = (await listUsers(server.app.pail.db)).length;

    const done = await deleteUser(server.app.pail.storage, await row(alice.user.email));
    expect(done).toEqual({ user: { id: alice.user.id, email: alice.user.email }, buckets: 2, keys: 1, sessions: 1, uploads: 2 });

    expect((await devApi(server.url, alice.user)('')).status).toBe(401);
    const s3Error = await alice.s3.send(new ListBucketsCommand({})).then(
      () => null,
      (error: { name: string; $metadata: { httpStatusCode: number } }) => error,
    );
    expect([s3Error?.name, s3Error?.$metadata.httpStatusCode]).toEqual(['InvalidAccessKeyId', 403]);
    expect((await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${alice.user.token}` } })).status).toBe(401);
    expect((await fetch(`${server.url}/api/auth/me`, { headers: { cookie: alice.user.cookie } })).status).toBe(401);
    // Its public url names nothing public now: anonymous readers get the 401 any private or missing file gives (existence is
    // not leaked), a signed-in caller 404.
    const anonymous = await fetch(alice.publicUrl);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain(`a of ${alice.user.id}`);
    expect((await fetch(alice.publicUrl, { headers: { 'x-api-key': bob.user.apiKey } })).status).toBe(404);
    const signed = await fetch(alice.signedUrl);
    expect(signed.status).toBe(403);
    expect(await signed.text()).not.toContain(`a of ${alice.user.id}`);
    const login = await fetch(`${server.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: alice.user.email, password: alice.user.password }),
    });
    expect(login.status).toBe(401);
    for (const key of keys) expect(await server.app.pail.storage.blobs.head(key)).toBeNull();
    expect(await blobKeysOf(alice.user.id)).toEqual([]);
    // Its bucket.deleted event goes out as for any bucket's deletion.
    await receiver.waitFor(
      (received) => received.flatMap(recordsOf).some((r) => r.eventName === 'pail:BucketDeleted' && r.s3.bucket.name === alice.photos.name),
      "the public bucket's bucket.deleted",
    );
    // The operator's entry ends the old account's log; each bucket's deletion is there too.
    const log = (await readAudit(server.app.pail.db, alice.user.id, {})).entries;
    expect(log[0]).toMatchObject({
      actor: 'operator',
      action: 'user.deleted',
      target: `user:${alice.user.id}`,
      details: { email: alice.user.email, buckets: 2 },
    });
    expect(log.filter((entry) => entry.action === 'bucket.deleted' && entry.actor === 'operator')).toHaveLength(2);
    expect((await listUsers(server.app.pail.db)).length).toBe(usersBefore - 1);

    // The address is free: a new account, empty, with none of the old one's buckets, uploads or log.
    const again = await signUp(server.url, alice.user.email, 'another password');
    expect(again.id).not.toBe(alice.user.id);
    expect(await seen(again)).toEqual({ buckets: [], files: [], used: 0, held: 0 });
    expect(await uploadsOf(again)).toEqual([]);
    const newLog = (await json(await fetch(`${server.url}/api/audit`, { headers: { authorization: `Bearer ${again.token}` } }))).data;
    expect(newLog.map((entry: { action: string }) => entry.action)).toEqual(['key.created']);
    const sameName = await bucketOf(again, { name: alice.photos.name, public: true });
    expect(sameName.id).not.toBe(alice.photos.id);
    expect((await fetch(alice.publicUrl, { headers: { 'x-api-key': again.apiKey } })).status).toBe(404);

    // Bob: as he was, and his credentials all still work.
    expect(await seen(bob.user)).toEqual(bobBefore);
    expect((await bob.s3.send(new ListMultipartUploadsCommand({ Bucket: bob.docs.name }))).Uploads).toHaveLength(1);
    expect((await fetch(bob.publicUrl)).status).toBe(200);
    expect(await (await fetch(bob.signedUrl)).text()).toBe(`a of ${bob.user.id}`);
  });

  it('refuses a user holding a COMPLIANCE-locked version, with the date it ends, and changes nothing', async () => {
    const carol = await fullAccount();
    const locked = await bucketOf(carol.user, { object_lock: true });
    await put(carol.user, locked.id, 'ledger.csv', 'a,b');
    const until = new Date(server.clock.now() + 3 * DAY).toISOString();
    const set = await devApi(server.url, carol.user)(`/${locked.id}/retention/ledger.csv`, {
      method: 'PUT',
      body: JSON.stringify({ mode: 'COMPLIANCE', retain_until: until }),
    });
    expect(set.status).toBe(200);
    const before = await seen(carol.user);

    const refused = await refusal(deleteUser(server.app.pail.storage, await row(carol.user.email)));
    expect(refused.code).toBe('ObjectLocked');
    expect(refused.status).toBe(403);
    expect(refused.message).toBe(`This user holds versions under COMPLIANCE retention until ${until} (object lock); it can be deleted after ${until}`);

    expect(await seen(carol.user)).toEqual(before);
    expect(before.held).toBe(1024 + 4096);
    expect((await carol.s3.send(new ListMultipartUploadsCommand({ Bucket: carol.docs.name }))).Uploads).toHaveLength(1);
    expect(await (await fetch(carol.publicUrl)).text()).toBe(`a of ${carol.user.id}`);
    expect(await (await fetch(carol.signedUrl)).text()).toBe(`a of ${carol.user.id}`);
    expect((await readAudit(server.app.pail.db, carol.user.id, {})).entries.map((entry) => entry.action)).not.toContain('bucket.deleted');
  });

  it('refuses GOVERNANCE too (the operator has no bypass, as deleting the bucket has none), naming both dates; once they pass it goes', async () => {
    const erin = await signUp(server.url);
    const locked = await bucketOf(erin, { object_lock: true });
    await put(erin, locked.id, 'c.txt', 'c');
    await put(erin, locked.id, 'g.txt', 'g');
    const compliance = new Date(server.clock.now() + DAY).toISOString();
    const governance = new Date(server.clock.now() + 2 * DAY).toISOString();
    const retain = (name: string, mode: string, date: string) =>
      devApi(server.url, erin)(`/${locked.id}/retention/${name}`, { method: 'PUT', body: JSON.stringify({ mode, retain_until: date }) });
    expect((await retain('c.txt', 'COMPLIANCE', compliance)).status).toBe(200);
    expect((await retain('g.txt', 'GOVERNANCE', governance)).status).toBe(200);

    const refused = await refusal(deleteUser(server.app.pail.storage, await row(erin.email)));
    expect(refused.message).toBe(
      `This user holds versions under COMPLIANCE retention until ${compliance} and versions under GOVERNANCE retention until ${governance} (object lock); it can be deleted after ${governance}`,
    );
    expect((await devApi(server.url, erin)(`/${locked.id}/files`)).status).toBe(200);

    server.clock.advance(2 * DAY + 60_000);
    try {
      expect((await deleteUser(server.app.pail.storage, await row(erin.email))).buckets).toBe(1);
    } finally {
      server.clock.advance(-(2 * DAY + 60_000));
    }
    expect((await devApi(server.url, erin)('')).status).toBe(401);
  });

  it('a legal hold refuses too, until it is lifted', async () => {
    const dave = await signUp(server.url);
    const locked = await bucketOf(dave, { object_lock: true });
    await put(dave, locked.id, 'evidence.txt', 'e');
    const hold = (on: boolean) =>
      devApi(server.url, dave)(`/${locked.id}/legal-hold/evidence.txt`, { method: 'PUT', body: JSON.stringify({ legal_hold: on }) });
    expect((await hold(true)).status).toBe(200);

    const refused = await refusal(deleteUser(server.app.pail.storage, await row(dave.email)));
    expect(refused.message).toBe('This user holds 1 version under a legal hold (object lock); lift the legal holds first');
    expect((await json(await devApi(server.url, dave)(`/${locked.id}/details/evidence.txt`))).data.legal_hold).toBe(true);

    expect((await hold(false)).status).toBe(200);
    expect(await deleteUser(server.app.pail.storage, await row(dave.email))).toMatchObject({ buckets: 1, keys: 1 });
    expect((await devApi(server.url, dave)('')).status).toBe(401);
  });
});
