/**
 * API keys with limits through the SDK, against a real server: a session
 * makes them (`Pail.login`, `createKey`), and a limited key is refused with
 * typed errors: ForbiddenError naming the missing permission, a
 * BucketNotFoundError for a bucket outside its list, UnauthorizedError once it
 * has expired or been revoked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import {
  ApiKeyNotFoundError,
  BucketNotFoundError,
  ForbiddenError,
  Pail,
  UnauthorizedError,
  ValidationError,
  type CreateKeyOptions,
  type StorageBucket,
} from '../src/index.js';

let server: TestServer;
let user: TestUser;
/** The owner: an unlimited key, and a session for managing keys. */
let owner: Pail;
let bucketA: StorageBucket;
let bucketB: StorageBucket;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

/** A client with a new key of the owner's, made with these limits. */
async function clientWith(options: CreateKeyOptions): Promise<Pail> {
  const created = await owner.createKey(options);
  return new Pail({ baseUrl: server.url, apiKey: created.key });
}

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server.url);
  owner = new Pail({ baseUrl: server.url, apiKey: user.apiKey, sessionToken: user.token });
  bucketA = await owner.createBucket('bucket-a');
  bucketB = await owner.createBucket('bucket-b');
  await owner.uploadFile(bucketA.id, 'a.txt', 'in A');
  await owner.uploadFile(bucketB.id, 'b.txt', 'in B');
});

afterAll(async () => {
  await server?.close();
});

describe('managing keys with a session', () => {
  it('logs in, creates a key with limits, lists it with them, and revokes it', async () => {
    const session = await Pail.login({ baseUrl: server.url, email: user.email, password: user.password });
    const before = Date.now();
    const created = await session.createKey({ name: 'reader', buckets: [bucketA.id], permissions: ['read'], expiresIn: 3600 });
    expect(created).toMatchObject({ name: 'reader', buckets: [bucketA.id], permissions: ['read'], key: expect.stringMatching(/^pail_/) });
    const expiresAt = Date.parse(created.expires_at ?? '');
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3600_000 - 5000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000 + 5000);

    const listed = await session.listKeys();
    const record = listed.find((key) => key.id === created.id);
    expect(record).toEqual({
      id: created.id,
      name: 'reader',
      prefix: created.prefix,
      access_key_id: created.access_key_id,
      created_at: created.created_at,
      last_used_at: null,
      buckets: [bucketA.id],
      permissions: ['read'],
      expires_at: created.expires_at,
    });
    expect(created.access_key_id).toMatch(/^[A-Z2-7]{20}$/);
    expect(record).not.toHaveProperty('key');
    expect(record).not.toHaveProperty('secret_access_key');
    // The key signUp made has no limits.
    expect(listed.find((key) => key.name === 'test')).toMatchObject({ buckets: null, permissions: ['read', 'write', 'delete', 'manage'], expires_at: null });

    await session.revokeKey(created.id);
    expect((await session.listKeys()).map((key) => key.id)).not.toContain(created.id);
    const again = await rejection(session.revokeKey(created.id));
    expect(again).toBeInstanceOf(ApiKeyNotFoundError);
    expect(again).toMatchObject({ status: 404, code: 'ApiKeyNotFound' });
    expect(await rejection(new Pail({ baseUrl: server.url, apiKey: created.key }).listBuckets())).toBeInstanceOf(UnauthorizedError);

    await session.logout();
    expect(await rejection(session.listKeys())).toBeInstanceOf(UnauthorizedError);
  });

  it('takes expiresAt as a Date or a string, and a numeric string as a bucket id', async () => {
    const at = new Date(Date.now() + 86_400_000);
    const fromDate = await owner.createKey({ expiresAt: at, buckets: [String(bucketB.id)] });
    expect(Date.parse(fromDate.expires_at ?? '')).toBe(Math.floor(at.getTime()));
    expect(fromDate.buckets).toEqual([bucketB.id]);
    const fromString = await owner.createKey({ expiresAt: at.toISOString() });
    expect(fromString).toMatchObject({ buckets: null, permissions: ['read', 'write', 'delete', 'manage'] });
    expect(Date.parse(fromString.expires_at ?? '')).toBe(at.getTime());
  });

  it('refuses bad limits with ValidationError, and key management without a session', async () => {
    const cases: CreateKeyOptions[] = [
      { buckets: [] },
      { buckets: [987654] },
      { permissions: [] },
      { permissions: ['read', 'fly' as 'read'] },
      { expiresIn: 0 },
      { expiresIn: 60, expiresAt: new Date(Date.now() + 60_000) },
      { expiresAt: new Date(Date.now() - 60_000) },
    ];
    for (const options of cases) {
      const error = await rejection(owner.createKey(options));
      expect(error, JSON.stringify(options)).toBeInstanceOf(ValidationError);
    }
    // Another user's bucket is not one of yours.
    const stranger = await signUp(server.url);
    const theirs = await new Pail({ baseUrl: server.url, apiKey: stranger.apiKey }).createBucket('theirs');
    expect(await rejection(owner.createKey({ buckets: [theirs.id] }))).toBeInstanceOf(ValidationError);

    // The API key is not a session.
    const keyOnly = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
    expect(await rejection(keyOnly.listKeys())).toBeInstanceOf(UnauthorizedError);
    expect(await rejection(keyOnly.createKey({ name: 'nope' }))).toBeInstanceOf(UnauthorizedError);
    expect(await rejection(Pail.login({ baseUrl: server.url, email: user.email, password: 'wrong password' }))).toBeInstanceOf(UnauthorizedError);
  });
});

describe('what a limited key may do', () => {
  it('a read-only key reads, and is refused writes, deletes and management with ForbiddenError', async () => {
    const reader = await clientWith({ name: 'read-only', permissions: ['read'] });
    expect((await reader.listBuckets()).map((b) => b.id)).toEqual([bucketA.id, bucketB.id]);
    expect(new TextDecoder().decode(await reader.downloadFile(bucketA.id, 'a.txt'))).toBe('in A');
    expect((await reader.headFile(bucketA.id, 'a.txt')).size).toBe(4);
    expect((await reader.listFiles(bucketA.id)).files.map((f) => f.filename)).toEqual(['a.txt']);

    const upload = await rejection(reader.uploadFile(bucketA.id, 'new.txt', 'x'));
    expect(upload).toBeInstanceOf(ForbiddenError);
    expect(upload).toMatchObject({ status: 403, code: 'Forbidden', message: 'This API key does not allow write', permission: 'write' });
    expect(await rejection(reader.uploadMultipart(bucketA.id, 'new.txt', 'x'))).toMatchObject({ permission: 'write' });
    expect(await rejection(reader.deleteFile(bucketA.id, 'a.txt'))).toMatchObject({ status: 403, permission: 'delete' });
    expect(await rejection(reader.createBucket('made-by-reader'))).toMatchObject({ status: 403, permission: 'manage' });
    expect(await rejection(reader.setVisibility(bucketA.id, 'public'))).toMatchObject({ status: 403, permission: 'manage' });
    expect(await rejection(reader.deleteBucket(bucketA.id))).toMatchObject({ status: 403, permission: 'manage' });

    // Nothing changed.
    expect((await owner.listFiles(bucketA.id)).files.map((f) => f.filename)).toEqual(['a.txt']);
    expect((await owner.getBucket(bucketA.id)).public).toBe(false);
  });

  it('a write-only key uploads but cannot read', async () => {
    const writer = await clientWith({ permissions: ['write'] });
    expect(await writer.uploadFile(bucketA.id, 'dropped.txt', 'drop box')).toMatchObject({ filename: 'dropped.txt', size: 8 });
    expect(await rejection(writer.downloadFile(bucketA.id, 'dropped.txt'))).toMatchObject({ status: 403, permission: 'read' });
    expect(await rejection(writer.listFiles(bucketA.id))).toMatchObject({ status: 403, permission: 'read' });
    // HEAD has no body; the status still makes it a ForbiddenError.
    expect(await rejection(writer.headFile(bucketA.id, 'dropped.txt'))).toBeInstanceOf(ForbiddenError);
    await owner.deleteFile(bucketA.id, 'dropped.txt');
  });

  it('a key limited to bucket A finds no bucket B, lists only A, and cannot create buckets', async () => {
    const onlyA = await clientWith({ buckets: [bucketA.id] });
    expect((await onlyA.listBuckets()).map((b) => b.id)).toEqual([bucketA.id]);
    expect((await onlyA.getBucket(bucketA.id)).name).toBe('bucket-a');
    await onlyA.uploadFile(bucketA.id, 'by-a-key.txt', 'ok');
    await onlyA.deleteFile(bucketA.id, 'by-a-key.txt');

    for (const call of [
      () => onlyA.getBucket(bucketB.id),
      () => onlyA.listFiles(bucketB.id),
      () => onlyA.downloadFile(bucketB.id, 'b.txt'),
      () => onlyA.headFile(bucketB.id, 'b.txt'),
      () => onlyA.uploadFile(bucketB.id, 'intruder.txt', 'x'),
      () => onlyA.deleteFile(bucketB.id, 'b.txt'),
      () => onlyA.deleteBucket(bucketB.id),
    ]) {
      const error = await rejection(call());
      expect(error).toBeInstanceOf(BucketNotFoundError);
      expect(error).toMatchObject({ status: 404 });
    }
    const create = await rejection(onlyA.createBucket('made-by-a-key'));
    expect(create).toBeInstanceOf(ForbiddenError);
    expect((create as ForbiddenError).status).toBe(403);
    expect((await owner.listFiles(bucketB.id)).files.map((f) => f.filename)).toEqual(['b.txt']);
  });

  it('a short-lived key works until it expires, then gets UnauthorizedError', async () => {
    const created = await owner.createKey({ name: 'short', expiresIn: 2 });
    const short = new Pail({ baseUrl: server.url, apiKey: created.key });
    expect((await short.listBuckets()).length).toBe(2);
    server.clock.advance(Math.max(0, Date.parse(created.expires_at ?? '') - server.clock.now()) + 300);
    const expired = await rejection(short.listBuckets());
    expect(expired).toBeInstanceOf(UnauthorizedError);
    expect(expired).toMatchObject({ status: 401 });
    expect(await rejection(short.downloadFile(bucketA.id, 'a.txt'))).toBeInstanceOf(UnauthorizedError);
  });
});
