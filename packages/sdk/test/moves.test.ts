/**
 * Moving files and folders and deleting folders through the SDK, against a
 * real server: what each call resolves with, and the typed errors of a name
 * taken, a missing file and a key without the permissions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { FileExistsError, FileNotFoundError, ForbiddenError, Pail } from '../src/index.js';

let server: TestServer;
let user: TestUser;
let pail: Pail;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const names = async (id: number, prefix = '') => (await pail.listFiles(id, { prefix })).files.map((file) => file.filename);

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
});
afterAll(async () => {
  await server?.close();
});

describe('moveFile and moveFolder', () => {
  it('renames a file, moves it into another bucket, and refuses a name taken unless overwrite', async () => {
    const a = (await pail.createBucket('sdk-move-a')).id;
    const b = (await pail.createBucket('sdk-move-b')).id;
    await pail.uploadFile(a, 'draft.txt', 'version one', { contentType: 'text/plain' });

    expect(await pail.moveFile(a, 'draft.txt', 'notes/final.txt')).toEqual({
      moved: 1,
      bucket_id: a,
      from: 'draft.txt',
      to_bucket_id: a,
      to: 'notes/final.txt',
    });
    expect(await rejection(pail.downloadFile(a, 'draft.txt'))).toBeInstanceOf(FileNotFoundError);
    expect(text(await pail.downloadFile(a, 'notes/final.txt'))).toBe('version one');

    await pail.uploadFile(b, 'final.txt', 'older');
    const taken = await rejection(pail.moveFile(a, 'notes/final.txt', 'final.txt', { toBucket: b }));
    expect(taken).toBeInstanceOf(FileExistsError);
    expect(taken).toMatchObject({ status: 409, code: 'FileExists' });
    expect(await pail.moveFile(a, 'notes/final.txt', 'final.txt', { toBucket: String(b), overwrite: true })).toMatchObject({ moved: 1, to_bucket_id: b });
    expect(text(await pail.downloadFile(b, 'final.txt'))).toBe('version one');
    expect(await pail.getBucket(a)).toMatchObject({ object_count: 0, total_bytes: 0 });
    expect(await pail.getBucket(b)).toMatchObject({ object_count: 1, total_bytes: 11 });
    expect(await rejection(pail.moveFile(a, 'gone.txt', 'x.txt'))).toBeInstanceOf(FileNotFoundError);
  });

  it('moves a folder with everything in it (the trailing slashes optional), then deletes one with deleteFolder', async () => {
    const id = (await pail.createBucket('sdk-folders')).id;
    for (const name of ['src/a.ts', 'src/lib/b.ts', 'src/lib/c.ts', 'srcs.txt']) await pail.uploadFile(id, name, name);
    expect(await pail.moveFolder(id, 'src', 'old/src')).toEqual({ moved: 3, bucket_id: id, from: 'src/', to_bucket_id: id, to: 'old/src/' });
    expect(await names(id)).toEqual(['old/src/a.ts', 'old/src/lib/b.ts', 'old/src/lib/c.ts', 'srcs.txt']);
    expect((await pail.moveFolder(id, 'src/', 'old/src/')).moved).toBe(0);

    expect(await pail.deleteFolder(id, 'old')).toEqual({ deleted: 3, prefix: 'old/' });
    expect(await names(id)).toEqual(['srcs.txt']);
    expect(await pail.getBucket(id)).toMatchObject({ object_count: 1, total_bytes: 'srcs.txt'.length });
  });

  it('a key without write (or delete) gets ForbiddenError naming the permission', async () => {
    const id = (await pail.createBucket('sdk-move-keys')).id;
    await pail.uploadFile(id, 'f.txt', 'f');
    const session = await Pail.login({ baseUrl: server.url, email: user.email, password: user.password });
    const readOnly = new Pail({ baseUrl: server.url, apiKey: (await session.createKey({ name: 'ro', permissions: ['read'] })).key });
    expect(await rejection(readOnly.moveFile(id, 'f.txt', 'g.txt'))).toMatchObject({ constructor: ForbiddenError, permission: 'write' });
    expect(await rejection(readOnly.deleteFolder(id, 'any/'))).toMatchObject({ constructor: ForbiddenError, permission: 'delete' });
    expect(await names(id)).toEqual(['f.txt']);
  });
});
