/** The SDK's object lock: a bucket made with lock and a default retention, a file's retention and legal hold, refusals as ObjectLockedError. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { FileNotFoundError, ObjectLockedError, Pail } from '../src/index.js';

let server: TestServer;
let pail: Pail;
let owner: Pail;

beforeAll(async () => {
  server = await startTestServer();
  const user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
  owner = new Pail({ baseUrl: server.url, apiKey: user.apiKey, sessionToken: user.token });
});
afterAll(() => server?.close());

describe('object lock', () => {
  it('makes a locked bucket, shows and sets a file’s lock, and throws ObjectLockedError saying until when', async () => {
    const bucket = await pail.createBucket('sdk-locked', { object_lock: true, default_retention: { mode: 'GOVERNANCE', days: 1 } });
    expect(bucket).toMatchObject({ object_lock: true, default_retention: { mode: 'GOVERNANCE', days: 1, years: null } });
    await pail.uploadFile(bucket.id, 'a.txt', 'a');
    expect((await pail.fileDetails(bucket.id, 'a.txt')).retention?.mode).toBe('GOVERNANCE');

    const until = new Date(server.clock.now() + 3 * 86_400_000);
    expect(await pail.setRetention(bucket.id, 'a.txt', { mode: 'GOVERNANCE', retainUntil: until })).toEqual({
      retention: { mode: 'GOVERNANCE', retain_until: until.toISOString() },
      legal_hold: false,
    });
    expect((await pail.setLegalHold(bucket.id, 'a.txt', true)).legal_hold).toBe(true);
    // This key has no bypass-governance: asking is not enough.
    const refused = await pail.setRetention(bucket.id, 'a.txt', null, { bypassGovernance: true }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ObjectLockedError);
    const deleting = await pail.deleteBucket(bucket.id).catch((error: unknown) => error);
    expect(deleting).toBeInstanceOf(ObjectLockedError);
    expect((deleting as Error).message).toContain(until.toISOString());
  });

  it('deletes a version under GOVERNANCE only with bypassGovernance and a key that has bypass-governance', async () => {
    const bucket = await pail.createBucket('sdk-governed', { object_lock: true, default_retention: { mode: 'GOVERNANCE', days: 1 } });
    await pail.uploadFile(bucket.id, 'g.txt', 'g');
    const [version] = await pail.listVersions(bucket.id, 'g.txt');
    const refused = await pail.deleteVersion(bucket.id, 'g.txt', version!.version_id, { bypassGovernance: true }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ObjectLockedError);
    expect((refused as Error).message).toContain('GOVERNANCE retention until');

    const created = await owner.createKey({ name: 'sdk-admin', permissions: ['read', 'write', 'delete', 'manage', 'bypass-governance'] });
    const admin = new Pail({ baseUrl: server.url, apiKey: created.key });
    expect(await admin.deleteVersion(bucket.id, 'g.txt', version!.version_id).catch((error: unknown) => error)).toBeInstanceOf(ObjectLockedError);
    await admin.deleteVersion(bucket.id, 'g.txt', version!.version_id, { bypassGovernance: true });
    expect(await pail.listVersions(bucket.id, 'g.txt').catch((error: unknown) => error)).toBeInstanceOf(FileNotFoundError);
  });
});
