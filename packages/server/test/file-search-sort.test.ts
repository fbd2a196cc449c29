/**
 * The file browser's listing (issue 25) on both APIs: `search` anywhere in a
 * name, ignoring case (Unicode too), wildcards literal; `sort` by each column
 * in both orders, paged with the cursor; `updated_at` moving on replace; bad
 * parameters a 400 with an error.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  user = await signUp(server.url);
});
afterAll(() => server.close());

const APIS = {
  developer: { base: '/api/v1/buckets', auth: () => ({ 'x-api-key': user.apiKey }) },
  client: { base: '/api/buckets', auth: () => ({ authorization: `Bearer ${user.token}` }) },
} as const;
type ApiName = keyof typeof APIS;

interface Listed {
  filename: string;
  size: number;
  content_type: string;
  created_at: string;
  updated_at: string;
}

const call = (api: ApiName, pathname: string, init: RequestInit = {}) =>
  fetch(`${server.url}${APIS[api].base}${pathname}`, { ...init, headers: { ...APIS[api].auth(), ...(init.headers as Record<string, string>) } });

async function newBucket(api: ApiName): Promise<number> {
  const response = await call(api, '', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: `s-${randomBytes(4).toString('hex')}` }),
  });
  return (await json(response)).data.id as number;
}

async function put(api: ApiName, bucket: number, name: string, body: string, type = 'application/octet-stream'): Promise<void> {
  const path = name.split('/').map(encodeURIComponent).join('/');
  const response = await call(api, `/${bucket}/files/${path}`, { method: 'PUT', body, headers: { 'content-type': type } });
  expect(response.status, name).toBe(201);
}

async function list(api: ApiName, bucket: number, query: Record<string, string>) {
  const response = await call(api, `/${bucket}/files?${new URLSearchParams(query).toString()}`);
  const body = await json(response);
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body as { data: Listed[]; objects: Listed[]; folders: string[]; next_cursor: string | null };
}

/** Every page of a listing, followed with next_cursor: the files and folders in the order they came. */
async function allPages(api: ApiName, bucket: number, query: Record<string, string>) {
  const files: Listed[] = [];
  const folders: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const page = await list(api, bucket, cursor ? { ...query, cursor } : query);
    files.push(...page.data);
    folders.push(...page.folders);
    cursor = page.next_cursor;
    if (cursor === null) return { files, folders };
  }
  throw new Error('the cursor never ended');
}

const names = (files: Listed[]) => files.map((file) => file.filename);
const byName = (a: Listed, b: Listed) => Buffer.compare(Buffer.from(a.filename), Buffer.from(b.filename)) as number;

describe.each(['developer', 'client'] as const)('search and sort on the %s API', (api) => {
  it('search finds a substring anywhere in the name, ignoring case, with Unicode folding', async () => {
    const bucket = await newBucket(api);
    for (const name of [
      'Quarterly-REPORT.pdf',
      'notes/report-draft.txt',
      'photo.png',
      'CAFÉ menu.txt',
      'Straße.txt',
      'ΟΔΟΣ.txt',
      'cafe\u0301-decomposed.txt',
    ]) {
      await put(api, bucket, name, 'x');
    }
    const search = async (term: string, extra: Record<string, string> = {}) => names((await list(api, bucket, { search: term, ...extra })).data);

    // In the name order of `sort=name`: ignoring case (byte order would put Q before n).
    expect(await search('port')).toEqual(['notes/report-draft.txt', 'Quarterly-REPORT.pdf']);
    expect(await search('rEpOrT-d')).toEqual(['notes/report-draft.txt']);
    expect(await search('café')).toEqual(['CAFÉ menu.txt', 'cafe\u0301-decomposed.txt']);
    expect(await search('CAF\u0045\u0301')).toEqual(['CAFÉ menu.txt', 'cafe\u0301-decomposed.txt']);
    expect(await search('STRASSE')).toEqual(['Straße.txt']);
    expect(await search('straße')).toEqual(['Straße.txt']);
    expect(await search('οδος')).toEqual(['ΟΔΟΣ.txt']);
    expect(await search('nothing-like-it')).toEqual([]);

    // Within a prefix, the search looks at what follows it.
    expect(await search('report', { prefix: 'notes/' })).toEqual(['notes/report-draft.txt']);
    expect(await search('notes', { prefix: 'notes/' })).toEqual([]);
    // With delimiter=/ the whole tree under the prefix is searched, and folders are not listed.
    const tree = await list(api, bucket, { search: 'draft', delimiter: '/' });
    expect(names(tree.data)).toEqual(['notes/report-draft.txt']);
    expect(tree.folders).toEqual([]);
  });

  it('treats % and _ in a search as themselves', async () => {
    const bucket = await newBucket(api);
    for (const name of ['100%.txt', '100x.txt', 'a_b.txt', 'axb.txt', 'back.txt']) await put(api, bucket, name, 'x');
    expect(names((await list(api, bucket, { search: '%' })).data)).toEqual(['100%.txt']);
    expect(names((await list(api, bucket, { search: '0%' })).data)).toEqual(['100%.txt']);
    expect(names((await list(api, bucket, { search: '_' })).data)).toEqual(['a_b.txt']);
    expect(names((await list(api, bucket, { search: 'A_' })).data)).toEqual(['a_b.txt']);
  });

  it('pages a search with its cursor, each match once', async () => {
    const bucket = await newBucket(api);
    const matching = Array.from({ length: 7 }, (_, i) => `Match-${i}.txt`);
    for (const name of [...matching, 'other-1.txt', 'other-2.txt']) await put(api, bucket, name, 'x');
    const { files } = await allPages(api, bucket, { search: 'match', limit: '3' });
    expect(names(files)).toEqual(matching);
  });

  it('sorts by each column both ways, across pages, every file once', async () => {
    const bucket = await newBucket(api);
    // Equal sizes and types on purpose: ties go by name, in the same order.
    const files: [string, number, string][] = [
      ['b.txt', 30, 'text/plain'],
      ['a.png', 10, 'image/png'],
      ['d.json', 20, 'application/json'],
      ['c.txt', 10, 'text/plain'],
      ['e.bin', 50, 'application/octet-stream'],
      ['f.png', 20, 'image/png'],
      ['g.csv', 0, 'text/csv'],
    ];
    for (const [name, size, type] of files) {
      await put(api, bucket, name, 'x'.repeat(size), type);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    const everything = (await list(api, bucket, {})).data;
    const compare = {
      name: byName,
      size: (a: Listed, b: Listed) => a.size - b.size || byName(a, b),
      type: (a: Listed, b: Listed) => (a.content_type < b.content_type ? -1 : a.content_type > b.content_type ? 1 : byName(a, b)),
      updated: (a: Listed, b: Listed) => (a.updated_at < b.updated_at ? -1 : a.updated_at > b.updated_at ? 1 : byName(a, b)),
    };
    for (const [sort, order] of Object.entries(compare)) {
      const ascending = [...everything].sort(order);
      for (const direction of ['asc', 'desc'] as const) {
        const expected = names(direction === 'asc' ? ascending : [...ascending].reverse());
        for (const limit of ['2', '3', '1000']) {
          const { files: got } = await allPages(api, bucket, { sort, order: direction, limit });
          expect(names(got), `${sort} ${direction} by ${limit}`).toEqual(expected);
        }
      }
    }
    // The size order, spelled out once: ties by name, descending too.
    expect(names((await list(api, bucket, { sort: 'size', order: 'desc' })).data)).toEqual(['e.bin', 'b.txt', 'f.png', 'd.json', 'c.txt', 'a.png', 'g.csv']);
  });

  it('with delimiter=/ lists the folders first, then the files in the sort order, across pages', async () => {
    const bucket = await newBucket(api);
    for (const [name, size] of [
      ['top/x.txt', 5],
      ['top/big.bin', 40],
      ['top/small.bin', 1],
      ['top/alpha/one.txt', 1],
      ['top/alpha/two.txt', 1],
      ['top/beta/', 0],
      ['top/gamma/deep/z.txt', 1],
      ['elsewhere.txt', 1],
    ] as const) {
      await put(api, bucket, name, 'x'.repeat(size));
    }
    for (const limit of ['1', '2', '10']) {
      const bySize = await allPages(api, bucket, { prefix: 'top/', delimiter: '/', sort: 'size', order: 'desc', limit });
      expect(bySize.folders, limit).toEqual(['top/alpha/', 'top/beta/', 'top/gamma/']);
      expect(names(bySize.files), limit).toEqual(['top/big.bin', 'top/x.txt', 'top/small.bin']);
      const byNameDown = await allPages(api, bucket, { prefix: 'top/', delimiter: '/', sort: 'name', order: 'desc', limit });
      expect(byNameDown.folders, limit).toEqual(['top/gamma/', 'top/beta/', 'top/alpha/']);
      expect(names(byNameDown.files), limit).toEqual(['top/x.txt', 'top/small.bin', 'top/big.bin']);
    }
    const top = await list(api, bucket, { delimiter: '/', sort: 'size' });
    expect(top.folders).toEqual(['top/']);
    expect(names(top.data)).toEqual(['elsewhere.txt']);
  });

  it('sorts by name as a file manager does: natural, ignoring case, folders first, across pages both ways', async () => {
    const bucket = await newBucket(api);
    const files = [
      'file10.txt',
      'file2.txt',
      'File1.txt',
      'data-b.csv',
      'Report-a.pdf',
      'report-b.pdf',
      'Data-a.csv',
      'file02b.txt',
      'x9.bin',
      'x10.bin',
      'x009.txt',
    ];
    const folders = ['Zeta/', 'alpha/', 'Beta2/', 'beta10/'];
    for (const name of files) await put(api, bucket, `top/${name}`, 'x');
    for (const folder of folders) await put(api, bucket, `top/${folder}inside-${folder.length}.txt`, 'x');
    await put(api, bucket, 'top/beta10/deeper/leaf.txt', 'x');
    await put(api, bucket, 'top/Beta2/', '');
    const expectedFiles = [
      'data-a.csv',
      'data-b.csv',
      'file1.txt',
      'file2.txt',
      'file02b.txt',
      'file10.txt',
      'report-a.pdf',
      'report-b.pdf',
      'x9.bin',
      'x009.txt',
      'x10.bin',
    ];
    const expectedFolders = ['alpha/', 'Beta2/', 'beta10/', 'Zeta/'];
    for (const limit of ['1', '3', '1000']) {
      const up = await allPages(api, bucket, { prefix: 'top/', delimiter: '/', sort: 'name', limit });
      expect(up.folders, limit).toEqual(expectedFolders.map((f) => `top/${f}`));
      expect(
        names(up.files).map((n) => n.slice(4).toLowerCase()),
        limit,
      ).toEqual(expectedFiles);
      const down = await allPages(api, bucket, { prefix: 'top/', delimiter: '/', sort: 'name', order: 'desc', limit });
      expect(down.folders, limit).toEqual(expectedFolders.map((f) => `top/${f}`).reverse());
      expect(
        names(down.files).map((n) => n.slice(4).toLowerCase()),
        limit,
      ).toEqual([...expectedFiles].reverse());
    }
    // The case as written is kept, and breaks a tie of folded names: upper case first.
    await put(api, bucket, 'top/DATA-B.csv', 'x');
    const page = await list(api, bucket, { prefix: 'top/', delimiter: '/', sort: 'name', limit: '7' });
    expect(names(page.data)).toEqual(['top/Data-a.csv', 'top/DATA-B.csv', 'top/data-b.csv']);
    // Without a delimiter the whole tree, each folder's contents right after its name; a search keeps the order.
    const tree = await allPages(api, bucket, { prefix: 'top/', sort: 'name', limit: '5' });
    expect(names(tree.files).slice(0, 3)).toEqual(['top/alpha/inside-6.txt', 'top/Beta2/', 'top/Beta2/inside-6.txt']);
    expect(names((await list(api, bucket, { search: 'file', sort: 'name' })).data)).toEqual([
      'top/File1.txt',
      'top/file2.txt',
      'top/file02b.txt',
      'top/file10.txt',
    ]);
    // Without sort the default listing stays in byte order, as S3 lists.
    expect(names((await list(api, bucket, { prefix: 'top/', limit: '3' })).data)).toEqual(['top/Beta2/', 'top/Beta2/inside-6.txt', 'top/DATA-B.csv']);
  });

  it('gives every file updated_at, which moves when the file is replaced', async () => {
    const bucket = await newBucket(api);
    await put(api, bucket, 'doc.txt', 'first');
    const [before] = (await list(api, bucket, {})).data;
    expect(before!.updated_at).toBe(before!.created_at);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await put(api, bucket, 'doc.txt', 'second version');
    const [after] = (await list(api, bucket, { sort: 'updated', order: 'desc' })).data;
    expect(after!.created_at).toBe(before!.created_at);
    expect(Date.parse(after!.updated_at)).toBeGreaterThan(Date.parse(before!.updated_at));
  });

  it('refuses a bad sort, order, search or cursor with 400 and an error', async () => {
    const bucket = await newBucket(api);
    await put(api, bucket, 'a.txt', 'x');
    await put(api, bucket, 'b.txt', 'x');
    const sortedCursor = (await list(api, bucket, { sort: 'size', limit: '1' })).next_cursor!;
    const plainCursor = (await list(api, bucket, { limit: '1' })).next_cursor!;
    const refused: Record<string, string>[] = [
      { sort: 'colour' },
      { sort: 'SIZE' },
      { order: 'up' },
      { sort: 'size', order: 'sideways' },
      { search: 'x'.repeat(1025) },
      { sort: 'size', cursor: 'garbage' },
      { sort: 'size', cursor: plainCursor },
      { sort: 'size', order: 'desc', cursor: sortedCursor },
      { sort: 'type', cursor: sortedCursor },
      { cursor: sortedCursor },
      { sort: 'size', cursor: `s1.${Buffer.from('[1,2').toString('base64url')}` },
      { sort: 'size', cursor: `s1.${Buffer.from(JSON.stringify(['size', 'asc', 'f', 'a', 'big'])).toString('base64url')}` },
    ];
    for (const query of refused) {
      const response = await call(api, `/${bucket}/files?${new URLSearchParams(query).toString()}`);
      const body = await json(response);
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(typeof body.error, JSON.stringify(query)).toBe('string');
    }
  });
});
