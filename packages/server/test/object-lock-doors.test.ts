/**
 * Object lock on the Pail API's doors, as a user sees them: a bucket made
 * with `object_lock: true` and a default retention, a file's retention and
 * legal hold in its details, setting and extending them, and every other
 * door that would remove a locked version refused with until when: deleting
 * the bucket, moving the file, a key without bypass-governance shortening a
 * GOVERNANCE retention. The server's clock moved past the date lets go.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const DAY = 86_400_000;
let server: TestServer;
let alice: TestUser;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer();
  alice = await signUp(server.url);
});
afterAll(() => server.close());

const api = (path: string, init: { method?: string; body?: unknown; key?: string; raw?: string } = {}) =>
  fetch(`${server.url}/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${init.key ?? alice.apiKey}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : init.raw !== undefined ? { body: init.raw } : {}),
  });

async function lockedBucket(defaultRetention: object | null = null): Promise<number> {
  const response = await api('/buckets', { method: 'POST', body: { name: `locked-${counter++}`, object_lock: true, default_retention: defaultRetention } });
  expect(response.status).toBe(201);
  const bucket = (await json(response)).data;
  expect(bucket.object_lock).toBe(true);
  return bucket.id;
}

const upload = async (bucket: number, name: string, body: string) =>
  expect((await api(`/buckets/${bucket}/files/${name}`, { method: 'PUT', raw: body })).status).toBe(201);
const details = async (bucket: number, name: string) => (await json(await api(`/buckets/${bucket}/details/${name}`))).data;

describe('object lock on the Pail API', () => {
  it('makes a bucket with a default retention, which new files get and their details show', async () => {
    const bucket = await lockedBucket({ mode: 'COMPLIANCE', days: 3 });
    const shown = (await json(await api(`/buckets/${bucket}`))).data;
    expect(shown.default_retention).toEqual({ mode: 'COMPLIANCE', days: 3, years: null });
    const before = server.clock.now();
    await upload(bucket, 'a.txt', 'a');
    const file = await details(bucket, 'a.txt');
    expect(file.retention.mode).toBe('COMPLIANCE');
    expect(Date.parse(file.retention.retain_until)).toBeGreaterThanOrEqual(before + 3 * DAY - 1000);
    expect(file.legal_hold).toBe(false);

    // A default retention without lock, or days and years at once, is refused.
    const bad = await api('/buckets', { method: 'POST', body: { name: `plain-${counter++}`, default_retention: { mode: 'GOVERNANCE', days: 1 } } });
    expect(bad.status).toBe(400);
    const both = await api('/buckets', {
      method: 'POST',
      body: { name: `both-${counter++}`, object_lock: true, default_retention: { mode: 'GOVERNANCE', days: 1, years: 1 } },
    });
    expect(both.status).toBe(400);
  });

  it('sets and extends a retention, never shortens COMPLIANCE, and refuses every door that would remove the file, saying until when', async () => {
    const bucket = await lockedBucket();
    await upload(bucket, 'doc.txt', 'doc');
    const until = new Date(server.clock.now() + 2 * DAY).toISOString();
    const set = await api(`/buckets/${bucket}/retention/doc.txt`, { method: 'PUT', body: { mode: 'COMPLIANCE', retain_until: until } });
    expect(set.status).toBe(200);
    expect((await json(set)).data).toEqual({ retention: { mode: 'COMPLIANCE', retain_until: until }, legal_hold: false });

    const shorter = await api(`/buckets/${bucket}/retention/doc.txt`, {
      method: 'PUT',
      body: { mode: 'COMPLIANCE', retain_until: new Date(server.clock.now() + DAY).toISOString(), bypass_governance: true },
    });
    expect(shorter.status).toBe(403);
    expect((await json(shorter)).code).toBe('ObjectLocked');
    const removed = await api(`/buckets/${bucket}/retention/doc.txt`, { method: 'PUT', body: { mode: null, retain_until: null } });
    expect(removed.status).toBe(403);

    const moved = await api(`/buckets/${bucket}/move`, { method: 'POST', body: { from: 'doc.txt', to: 'elsewhere.txt' } });
    expect(moved.status).toBe(403);
    expect((await json(moved)).error).toContain(until);
    const deleted = await api(`/buckets/${bucket}`, { method: 'DELETE' });
    expect(deleted.status).toBe(403);
    const refusal = await json(deleted);
    expect(refusal).toMatchObject({ code: 'ObjectLocked' });
    expect(refusal.error).toContain(until);
    expect((await details(bucket, 'doc.txt')).size).toBe(3);

    const later = new Date(server.clock.now() + 5 * DAY).toISOString();
    expect((await api(`/buckets/${bucket}/retention/doc.txt`, { method: 'PUT', body: { mode: 'COMPLIANCE', retain_until: later } })).status).toBe(200);
    expect((await details(bucket, 'doc.txt')).retention).toEqual({ mode: 'COMPLIANCE', retain_until: later });

    server.clock.advance(5 * DAY + 60_000);
    try {
      expect((await api(`/buckets/${bucket}`, { method: 'DELETE' })).status).toBe(200);
    } finally {
      server.clock.advance(-(5 * DAY + 60_000));
    }
  });

  it('refuses a retain-until date past the year 9999, which would sort before today as stored; the lock keeps holding the bucket', async () => {
    const bucket = await lockedBucket();
    await upload(bucket, 'far.txt', 'far');
    const until = new Date(server.clock.now() + DAY).toISOString();
    expect((await api(`/buckets/${bucket}/retention/far.txt`, { method: 'PUT', body: { mode: 'COMPLIANCE', retain_until: until } })).status).toBe(200);
    for (const far of ['+010000-01-01T00:00:00Z', '+275760-09-13T00:00:00.000Z']) {
      const extended = await api(`/buckets/${bucket}/retention/far.txt`, { method: 'PUT', body: { mode: 'COMPLIANCE', retain_until: far } });
      expect(extended.status).toBe(400);
      expect((await json(extended)).error).toBe('The retain until date must be before the year 10000');
    }
    const latest = '9999-12-31T23:59:59.999Z';
    expect((await api(`/buckets/${bucket}/retention/far.txt`, { method: 'PUT', body: { mode: 'COMPLIANCE', retain_until: latest } })).status).toBe(200);
    expect((await details(bucket, 'far.txt')).retention).toEqual({ mode: 'COMPLIANCE', retain_until: latest });
    const deleted = await api(`/buckets/${bucket}`, { method: 'DELETE' });
    expect(deleted.status).toBe(403);
    expect((await json(deleted)).error).toContain(latest);
  });

  it("a locked version's type, headers and metadata are not rewritten in place; its tags may change, as on S3; the clock past the date lets go", async () => {
    const bucket = await lockedBucket({ mode: 'COMPLIANCE', days: 1 });
    await upload(bucket, 'm.txt', 'm');
    const before = await details(bucket, 'm.txt');
    const edit = await api(`/buckets/${bucket}/files/m.txt`, { method: 'PATCH', body: { content_type: 'text/html', metadata: { owner: 'mallory' } } });
    expect(edit.status).toBe(403);
    const refusal = await json(edit);
    expect(refusal).toMatchObject({ code: 'ObjectLocked' });
    expect(refusal.error).toContain(before.retention.retain_until);
    expect(await details(bucket, 'm.txt')).toEqual(before);
    expect((await api(`/buckets/${bucket}/files/m.txt/tags`, { method: 'PUT', body: { tags: { kind: 'report' } } })).status).toBe(200);

    server.clock.advance(DAY + 60_000);
    try {
      expect((await api(`/buckets/${bucket}/files/m.txt`, { method: 'PATCH', body: { metadata: { owner: 'alice' } } })).status).toBe(200);
    } finally {
      server.clock.advance(-(DAY + 60_000));
    }
  });

  it('a legal hold shows in the details and holds the bucket until lifted; GOVERNANCE yields only to a key with bypass-governance', async () => {
    const bucket = await lockedBucket();
    await upload(bucket, 'h.txt', 'h');
    const held = await api(`/buckets/${bucket}/legal-hold/h.txt`, { method: 'PUT', body: { legal_hold: true } });
    expect((await json(held)).data).toEqual({ retention: null, legal_hold: true });
    expect((await details(bucket, 'h.txt')).legal_hold).toBe(true);
    const refused = await api(`/buckets/${bucket}`, { method: 'DELETE' });
    expect(refused.status).toBe(403);
    expect((await json(refused)).error).toContain('legal hold');
    await api(`/buckets/${bucket}/legal-hold/h.txt`, { method: 'PUT', body: { legal_hold: false } });

    const until = new Date(server.clock.now() + 10 * DAY).toISOString();
    await api(`/buckets/${bucket}/retention/h.txt`, { method: 'PUT', body: { mode: 'GOVERNANCE', retain_until: until } });
    // Each change of a version's lock is in the owner's audit log, with who made it.
    const audit = (await json(await fetch(`${server.url}/api/audit`, { headers: { authorization: `Bearer ${alice.token}` } }))).data as {
      action: string;
      actor: string;
      target: string;
      details: unknown;
    }[];
    const changes = audit.filter((entry) => entry.target === `bucket:${bucket}/file:h.txt`).reverse();
    expect(changes.map(({ action, details }) => [action, details])).toEqual([
      ['object.legal_hold_changed', { legal_hold: true }],
      ['object.legal_hold_changed', { legal_hold: false }],
      ['object.retention_changed', { mode: 'GOVERNANCE', retain_until: until }],
    ]);
    expect(changes.every((entry) => entry.actor.startsWith('key:'))).toBe(true);
    const plain = await api(`/buckets/${bucket}/retention/h.txt`, { method: 'PUT', body: { mode: null, retain_until: null, bypass_governance: true } });
    expect(plain.status).toBe(403);
    // A key made with bypass-governance may lift it when it asks; keys have it only when given by name.
    const made = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'admin', permissions: ['read', 'write', 'delete', 'manage', 'bypass-governance'] }),
    });
    const admin = (await json(made)).data;
    const defaults = (await json(await fetch(`${server.url}/api/keys`, { headers: { authorization: `Bearer ${alice.token}` } }))).data;
    expect(defaults.find((key: { name: string }) => key.name === 'test').permissions).not.toContain('bypass-governance');
    const lifted = await api(`/buckets/${bucket}/retention/h.txt`, {
      method: 'PUT',
      key: admin.key,
      body: { mode: null, retain_until: null, bypass_governance: true },
    });
    expect(lifted.status).toBe(200);
    expect((await json(lifted)).data.retention).toBeNull();
    expect((await api(`/buckets/${bucket}`, { method: 'DELETE' })).status).toBe(200);
  });
});

describe('deleting a version for good on the Pail API', () => {
  const keyWith = async (permissions: string[]): Promise<string> => {
    const made = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `k-${counter++}`, permissions }),
    });
    return (await json(made)).data.key;
  };
  const versionOf = async (bucket: number, name: string): Promise<string> =>
    (await json(await api(`/buckets/${bucket}/files/${name}/versions`))).data[0].version_id;

  it('bypasses GOVERNANCE with ?bypass_governance=true only for a key with bypass-governance; COMPLIANCE and legal holds never yield', async () => {
    const admin = await keyWith(['read', 'write', 'delete', 'manage', 'bypass-governance']);
    const bucket = await lockedBucket();
    await upload(bucket, 'g.txt', 'g');
    const version = await versionOf(bucket, 'g.txt');
    const until = new Date(server.clock.now() + 2 * DAY).toISOString();
    expect((await api(`/buckets/${bucket}/retention/g.txt`, { method: 'PUT', body: { mode: 'GOVERNANCE', retain_until: until } })).status).toBe(200);

    const plain = await api(`/buckets/${bucket}/files/g.txt?version_id=${version}`, { method: 'DELETE' });
    expect(plain.status).toBe(403);
    expect(await json(plain)).toMatchObject({ code: 'ObjectLocked' });
    // Asking without the permission, or having it without asking, is not enough.
    const asked = await api(`/buckets/${bucket}/files/g.txt?version_id=${version}&bypass_governance=true`, { method: 'DELETE' });
    expect(asked.status).toBe(403);
    expect((await json(asked)).error).toContain(until);
    expect((await api(`/buckets/${bucket}/files/g.txt?version_id=${version}`, { method: 'DELETE', key: admin })).status).toBe(403);
    const bad = await api(`/buckets/${bucket}/files/g.txt?version_id=${version}&bypass_governance=yes`, { method: 'DELETE', key: admin });
    expect(bad.status).toBe(400);
    expect((await details(bucket, 'g.txt')).size).toBe(1);

    const bypassed = await api(`/buckets/${bucket}/files/g.txt?version_id=${version}&bypass_governance=true`, { method: 'DELETE', key: admin });
    expect(bypassed.status).toBe(200);
    expect((await api(`/buckets/${bucket}/files/g.txt?version_id=${version}`)).status).toBe(404);

    await upload(bucket, 'c.txt', 'c');
    const compliance = await versionOf(bucket, 'c.txt');
    await api(`/buckets/${bucket}/retention/c.txt`, { method: 'PUT', body: { mode: 'COMPLIANCE', retain_until: until } });
    const refused = await api(`/buckets/${bucket}/files/c.txt?version_id=${compliance}&bypass_governance=true`, { method: 'DELETE', key: admin });
    expect(refused.status).toBe(403);
    expect((await json(refused)).error).toContain(`COMPLIANCE retention until ${until}`);

    await upload(bucket, 'h.txt', 'h');
    const held = await versionOf(bucket, 'h.txt');
    await api(`/buckets/${bucket}/legal-hold/h.txt`, { method: 'PUT', body: { legal_hold: true } });
    const hold = await api(`/buckets/${bucket}/files/h.txt?version_id=${held}&bypass_governance=true`, { method: 'DELETE', key: admin });
    expect(hold.status).toBe(403);
    expect((await json(hold)).error).toContain('legal hold');
    expect((await api(`/buckets/${bucket}/files/c.txt?version_id=${compliance}`)).status).toBe(200);
    expect((await api(`/buckets/${bucket}/files/h.txt?version_id=${held}`)).status).toBe(200);
  });
});

describe('moving a file into a bucket with a default retention', () => {
  it('gives it the retention an upload there would get: its details show it, and deleting that version for good is refused until the date', async () => {
    const made = await api('/buckets', { method: 'POST', body: { name: `plain-${counter++}` } });
    const plain = (await json(made)).data.id as number;
    await upload(plain, 'm.txt', 'moved in');
    const bucket = await lockedBucket({ mode: 'COMPLIANCE', days: 3 });
    const before = server.clock.now();
    const moved = await api(`/buckets/${plain}/move`, { method: 'POST', body: { from: 'm.txt', to: 'moved.txt', to_bucket_id: bucket } });
    expect(moved.status).toBe(200);
    const { retention } = await details(bucket, 'moved.txt');
    expect(retention.mode).toBe('COMPLIANCE');
    expect(Date.parse(retention.retain_until)).toBeGreaterThanOrEqual(before + 3 * DAY - 1000);
    const version = (await json(await api(`/buckets/${bucket}/files/moved.txt/versions`))).data[0].version_id as string;
    const refused = await api(`/buckets/${bucket}/files/moved.txt?version_id=${version}`, { method: 'DELETE' });
    expect(refused.status).toBe(403);
    expect((await json(refused)).error).toContain(`COMPLIANCE retention until ${retention.retain_until}`);
    expect((await api(`/buckets/${bucket}/files/moved.txt?version_id=${version}`)).status).toBe(200);

    // Once it ends the file may be renamed there: the version under its new name gets the default retention from then.
    server.clock.advance(3 * DAY + 60_000);
    try {
      const after = server.clock.now();
      expect((await api(`/buckets/${bucket}/move`, { method: 'POST', body: { from: 'moved.txt', to: 'renamed.txt' } })).status).toBe(200);
      const renamed = (await details(bucket, 'renamed.txt')).retention;
      expect(renamed.mode).toBe('COMPLIANCE');
      expect(Date.parse(renamed.retain_until)).toBeGreaterThanOrEqual(after + 3 * DAY - 1000);
      const current = (await json(await api(`/buckets/${bucket}/files/renamed.txt/versions`))).data[0].version_id as string;
      const again = await api(`/buckets/${bucket}/files/renamed.txt?version_id=${current}`, { method: 'DELETE' });
      expect(again.status).toBe(403);
      expect((await json(again)).error).toContain(`COMPLIANCE retention until ${renamed.retain_until}`);
    } finally {
      server.clock.advance(-(3 * DAY + 60_000));
    }
  });
});

describe('a bucket PATCH with object_lock and default_retention', () => {
  const patch = (bucket: number, body: object) => api(`/buckets/${bucket}`, { method: 'PATCH', body });
  const bucketNow = async (bucket: number) => (await json(await api(`/buckets/${bucket}`))).data;

  it('turns lock on for good where versioning is enabled, as S3 does, and sets or clears the default retention', async () => {
    const made = await api('/buckets', { method: 'POST', body: { name: `later-${counter++}` } });
    const bucket = (await json(made)).data.id as number;

    const unversioned = await patch(bucket, { object_lock: true });
    expect(unversioned.status).toBe(409);
    expect(await json(unversioned)).toMatchObject({ code: 'InvalidBucketState', error: 'Versioning must be enabled on the bucket to enable Object Lock' });
    const retentionAlone = await patch(bucket, { default_retention: { mode: 'GOVERNANCE', days: 1 } });
    expect(retentionAlone.status).toBe(400);
    expect((await json(retentionAlone)).error).toBe('default_retention needs object_lock: true');
    // Refused as a whole: the limit asked beside it is not set either.
    expect((await patch(bucket, { max_file_bytes: 10, versioning: 'suspended', object_lock: true })).status).toBe(409);
    expect(await bucketNow(bucket)).toMatchObject({ object_lock: false, default_retention: null, max_file_bytes: null, versioning: 'unversioned' });

    const on = await patch(bucket, { versioning: 'enabled', object_lock: true, default_retention: { mode: 'GOVERNANCE', days: 2 } });
    expect(on.status).toBe(200);
    expect((await json(on)).data).toMatchObject({ object_lock: true, versioning: 'enabled', default_retention: { mode: 'GOVERNANCE', days: 2, years: null } });
    await upload(bucket, 'after.txt', 'x');
    expect((await details(bucket, 'after.txt')).retention.mode).toBe('GOVERNANCE');

    const off = await patch(bucket, { object_lock: false, max_file_bytes: 10 });
    expect(off.status).toBe(400);
    expect((await json(off)).error).toContain('cannot be turned off');
    expect((await patch(bucket, { versioning: 'suspended' })).status).toBe(409);
    expect(await bucketNow(bucket)).toMatchObject({ object_lock: true, max_file_bytes: null, versioning: 'enabled' });

    const years = await patch(bucket, { default_retention: { mode: 'COMPLIANCE', years: 1 } });
    expect((await json(years)).data.default_retention).toEqual({ mode: 'COMPLIANCE', days: null, years: 1 });
    expect((await patch(bucket, { default_retention: { mode: 'COMPLIANCE', days: 1, years: 1 } })).status).toBe(400);
    // A PATCH that says nothing of lock keeps the default retention.
    expect((await json(await patch(bucket, { max_file_bytes: 1000 }))).data.default_retention).toEqual({ mode: 'COMPLIANCE', days: null, years: 1 });
    const cleared = await patch(bucket, { default_retention: null });
    expect((await json(cleared)).data).toMatchObject({ object_lock: true, default_retention: null });
    await upload(bucket, 'plain.txt', 'y');
    expect((await details(bucket, 'plain.txt')).retention).toBeNull();
    const audit = (await json(await fetch(`${server.url}/api/audit`, { headers: { authorization: `Bearer ${alice.token}` } }))).data;
    expect(
      audit.filter((entry: { action: string; target: string }) => entry.action === 'bucket.object_lock_changed' && entry.target === `bucket:${bucket}`),
    ).toHaveLength(3);
  });
});
