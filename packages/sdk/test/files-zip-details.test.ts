/** The SDK's file details, metadata edit and zips, against a real server. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { unzip } from '../../server/test/helpers/unzip.js';
import { FileNotFoundError, ForbiddenError, Pail, ValidationError } from '../src/index.js';

let server: TestServer;
let pail: Pail;
let tmp: string;
let bucket: number;

beforeAll(async () => {
  server = await startTestServer();
  const user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pail-sdk-zip-'));
  bucket = (await pail.createBucket('sdk-zips')).id;
  for (const name of ['docs/a.txt', 'docs/b.txt', 'docs/deep/c.txt', 'other.txt']) await pail.uploadFile(bucket, name, `bytes of ${name}`);
});
afterAll(async () => {
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('file details and edit', () => {
  it('reads the details, edits metadata, type and headers, and refuses what the server refuses', async () => {
    const before = await pail.fileDetails(bucket, 'docs/a.txt');
    expect(before).toMatchObject({ filename: 'docs/a.txt', size: 'bytes of docs/a.txt'.length, metadata: {}, cache_control: null });
    const edited = await pail.editFile(bucket, 'docs/a.txt', { metadata: { owner: 'ada' }, contentType: 'text/markdown', cacheControl: 'max-age=10' });
    expect(edited).toMatchObject({ metadata: { owner: 'ada' }, content_type: 'text/markdown', cache_control: 'max-age=10', etag: before.etag });
    expect(await pail.fileDetails(bucket, 'docs/a.txt')).toEqual(edited);
    expect((await pail.editFile(bucket, 'docs/a.txt', { cacheControl: null })).cache_control).toBeNull();
    await expect(pail.editFile(bucket, 'docs/a.txt', { metadata: { big: 'x'.repeat(3000) } })).rejects.toBeInstanceOf(ValidationError);
    await expect(pail.fileDetails(bucket, 'docs/missing.txt')).rejects.toBeInstanceOf(FileNotFoundError);
  });
});

describe('zips', () => {
  it('writes a folder, the whole bucket and a selection to disk', async () => {
    const folder = path.join(tmp, 'docs.zip');
    expect(await pail.zipToPath(bucket, folder, { prefix: 'docs/' })).toBeGreaterThan(0);
    const entries = await unzip(folder, true);
    expect(entries.map((e) => [e.name, e.bytes!.toString()])).toEqual([
      ['a.txt', 'bytes of docs/a.txt'],
      ['b.txt', 'bytes of docs/b.txt'],
      ['deep/c.txt', 'bytes of docs/deep/c.txt'],
    ]);
    const whole = path.join(tmp, 'whole.zip');
    await pail.zipToPath(bucket, whole);
    expect((await unzip(whole)).map((e) => e.name)).toEqual(['docs/a.txt', 'docs/b.txt', 'docs/deep/c.txt', 'other.txt']);

    const chunks: Uint8Array[] = [];
    const stream = await pail.zipStream(bucket, { prefix: 'docs/', filenames: ['docs/b.txt'], folders: ['docs/deep/'] });
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    expect((await unzip(Buffer.concat(chunks))).map((e) => e.name)).toEqual(['b.txt', 'deep/c.txt']);
  });

  it('throws the server’s refusals: an empty selection, a folder with no file, a key without read (refused before its bucket is looked at)', async () => {
    await expect(pail.zipStream(bucket, { filenames: [] })).rejects.toBeInstanceOf(ValidationError);
    await expect(pail.zipStream(bucket, { prefix: 'nothing/' })).rejects.toBeInstanceOf(FileNotFoundError);
    const key = await (
      await Pail.login({ baseUrl: server.url, email: (await signUp(server.url)).email, password: 'correct horse' })
    ).createKey({ permissions: ['write'] });
    const writeOnly = new Pail({ baseUrl: server.url, apiKey: key.key });
    await expect(writeOnly.zipStream(bucket)).rejects.toBeInstanceOf(ForbiddenError);
  });
});
