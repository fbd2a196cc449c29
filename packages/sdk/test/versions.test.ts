/** The SDK's versions and trash against a real server: versioning on and off, versions listed, one downloaded, restored, deleted for good, the trash. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { Pail, ValidationError } from '../src/index.js';

let server: TestServer;
let pail: Pail;
let bucket: number;
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

beforeAll(async () => {
  server = await startTestServer();
  const user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
  bucket = (await pail.createBucket('sdk-versions')).id;
});
afterAll(() => server?.close());

describe('versions and the trash', () => {
  it('keeps every version once versioning is on; downloads, restores and deletes one for good', async () => {
    expect((await pail.getBucket(bucket)).versioning).toBe('unversioned');
    expect((await pail.setVersioning(bucket, 'enabled')).versioning).toBe('enabled');
    await pail.uploadFile(bucket, 'docs/plan.txt', 'first');
    await pail.uploadFile(bucket, 'docs/plan.txt', 'second');

    const versions = await pail.listVersions(bucket, 'docs/plan.txt');
    expect(versions.map((v) => [v.size, v.is_latest, v.is_delete_marker])).toEqual([
      [6, true, false],
      [5, false, false],
    ]);
    const [current, older] = versions as [(typeof versions)[number], (typeof versions)[number]];
    expect(text(await pail.downloadFile(bucket, 'docs/plan.txt', { versionId: older.version_id }))).toBe('first');
    expect(text(await pail.downloadFile(bucket, 'docs/plan.txt'))).toBe('second');
    expect((await pail.getBucket(bucket)).noncurrent_bytes).toBe(5);

    await pail.restoreVersion(bucket, 'docs/plan.txt', older.version_id);
    expect(text(await pail.downloadFile(bucket, 'docs/plan.txt'))).toBe('first');
    const three = await pail.listVersions(bucket, 'docs/plan.txt');
    expect(three).toHaveLength(3);
    // A page at a time: the next page starts after the last version id of the one before.
    const first = await pail.listVersions(bucket, 'docs/plan.txt', { limit: 2 });
    const rest = await pail.listVersions(bucket, 'docs/plan.txt', { limit: 2, after: first.at(-1)!.version_id });
    expect([...first, ...rest].map((v) => v.version_id)).toEqual(three.map((v) => v.version_id));

    await pail.deleteVersion(bucket, 'docs/plan.txt', current.version_id);
    const left = await pail.listVersions(bucket, 'docs/plan.txt');
    expect(left.map((v) => v.version_id)).not.toContain(current.version_id);
    expect(left).toHaveLength(2);
  });

  it('a deleted file waits in the trash, with who deleted it, and comes back with a restore', async () => {
    await pail.uploadFile(bucket, 'photo.txt', 'a photo');
    await pail.deleteFile(bucket, 'photo.txt');
    expect((await pail.listFiles(bucket)).files.map((f) => f.filename)).not.toContain('photo.txt');
    const [entry] = await pail.listTrash(bucket);
    expect(entry).toMatchObject({ filename: 'photo.txt', size: 7 });
    expect(entry!.deleted_by).toMatch(/^key:/);
    expect(await pail.listTrash(bucket, { prefix: 'nothing/' })).toEqual([]);

    await pail.restoreVersion(bucket, 'photo.txt', entry!.restorable_version_id!);
    expect(text(await pail.downloadFile(bucket, 'photo.txt'))).toBe('a photo');
    expect(await pail.listTrash(bucket)).toEqual([]);
  });

  it('suspends versioning but never goes back to unversioned; a bad version id is refused', async () => {
    expect((await pail.setVersioning(bucket, 'suspended')).versioning).toBe('suspended');
    await expect(pail.setVersioning(bucket, 'unversioned' as 'enabled')).rejects.toBeInstanceOf(ValidationError);
    await expect(pail.restoreVersion(bucket, 'photo.txt', 'no-such-version')).rejects.toThrow();
  });
});
