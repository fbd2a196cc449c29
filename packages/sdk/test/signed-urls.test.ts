/**
 * Signed urls through the SDK, against a real server: `signedUrl` makes them
 * with the key, then plain fetch (no key, no session) downloads or uploads
 * with them; `uploadToSignedUrl` turns their refusals into typed errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { FileNotFoundError, ForbiddenError, Pail, PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError, type UploadResult } from '../src/index.js';

let server: TestServer;
let user: TestUser;
let owner: Pail;
let bucketId: number;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** The url with one query parameter changed, as someone tampering with it would. */
function altered(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set(name, value);
  return parsed.toString();
}

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server.url);
  owner = new Pail({ baseUrl: server.url, apiKey: user.apiKey, sessionToken: user.token });
  bucketId = (await owner.createBucket('signed')).id;
});

afterAll(async () => {
  await server?.close();
});

describe('GET urls', () => {
  it('downloads a private file with plain fetch and no credentials, also by range, until it expires', async () => {
    const bytes = new Uint8Array(5000).map((_, i) => i % 251);
    await owner.uploadFile(bucketId, 'reports/2026/q1.bin', bytes, { contentType: 'application/x-report' });
    // Without the signature the file is private.
    expect((await fetch(`${server.url}/api/v1/buckets/${bucketId}/files/reports/2026/q1.bin`)).status).toBe(401);

    const before = Date.now();
    const signed = await owner.signedUrl(bucketId, 'reports/2026/q1.bin', { expiresIn: 60 });
    expect(signed.method).toBe('GET');
    expect(Date.parse(signed.expires_at)).toBeGreaterThanOrEqual(before + 55_000);
    expect(Date.parse(signed.expires_at)).toBeLessThanOrEqual(Date.now() + 65_000);
    const url = new URL(signed.url);
    expect(url.origin).toBe(server.url);
    expect(url.pathname).toMatch(/^\/storage\/[^/]+\/reports\/2026\/q1\.bin$/);
    expect(url.searchParams.get('X-Pail-Signature')).toBeTruthy();

    const response = await fetch(signed.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-report');
    expect(Buffer.compare(Buffer.from(await response.arrayBuffer()), Buffer.from(bytes))).toBe(0);

    const ranged = await fetch(signed.url, { headers: { range: 'bytes=10-19' } });
    expect(ranged.status).toBe(206);
    expect([...new Uint8Array(await ranged.arrayBuffer())]).toEqual([...bytes.subarray(10, 20)]);
    expect((await fetch(signed.url, { method: 'HEAD' })).headers.get('content-length')).toBe('5000');
  });

  it('is refused with 403 once altered, pointed at another file, or expired', async () => {
    await owner.uploadFile(bucketId, 'short.txt', 'short lived');
    await owner.uploadFile(bucketId, 'other.txt', 'not signed');
    const signed = await owner.signedUrl(bucketId, 'short.txt', { method: 'GET', expiresIn: 1 });
    expect((await fetch(signed.url)).status).toBe(200);

    const longer = String(Number(new URL(signed.url).searchParams.get('X-Pail-Expires')) + 3600);
    expect((await fetch(altered(signed.url, 'X-Pail-Expires', longer))).status).toBe(403);
    const sibling = new URL(signed.url);
    sibling.pathname = sibling.pathname.replace(/short\.txt$/, 'other.txt');
    expect((await fetch(sibling)).status).toBe(403);

    server.clock.advance(Math.max(0, Date.parse(signed.expires_at) - server.clock.now()) + 1100);
    const expired = await fetch(signed.url);
    expect(expired.status).toBe(403);
    expect(await expired.json()).toMatchObject({ error: expect.any(String) });
  });

  it('is made only for a file that exists, within 1 to 604800 seconds', async () => {
    const missing = await rejection(owner.signedUrl(bucketId, 'no/such/file.txt'));
    expect(missing).toBeInstanceOf(FileNotFoundError);
    expect(missing).toMatchObject({ status: 404, code: 'FileNotFound' });
    expect(await rejection(owner.signedUrl(bucketId, 'short.txt', { expiresIn: 0 }))).toBeInstanceOf(ValidationError);
    expect(await rejection(owner.signedUrl(bucketId, 'short.txt', { expiresIn: 604_801 }))).toBeInstanceOf(ValidationError);
    // Default lifetime: an hour.
    const signed = await owner.signedUrl(bucketId, 'short.txt');
    expect(Math.abs(Date.parse(signed.expires_at) - server.clock.now() - 3600_000)).toBeLessThan(10_000);
  });
});

describe('PUT urls', () => {
  it('uploads with plain fetch and no credentials, into a folder', async () => {
    const signed = await owner.signedUrl(bucketId, 'inbox/from-fetch.bin', { method: 'PUT', expiresIn: 120 });
    expect(signed.method).toBe('PUT');
    const bytes = new Uint8Array([1, 2, 3, 4, 5, 250]);
    const response = await fetch(signed.url, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect(response.status).toBe(201);
    expect(((await response.json()) as { data: UploadResult }).data).toEqual({ filename: 'inbox/from-fetch.bin', size: 6, updated: false });
    expect([...(await owner.downloadFile(bucketId, 'inbox/from-fetch.bin'))]).toEqual([...bytes]);

    // The same url again replaces the file.
    const again = await fetch(signed.url, { method: 'PUT', body: new Uint8Array([9]) });
    expect(((await again.json()) as { data: UploadResult }).data).toMatchObject({ size: 1, updated: true });
  });

  it('holds the upload to content_type and max_bytes, with typed errors through uploadToSignedUrl', async () => {
    const signed = await owner.signedUrl(bucketId, 'inbox/note.txt', { method: 'PUT', contentType: 'text/plain', maxBytes: 10 });
    const anonymous = new Pail({ baseUrl: server.url });

    const wrongType = await rejection(anonymous.uploadToSignedUrl(signed.url, '{}', { contentType: 'application/json' }));
    expect(wrongType).toBeInstanceOf(UnsupportedMediaTypeError);
    expect(wrongType).toMatchObject({ status: 415 });
    const tooBig = await rejection(anonymous.uploadToSignedUrl(signed.url, 'eleven byte', { contentType: 'text/plain' }));
    expect(tooBig).toBeInstanceOf(PayloadTooLargeError);
    expect(tooBig).toMatchObject({ status: 413 });
    await expect(owner.headFile(bucketId, 'inbox/note.txt')).rejects.toBeInstanceOf(FileNotFoundError);

    // No Content-Type: the url's type.
    expect(await anonymous.uploadToSignedUrl(signed.url, 'ten bytes!')).toEqual({ filename: 'inbox/note.txt', size: 10, updated: false });
    expect(await owner.headFile(bucketId, 'inbox/note.txt')).toMatchObject({ size: 10, contentType: 'text/plain' });
    expect(await anonymous.uploadToSignedUrl(signed.url, 'short', { contentType: 'text/plain' })).toMatchObject({ size: 5, updated: true });
    expect(text(await owner.downloadFile(bucketId, 'inbox/note.txt'))).toBe('short');

    const tampered = await rejection(anonymous.uploadToSignedUrl(altered(signed.url, 'X-Pail-Max-Bytes', '1000000'), 'x'));
    expect(tampered).toBeInstanceOf(ForbiddenError);
    expect(tampered).toMatchObject({ status: 403 });
    // A GET url does not upload.
    const getUrl = await owner.signedUrl(bucketId, 'inbox/note.txt');
    expect((await fetch(getUrl.url, { method: 'PUT', body: 'x' })).status).not.toBe(201);
    expect(text(await owner.downloadFile(bucketId, 'inbox/note.txt'))).toBe('short');
  });

  it('does not send the client key to a signed url', async () => {
    const seen: Headers[] = [];
    const spy: typeof fetch = async (input, init) => {
      seen.push(new Headers(init?.headers));
      return fetch(input, init);
    };
    const signed = await owner.signedUrl(bucketId, 'inbox/spied.txt', { method: 'PUT' });
    const client = new Pail({ baseUrl: server.url, apiKey: user.apiKey, sessionToken: user.token, fetch: spy });
    await client.uploadToSignedUrl(signed.url, 'no credentials');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.get('x-api-key')).toBeNull();
    expect(seen[0]?.get('authorization')).toBeNull();
  });
});

describe('who may sign, and what ends a url', () => {
  it('needs manage, plus read for GET and write for PUT', async () => {
    await owner.uploadFile(bucketId, 'guarded.txt', 'guarded');
    const client = async (permissions: ('read' | 'write' | 'delete' | 'manage')[]) =>
      new Pail({ baseUrl: server.url, apiKey: (await owner.createKey({ permissions })).key });

    const readOnly = await client(['read']);
    expect(await rejection(readOnly.signedUrl(bucketId, 'guarded.txt'))).toMatchObject({ status: 403, permission: 'manage' });
    const manageRead = await client(['manage', 'read']);
    expect((await fetch((await manageRead.signedUrl(bucketId, 'guarded.txt')).url)).status).toBe(200);
    expect(await rejection(manageRead.signedUrl(bucketId, 'guarded.txt', { method: 'PUT' }))).toMatchObject({ status: 403, permission: 'write' });
    const manageWrite = await client(['manage', 'write']);
    expect(await rejection(manageWrite.signedUrl(bucketId, 'guarded.txt'))).toMatchObject({ status: 403, permission: 'read' });
    const put = await manageWrite.signedUrl(bucketId, 'guarded.txt', { method: 'PUT' });
    expect((await fetch(put.url, { method: 'PUT', body: 'replaced' })).status).toBe(201);
    expect(text(await owner.downloadFile(bucketId, 'guarded.txt'))).toBe('replaced');
  });

  it('ends when the key that made it is revoked', async () => {
    await owner.uploadFile(bucketId, 'revocable.txt', 'for a while');
    const created = await owner.createKey({ name: 'signer' });
    const signer = new Pail({ baseUrl: server.url, apiKey: created.key });
    const signed = await signer.signedUrl(bucketId, 'revocable.txt');
    const put = await signer.signedUrl(bucketId, 'revocable.txt', { method: 'PUT' });
    expect((await fetch(signed.url)).status).toBe(200);

    await owner.revokeKey(created.id);
    expect((await fetch(signed.url)).status).toBe(403);
    expect(await rejection(new Pail({ baseUrl: server.url }).uploadToSignedUrl(put.url, 'too late'))).toBeInstanceOf(ForbiddenError);
    expect(text(await owner.downloadFile(bucketId, 'revocable.txt'))).toBe('for a while');
  });

  it('ends when its bucket is deleted', async () => {
    const doomed = await owner.createBucket('doomed');
    await owner.uploadFile(doomed.id, 'x.txt', 'x');
    const signed = await owner.signedUrl(doomed.id, 'x.txt');
    expect((await fetch(signed.url)).status).toBe(200);
    await owner.deleteBucket(doomed.id);
    expect((await fetch(signed.url)).status).toBe(403);
  });
});
