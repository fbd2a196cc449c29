/**
 * The listing's search and sort through the SDK, against a real server:
 * `listFiles` and `iterateFiles` pass them on, `updated_at` is in the
 * records, and a bad sort is a ValidationError.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signUp } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { Pail, ValidationError, type FileSort } from '../src/index.js';

let server: TestServer;
let pail: Pail;
let bucketId: number;

beforeAll(async () => {
  server = await startTestServer();
  const user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
  bucketId = (await pail.createBucket('search-sort')).id;
  for (const [name, body] of [
    ['Annual Report.PDF', 'xxxx'],
    ['docs/report-2026.txt', 'xx'],
    ['Straße.txt', 'x'],
    ['zebra.bin', 'xxxxxxxx'],
  ] as const) {
    await pail.uploadFile(bucketId, name, body);
  }
});

afterAll(async () => {
  await server?.close();
});

it('searches anywhere in names, ignoring case, page by page', async () => {
  const page = await pail.listFiles(bucketId, { search: 'REPORT', limit: 1 });
  expect(page.files.map((f) => f.filename)).toEqual(['Annual Report.PDF']);
  const rest = await pail.listFiles(bucketId, { search: 'REPORT', limit: 1, cursor: page.nextCursor! });
  expect(rest.files.map((f) => f.filename)).toEqual(['docs/report-2026.txt']);
  expect(rest.nextCursor).toBeNull();

  const inTree = await pail.listFiles(bucketId, { search: 'strasse', delimiter: '/' });
  expect(inTree.files.map((f) => f.filename)).toEqual(['Straße.txt']);
});

it('sorts by size both ways and iterates in that order', async () => {
  const desc = await pail.listFiles(bucketId, { sort: 'size', order: 'desc' });
  expect(desc.files.map((f) => f.size)).toEqual([8, 4, 2, 1]);
  const ascending: string[] = [];
  for await (const file of pail.iterateFiles(bucketId, { sort: 'size', order: 'asc', pageSize: 1 })) ascending.push(file.filename);
  expect(ascending).toEqual(['Straße.txt', 'docs/report-2026.txt', 'Annual Report.PDF', 'zebra.bin']);
});

it('gives each file updated_at, moved by a replace', async () => {
  const [before] = (await pail.listFiles(bucketId, { search: 'zebra' })).files;
  await new Promise((resolve) => setTimeout(resolve, 10));
  await pail.uploadFile(bucketId, 'zebra.bin', 'replaced');
  const [after] = (await pail.listFiles(bucketId, { sort: 'updated', order: 'desc', limit: 1 })).files;
  expect(after!.filename).toBe('zebra.bin');
  expect(Date.parse(after!.updated_at)).toBeGreaterThan(Date.parse(before!.updated_at));
});

it('refuses an unknown sort with a ValidationError', async () => {
  await expect(pail.listFiles(bucketId, { sort: 'colour' as FileSort })).rejects.toBeInstanceOf(ValidationError);
});
