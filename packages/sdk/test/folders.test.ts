/**
 * Folders through the SDK, against a real server: names with `/` on every
 * file call, listing with a delimiter page by page, and deleting a file whose
 * last segment is `delete` (which the Developer API would otherwise read as
 * its delete alias).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { FileNotFoundError, Pail, ValidationError, type BucketId } from '../src/index.js';

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

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
});

afterAll(async () => {
  await server?.close();
});

describe('names with slashes', () => {
  let bucketId: number;
  beforeAll(async () => {
    bucketId = (await pail.createBucket('slashes')).id;
  });

  it('uploads, heads, downloads, lists and deletes a file inside folders', async () => {
    const name = 'dir one/sub #2/ünï ?&%.txt';
    expect(await pail.uploadFile(bucketId, name, 'deep', { contentType: 'text/plain' })).toEqual({ filename: name, size: 4, updated: false });
    expect(text(await pail.downloadFile(bucketId, name))).toBe('deep');
    expect(await pail.headFile(bucketId, name)).toMatchObject({ size: 4, contentType: 'text/plain' });

    const { files } = await pail.listFiles(bucketId, { prefix: 'dir one/' });
    expect(files.map((f) => f.filename)).toEqual([name]);
    // The object's url keeps the slashes literal, each segment percent-encoded.
    const url = files[0]?.url ?? '';
    expect(url).toContain('/dir%20one/sub%20%232/');
    expect(decodeURIComponent(new URL(url).pathname).endsWith(`/${name}`)).toBe(true);

    await pail.deleteFile(bucketId, name);
    expect(await rejection(pail.downloadFile(bucketId, name))).toBeInstanceOf(FileNotFoundError);
    expect(await rejection(pail.headFile(bucketId, name))).toBeInstanceOf(FileNotFoundError);
  });

  it('reaches the same file as a request with %2F', async () => {
    await pail.uploadFile(bucketId, 'a/b/c.txt', 'same file');
    const encoded = await fetch(`${server.url}/api/v1/buckets/${bucketId}/files/a%2Fb%2Fc.txt`, { headers: { 'x-api-key': user.apiKey } });
    expect(encoded.status).toBe(200);
    expect(await encoded.text()).toBe('same file');
  });

  it('deletes a file whose last segment is delete, and not the file the alias would name', async () => {
    await pail.uploadFile(bucketId, 'notes', 'the parent name');
    await pail.uploadFile(bucketId, 'notes/delete', 'a file called delete');
    expect(text(await pail.downloadFile(bucketId, 'notes/delete'))).toBe('a file called delete');

    await pail.deleteFile(bucketId, 'notes/delete');
    expect(await rejection(pail.downloadFile(bucketId, 'notes/delete'))).toBeInstanceOf(FileNotFoundError);
    // `DELETE …/files/notes/delete` would have deleted this one instead.
    expect(text(await pail.downloadFile(bucketId, 'notes'))).toBe('the parent name');

    // Deeper, and a file named just `delete`.
    await pail.uploadFile(bucketId, 'x/y/delete', 'deeper');
    await pail.deleteFile(bucketId, 'x/y/delete');
    expect(await rejection(pail.headFile(bucketId, 'x/y/delete'))).toBeInstanceOf(FileNotFoundError);
    await pail.uploadFile(bucketId, 'delete', 'top level');
    await pail.deleteFile(bucketId, 'delete');
    expect(await rejection(pail.downloadFile(bucketId, 'delete'))).toBeInstanceOf(FileNotFoundError);
    expect(text(await pail.downloadFile(bucketId, 'notes'))).toBe('the parent name');
  });

  it('keeps an empty folder marker and refuses one with bytes', async () => {
    expect(await pail.uploadFile(bucketId, 'empty-folder/', new Uint8Array(0))).toMatchObject({ filename: 'empty-folder/', size: 0 });
    expect((await pail.listFiles(bucketId, { delimiter: '/' })).folders).toContain('empty-folder/');
    expect(await rejection(pail.uploadFile(bucketId, 'full-folder/', 'bytes'))).toMatchObject({ status: 400, code: 'ValidationError' });
  });

  it('refuses . and .. segments before any request, and empty segments as the server does', async () => {
    for (const name of ['a/../b.txt', './b.txt', 'a/.']) {
      expect(await rejection(pail.uploadFile(bucketId, name, 'x'))).toBeInstanceOf(ValidationError);
      expect(await rejection(pail.deleteFile(bucketId, name))).toBeInstanceOf(ValidationError);
    }
    expect(await rejection(pail.uploadFile(bucketId, '/leading.txt', 'x'))).toMatchObject({ status: 400, code: 'ValidationError' });
    expect(await rejection(pail.uploadFile(bucketId, 'a//b.txt', 'x'))).toMatchObject({ status: 400, code: 'ValidationError' });
  });
});

describe('listing with a delimiter', () => {
  let bucketId: number;
  const names = [
    'photos/2026/cat.jpg',
    'photos/2026/dog.jpg',
    'photos/a.txt',
    'photos/b.txt',
    'photos/c/deep/x.bin',
    'photos/d/',
    'photos/e.txt',
    'readme.txt',
    'zeta/one.txt',
  ];
  beforeAll(async () => {
    bucketId = (await pail.createBucket('folders')).id;
    for (const name of names) await pail.uploadFile(bucketId, name, name.endsWith('/') ? '' : name);
  });

  /** Every page of one listing, each checked against the page size. */
  async function allPages(id: BucketId, prefix: string | undefined, limit: number) {
    const pages: { files: string[]; folders: string[] }[] = [];
    let cursor: string | undefined;
    do {
      const page = await pail.listFiles(id, { prefix, delimiter: '/', limit, cursor });
      expect(page.files.length + page.folders.length).toBeLessThanOrEqual(limit);
      pages.push({ files: page.files.map((f) => f.filename), folders: page.folders });
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined && pages.length < 50);
    return pages;
  }

  it('gives the top level: files in data, folders in folders', async () => {
    const top = await pail.listFiles(bucketId, { delimiter: '/' });
    expect(top.files.map((f) => f.filename)).toEqual(['readme.txt']);
    expect(top.folders).toEqual(['photos/', 'zeta/']);
    expect(top.nextCursor).toBeNull();
  });

  it('gives the files directly under a prefix and its sub-folders (a folder marker through its folder)', async () => {
    const under = await pail.listFiles(bucketId, { prefix: 'photos/', delimiter: '/' });
    expect(under.files.map((f) => f.filename)).toEqual(['photos/a.txt', 'photos/b.txt', 'photos/e.txt']);
    expect(under.folders).toEqual(['photos/2026/', 'photos/c/', 'photos/d/']);
    expect(under.nextCursor).toBeNull();

    const deeper = await pail.listFiles(bucketId, { prefix: 'photos/2026/', delimiter: '/' });
    expect(deeper.files.map((f) => f.filename)).toEqual(['photos/2026/cat.jpg', 'photos/2026/dog.jpg']);
    expect(deeper.folders).toEqual([]);
    // The marker is not a file inside its own folder.
    expect(await pail.listFiles(bucketId, { prefix: 'photos/d/', delimiter: '/' })).toMatchObject({ files: [], folders: [] });
  });

  it('counts files and folders together in a page, and continues after both', async () => {
    const pages = await allPages(bucketId, 'photos/', 2);
    // Ascending by name, files and folders interleaved: 2026/, a.txt | b.txt, c/ | d/, e.txt.
    expect(pages).toEqual([
      { files: ['photos/a.txt'], folders: ['photos/2026/'] },
      { files: ['photos/b.txt'], folders: ['photos/c/'] },
      { files: ['photos/e.txt'], folders: ['photos/d/'] },
    ]);
    const single = await allPages(bucketId, 'photos/', 1);
    expect(single.flatMap((page) => [...page.folders, ...page.files])).toEqual([
      'photos/2026/',
      'photos/a.txt',
      'photos/b.txt',
      'photos/c/',
      'photos/d/',
      'photos/e.txt',
    ]);
    const top = await allPages(bucketId, undefined, 1);
    expect(top.flatMap((page) => [...page.folders, ...page.files])).toEqual(['photos/', 'readme.txt', 'zeta/']);
  });

  it('lists every object, markers included, and no folders without a delimiter', async () => {
    const flat = await pail.listFiles(bucketId);
    expect(flat.files.map((f) => f.filename)).toEqual(names);
    expect(flat.folders).toEqual([]);
    const walked: string[] = [];
    for await (const file of pail.iterateFiles(bucketId, { prefix: 'photos/', pageSize: 3 })) walked.push(file.filename);
    expect(walked).toEqual(names.filter((name) => name.startsWith('photos/')));
  });

  it('refuses a delimiter other than /', async () => {
    const error = await rejection(pail.listFiles(bucketId, { delimiter: '|' as '/' }));
    expect(error).toBeInstanceOf(ValidationError);
  });
});
