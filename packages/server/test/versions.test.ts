/**
 * Versioned buckets through the Pail API (decisions.md "Versions and the
 * trash"): versioning on and off, every write keeping the version it
 * replaces, delete markers and the trash, reading, restoring and deleting one
 * version for good, with counts, total_bytes, noncurrent_bytes and the
 * owner's usage exact at every step, and the cap counting every version.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const KiB = 1024;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { PLAN_FREE_STORAGE_BYTES: String(64 * KiB) } });
});
afterAll(() => server?.close());

async function setUp(versioning: 'enabled' | 'suspended' | null = 'enabled') {
  const user = await signUp(server.url);
  const dev = devApi(server.url, user);
  const created = await dev('', { method: 'POST', body: JSON.stringify({ name: `v-${randomBytes(4).toString('hex')}` }) });
  expect(created.status).toBe(201);
  const bucket = (await json(created)).data as { id: number; versioning: string; noncurrent_bytes: number };
  expect(bucket.versioning).toBe('unversioned');
  expect(bucket.noncurrent_bytes).toBe(0);
  if (versioning) {
    const patched = await dev(`/${bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning }) });
    expect(patched.status).toBe(200);
    expect((await json(patched)).data.versioning).toBe(versioning);
  }
  const put = async (name: string, body: Buffer | string) => {
    const response = await dev(`/${bucket.id}/files/${name}`, { method: 'PUT', body: body as BodyInit, headers: { 'content-type': 'text/plain' } });
    return { status: response.status, body: await json(response) };
  };
  const counts = async () => {
    const b = (await json(await dev(`/${bucket.id}`))).data;
    const me = await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    return { count: b.object_count, total: b.total_bytes, noncurrent: b.noncurrent_bytes, used: me.data.storage_used_bytes };
  };
  const versions = async (name: string) => {
    const response = await dev(`/${bucket.id}/files/${name}/versions`);
    return {
      status: response.status,
      data: (await json(response)).data as { version_id: string; size: number; is_latest: boolean; is_delete_marker: boolean; deleted_by: string | null }[],
    };
  };
  return { user, dev, bucket, put, counts, versions };
}

describe('a bucket with versioning enabled', () => {
  it('keeps every version an overwrite replaces; a delete adds a marker and the file stays restorable; counts exact throughout', async () => {
    const { dev, bucket, put, counts, versions } = await setUp();
    const first = await put('notes.txt', 'one');
    expect(first.status).toBe(201);
    expect(first.body.data.version_id).toMatch(/^[0-9a-f]{32}$/);
    const second = await put('notes.txt', 'second!');
    expect(second.body.data.updated).toBe(true);
    expect(await counts()).toMatchObject({ count: 1, total: 10, noncurrent: 3 });
    const listed = await versions('notes.txt');
    expect(listed.data.map((v) => [v.version_id, v.size, v.is_latest])).toEqual([
      [second.body.data.version_id, 7, true],
      [first.body.data.version_id, 3, false],
    ]);
    // The old version's bytes, by its id; the current by none.
    const old = await dev(`/${bucket.id}/files/notes.txt?version_id=${first.body.data.version_id}`);
    expect(old.status).toBe(200);
    expect(await old.text()).toBe('one');
    expect(await (await dev(`/${bucket.id}/files/notes.txt`)).text()).toBe('second!');

    const deleted = await dev(`/${bucket.id}/files/notes.txt`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect((await dev(`/${bucket.id}/files/notes.txt`)).status).toBe(404);
    expect((await json(await dev(`/${bucket.id}/files`))).data).toEqual([]);
    expect(await counts()).toMatchObject({ count: 0, total: 10, noncurrent: 10, used: 10 });
    const afterDelete = await versions('notes.txt');
    expect(afterDelete.data[0]).toMatchObject({ is_latest: true, is_delete_marker: true, size: 0 });
    expect(afterDelete.data[0]!.deleted_by).toMatch(/^key:\d+$/);
    const trash = (await json(await dev(`/${bucket.id}/trash`))).data;
    expect(trash).toEqual([expect.objectContaining({ filename: 'notes.txt', restorable_version_id: second.body.data.version_id, size: 7 })]);

    // Restoring the first version: a copy becomes current, as a new version.
    const restored = await dev(`/${bucket.id}/files/notes.txt/restore`, { method: 'POST', body: JSON.stringify({ version_id: first.body.data.version_id }) });
    expect(restored.status).toBe(201);
    expect(await (await dev(`/${bucket.id}/files/notes.txt`)).text()).toBe('one');
    expect((await json(await dev(`/${bucket.id}/trash`))).data).toEqual([]);
    expect(await counts()).toMatchObject({ count: 1, total: 13, noncurrent: 10, used: 13 });
    expect((await versions('notes.txt')).data).toHaveLength(4);

    // Deleting the current version for good: the next newest (the marker) is the latest, and the file is gone again.
    const current = (await versions('notes.txt')).data[0]!;
    expect((await dev(`/${bucket.id}/files/notes.txt?version_id=${current.version_id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await counts()).toMatchObject({ count: 0, total: 10, noncurrent: 10, used: 10 });
    // Deleting the marker for good: the version before it is current again.
    const marker = (await versions('notes.txt')).data[0]!;
    expect(marker.is_delete_marker).toBe(true);
    expect((await dev(`/${bucket.id}/files/notes.txt?version_id=${marker.version_id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await (await dev(`/${bucket.id}/files/notes.txt`)).text()).toBe('second!');
    expect(await counts()).toMatchObject({ count: 1, total: 10, noncurrent: 3, used: 10 });
    // Unknown and malformed ids.
    expect((await dev(`/${bucket.id}/files/notes.txt?version_id=${'0'.repeat(32)}`, { method: 'DELETE' })).status).toBe(404);
    expect((await dev(`/${bucket.id}/files/notes.txt?version_id=nope`)).status).toBe(400);
  });

  it('the cap counts every version: an overwrite that fits only if the old version went is refused', async () => {
    const { put, counts } = await setUp();
    expect((await put('big.bin', randomBytes(40 * KiB))).status).toBe(201);
    const refused = await put('big.bin', randomBytes(30 * KiB));
    expect(refused.status).toBe(409);
    expect(await counts()).toMatchObject({ count: 1, total: 40 * KiB, noncurrent: 0, used: 40 * KiB });
  });

  it('racing writes to one key keep every version and exactly one current', async () => {
    const { put, counts, versions } = await setUp();
    const bodies = Array.from({ length: 20 }, (_, i) => `version ${String(i).padStart(2, '0')}`);
    const results = await Promise.all(bodies.map((body) => put('race.txt', body)));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const listed = (await versions('race.txt')).data;
    expect(listed).toHaveLength(20);
    expect(listed.filter((v) => v.is_latest)).toHaveLength(1);
    expect(new Set(listed.map((v) => v.version_id)).size).toBe(20);
    expect(await counts()).toMatchObject({ count: 1, total: 20 * 10, noncurrent: 19 * 10, used: 200 });
  });

  it('a move keeps the old name restorable under a delete marker; a folder delete adds markers; deleting the bucket removes every version', async () => {
    const { user, dev, bucket, put, counts, versions } = await setUp();
    await put('a/one.txt', 'first');
    await put('a/one.txt', 'second');
    await put('a/two.txt', 'two');
    const moved = await dev(`/${bucket.id}/move`, { method: 'POST', body: JSON.stringify({ from: 'a/one.txt', to: 'b/one.txt' }) });
    expect(moved.status).toBe(200);
    expect(await (await dev(`/${bucket.id}/files/b/one.txt`)).text()).toBe('second');
    expect((await versions('a/one.txt')).data.map((v) => v.is_delete_marker)).toEqual([true, false]);
    expect(await counts()).toMatchObject({ count: 2, total: 14, noncurrent: 5 });
    const folder = await dev(`/${bucket.id}/folders/a/`, { method: 'DELETE' });
    expect((await json(folder)).data.deleted).toBe(1);
    expect(await counts()).toMatchObject({ count: 1, total: 14, noncurrent: 8 });
    expect((await json(await dev(`/${bucket.id}/trash`))).data.map((t: { filename: string }) => t.filename)).toEqual(['a/one.txt', 'a/two.txt']);
    expect((await counts()).used).toBe(14);
    const gone = await dev(`/${bucket.id}`, { method: 'DELETE' });
    expect(gone.status).toBe(200);
    const me = await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data.storage_used_bytes).toBe(0);
  });
});

describe('a file with many versions', () => {
  it('lists them a page at a time, newest first: ?limit= and ?after=<the last version id>, each version once', async () => {
    const { dev, bucket, put, versions } = await setUp();
    for (let i = 0; i < 5; i++) expect((await put('many.txt', `v${i}`)).status).toBe(201);
    expect((await dev(`/${bucket.id}/files/many.txt`, { method: 'DELETE' })).status).toBe(200);
    const all = (await versions('many.txt')).data;
    expect(all.map((v) => [v.size, v.is_delete_marker])).toEqual([
      [0, true],
      [2, false],
      [2, false],
      [2, false],
      [2, false],
      [2, false],
    ]);
    const page = async (query: string) => {
      const response = await dev(`/${bucket.id}/files/many.txt/versions?${query}`);
      return { status: response.status, body: await json(response) };
    };
    const seen: string[] = [];
    for (let after: string | undefined; ;) {
      const { status, body } = await page(`limit=4${after ? `&after=${after}` : ''}`);
      expect({ status, body: status === 200 ? null : body }).toEqual({ status: 200, body: null });
      const ids = (body.data as { version_id: string }[]).map((v) => v.version_id);
      seen.push(...ids);
      if (ids.length < 4) break;
      after = ids.at(-1);
    }
    expect(seen).toEqual(all.map((v) => v.version_id));
    // After the oldest: an empty page, not a missing file.
    expect((await page(`after=${all.at(-1)!.version_id}`)).body).toEqual({ data: [] });
    // A version the file does not have, a malformed one, and limits outside 1 to 1000 are refused.
    expect((await page(`after=${'0'.repeat(32)}`)).status).toBe(404);
    expect((await page('after=nope')).status).toBe(400);
    expect((await page('limit=0')).status).toBe(400);
    expect((await page('limit=1001')).status).toBe(400);
  });

  it('the trash pages too: ?limit= and ?after=<the last name>', async () => {
    const { dev, bucket, put } = await setUp();
    for (const name of ['a.txt', 'b.txt', 'c.txt']) {
      expect((await put(name, name)).status).toBe(201);
      expect((await dev(`/${bucket.id}/files/${name}`, { method: 'DELETE' })).status).toBe(200);
    }
    const names = async (query: string) => ((await json(await dev(`/${bucket.id}/trash?${query}`))).data as { filename: string }[]).map((e) => e.filename);
    expect(await names('limit=2')).toEqual(['a.txt', 'b.txt']);
    expect(await names('limit=2&after=b.txt')).toEqual(['c.txt']);
  });
});

describe('a file written before versioning was enabled', () => {
  it('is restorable from the trash by its null version once deleted, through the same restore', async () => {
    const { dev, bucket, put, counts, versions } = await setUp(null);
    expect((await put('old.txt', 'from before')).status).toBe(201);
    expect((await dev(`/${bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    expect((await dev(`/${bucket.id}/files/old.txt`, { method: 'DELETE' })).status).toBe(200);
    expect((await versions('old.txt')).data.map((v) => [v.version_id, v.is_delete_marker])).toEqual([
      [expect.stringMatching(/^[0-9a-f]{32}$/), true],
      ['null', false],
    ]);
    const trash = (await json(await dev(`/${bucket.id}/trash`))).data;
    expect(trash).toEqual([expect.objectContaining({ filename: 'old.txt', restorable_version_id: 'null', size: 11 })]);

    const restored = await dev(`/${bucket.id}/files/old.txt/restore`, { method: 'POST', body: JSON.stringify({ version_id: trash[0].restorable_version_id }) });
    expect(restored.status).toBe(201);
    expect(await (await dev(`/${bucket.id}/files/old.txt`)).text()).toBe('from before');
    expect((await json(await dev(`/${bucket.id}/trash`))).data).toEqual([]);
    // The copy is a new version; the null version and the marker stay behind it.
    expect((await versions('old.txt')).data.map((v) => [v.version_id, v.is_latest, v.is_delete_marker])).toEqual([
      [(await json(restored)).data.version_id, true, false],
      [expect.stringMatching(/^[0-9a-f]{32}$/), false, true],
      ['null', false, false],
    ]);
    expect(await counts()).toMatchObject({ count: 1, total: 22, noncurrent: 11, used: 22 });
  });

  it('a trash entry with only delete markers left has nothing to restore', async () => {
    const { dev, bucket, put, versions } = await setUp(null);
    await put('gone.txt', 'bytes');
    expect((await dev(`/${bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    await dev(`/${bucket.id}/files/gone.txt`, { method: 'DELETE' });
    // The null version deleted for good: the marker alone is left.
    expect((await dev(`/${bucket.id}/files/gone.txt?version_id=null`, { method: 'DELETE' })).status).toBe(200);
    expect((await versions('gone.txt')).data).toEqual([expect.objectContaining({ is_delete_marker: true })]);
    expect((await json(await dev(`/${bucket.id}/trash`))).data).toEqual([
      expect.objectContaining({ filename: 'gone.txt', restorable_version_id: null, size: 0 }),
    ]);
  });
});

describe('a suspended bucket', () => {
  it('writes the null version, replacing the previous null version (its bytes freed) and keeping versions with ids', async () => {
    const { user, dev, bucket, put, counts, versions } = await setUp('enabled');
    const kept = await put('s.txt', 'kept');
    expect((await dev(`/${bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'suspended' }) })).status).toBe(200);
    // Both changes are in the owner's audit log, newest first, with the key that made them.
    const audit = await json(await fetch(`${server.url}/api/audit`, { headers: { authorization: `Bearer ${user.token}` } }));
    const changes = audit.data.filter((e: { action: string }) => e.action === 'bucket.versioning_changed');
    expect(changes.map((e: { details: { versioning: string } }) => e.details.versioning)).toEqual(['suspended', 'enabled']);
    expect(changes[0].actor).toMatch(/^key:/);
    const firstNull = await put('s.txt', 'null one');
    // A suspended bucket's write is the null version, which S3 does not name.
    expect(firstNull.body.data.version_id).toBeUndefined();
    await put('s.txt', 'null 2');
    expect((await versions('s.txt')).data.map((v) => [v.version_id, v.size])).toEqual([
      ['null', 6],
      [kept.body.data.version_id, 4],
    ]);
    expect(await counts()).toMatchObject({ count: 1, total: 10, noncurrent: 4, used: 10 });
    // A delete: the null version goes (its bytes with it), a null delete marker takes its place.
    await dev(`/${bucket.id}/files/s.txt`, { method: 'DELETE' });
    expect((await versions('s.txt')).data.map((v) => [v.version_id, v.is_delete_marker])).toEqual([
      ['null', true],
      [kept.body.data.version_id, false],
    ]);
    expect(await counts()).toMatchObject({ count: 0, total: 4, noncurrent: 4, used: 4 });
    // Never back to unversioned.
    expect((await dev(`/${bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'unversioned' }) })).status).toBe(400);
  });
});
