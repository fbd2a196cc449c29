/** The SDK's file tags against a real server: set, read, replace, remove, S3's limits, and names ending in `tags`. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { FileNotFoundError, Pail, ValidationError } from '../src/index.js';

let server: TestServer;
let pail: Pail;
let bucket: number;

beforeAll(async () => {
  server = await startTestServer();
  const user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
  bucket = (await pail.createBucket('sdk-tags')).id;
});
afterAll(() => server?.close());

describe('file tags', () => {
  it('sets, reads, replaces and removes tags; the details show them; the bytes stay', async () => {
    await pail.uploadFile(bucket, 'photos/cat.jpg', 'meow');
    expect(await pail.getTags(bucket, 'photos/cat.jpg')).toEqual({});
    expect(await pail.setTags(bucket, 'photos/cat.jpg', { pet: 'cat', album: '2026' })).toEqual({ album: '2026', pet: 'cat' });
    expect(await pail.getTags(bucket, 'photos/cat.jpg')).toEqual({ album: '2026', pet: 'cat' });
    expect((await pail.fileDetails(bucket, 'photos/cat.jpg')).tags).toEqual({ album: '2026', pet: 'cat' });
    expect(await pail.setTags(bucket, 'photos/cat.jpg', { only: 'this' })).toEqual({ only: 'this' });
    await pail.deleteTags(bucket, 'photos/cat.jpg');
    expect(await pail.getTags(bucket, 'photos/cat.jpg')).toEqual({});
    expect(new TextDecoder().decode(await pail.downloadFile(bucket, 'photos/cat.jpg'))).toBe('meow');
  });

  it('throws ValidationError past S3’s limits and FileNotFoundError for a missing file', async () => {
    await pail.uploadFile(bucket, 'limits.txt', 'x');
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v']));
    await expect(pail.setTags(bucket, 'limits.txt', eleven)).rejects.toBeInstanceOf(ValidationError);
    await expect(pail.setTags(bucket, 'limits.txt', { ['k'.repeat(129)]: 'v' })).rejects.toThrow(/too long/);
    await expect(pail.setTags(bucket, 'limits.txt', { k: 'v'.repeat(257) })).rejects.toThrow(/too long/);
    await expect(pail.getTags(bucket, 'missing.txt')).rejects.toBeInstanceOf(FileNotFoundError);
  });

  it('a file whose last segment is a word of the API (tags, versions, delete) is uploaded, tagged, read and deleted as itself', async () => {
    for (const name of ['notes/tags', 'notes/versions', 'notes/delete']) {
      await pail.uploadFile(bucket, name, `bytes of ${name}`);
      expect(await pail.setTags(bucket, name, { name })).toEqual({ name });
      expect(new TextDecoder().decode(await pail.downloadFile(bucket, name))).toBe(`bytes of ${name}`);
      expect((await pail.fileDetails(bucket, name)).tags).toEqual({ name });
    }
    const names = (await pail.listFiles(bucket, { prefix: 'notes/' })).files.map((file) => file.filename);
    expect(names).toEqual(['notes/delete', 'notes/tags', 'notes/versions']);
    for (const name of names) await pail.deleteFile(bucket, name);
    expect((await pail.listFiles(bucket, { prefix: 'notes/' })).files).toEqual([]);
  });
});
