/**
 * An attacker's pass on the newest doors: versions and the trash, object
 * lock, lifecycle rules, webhooks and the audit log, as a hostile or clumsy
 * client uses them. Each case is a finding: what a client did that hurt
 * more than its own request (a 500, a request that never ends, counts gone
 * wrong, a lock that did not hold), kept as a test once fixed.
 */
import {
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  GetObjectLockConfigurationCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketVersioningCommand,
  PutObjectLockConfigurationCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js';
import { sweepLifecycle } from '../src/domain/lifecycle-sweep.js';

const DAY = 86_400_000;
let server: TestServer;
let alice: TestUser;
let s3: S3Client;

/** What the server logged at error level or above: nothing a client does may put anything here. */
const errorLogs: unknown[][] = [];

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { LIFECYCLE_INTERVAL_SECONDS: '1' } });
  // The logs are off in tests (each app's logger, and every request's child of it, is one object): listen on its error levels.
  for (const log of [server.app.log, server.app.s3Api!.app.log]) {
    log.error = (...args: unknown[]) => void errorLogs.push(args);
    log.fatal = (...args: unknown[]) => void errorLogs.push(args);
  }
});
afterEach(() => {
  const logged = errorLogs.splice(0);
  expect(logged).toEqual([]);
});
// A user of its own for each case, so its usage is its buckets' alone.
beforeEach(async () => {
  alice = await signUp(server.url);
  s3 = sdkClient(server.s3Url!, alice);
});
afterAll(() => server?.close());

const api = (path: string, init: { method?: string; body?: unknown; key?: string; raw?: BodyInit } = {}) =>
  fetch(`${server.url}/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${init.key ?? alice.apiKey}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : init.raw !== undefined ? { body: init.raw } : {}),
  });

async function bucket(options: { versioning?: 'enabled' | 'suspended'; objectLock?: boolean } = {}): Promise<number> {
  const created = await api('/buckets', {
    method: 'POST',
    body: { name: `atk-${randomBytes(4).toString('hex')}`, ...(options.objectLock ? { object_lock: true } : {}) },
  });
  expect(created.status).toBe(201);
  const id = (await json(created)).data.id as number;
  if (options.versioning) expect((await api(`/buckets/${id}`, { method: 'PATCH', body: { versioning: options.versioning } })).status).toBe(200);
  return id;
}

async function counts(id: number, user: TestUser = alice) {
  const b = (await json(await api(`/buckets/${id}`, { key: user.apiKey }))).data;
  const me = (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
  return { count: b.object_count as number, total: b.total_bytes as number, noncurrent: b.noncurrent_bytes as number, used: me.storage_used_bytes as number };
}

type Version = { version_id: string; size: number; is_latest: boolean; is_delete_marker: boolean };
const versionsOf = async (id: number, name: string): Promise<Version[]> => {
  const response = await api(`/buckets/${id}/files/${name}/versions`);
  return response.status === 404 ? [] : ((await json(response)).data as Version[]);
};

describe('listings by a delimiter whose last character ends in the surrogate 0xDFFF', () => {
  // U+1F7FF is \uD83D\uDFFF: moving its low surrogate on gave a name before the folded prefix, so the listing read the same rows forever.
  const delimiter = '\u{1F7FF}';

  it('ListObjectVersions and ListObjectsV2 answer, folding the names into one common prefix', async () => {
    const Bucket = `atk-${randomBytes(4).toString('hex')}`;
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    for (const Key of [`a${delimiter}1`, `a${delimiter}2`, `a${delimiter}3`, 'b']) await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'x' }));
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket, Delimiter: delimiter, MaxKeys: 1 }), { abortSignal: AbortSignal.timeout(5000) });
    expect(versions.CommonPrefixes?.map((p) => p.Prefix)).toEqual([`a${delimiter}`]);
    expect(versions.IsTruncated).toBe(true);
    const rest = await s3.send(new ListObjectVersionsCommand({ Bucket, Delimiter: delimiter, KeyMarker: versions.NextKeyMarker }), {
      abortSignal: AbortSignal.timeout(5000),
    });
    expect(rest.Versions?.map((v) => v.Key)).toEqual(['b']);
    const objects = await s3.send(new ListObjectsV2Command({ Bucket, Delimiter: delimiter, MaxKeys: 1 }), { abortSignal: AbortSignal.timeout(5000) });
    expect(objects.CommonPrefixes?.map((p) => p.Prefix)).toEqual([`a${delimiter}`]);
    const after = await s3.send(new ListObjectsV2Command({ Bucket, Delimiter: delimiter, ContinuationToken: objects.NextContinuationToken }), {
      abortSignal: AbortSignal.timeout(5000),
    });
    expect(after.Contents?.map((o) => o.Key)).toEqual(['b']);
  });
});

describe('a name with U+10FFFF right after a prefix', () => {
  // The names under a prefix were queried as [prefix, prefix + U+10FFFF): `docs/\u{10FFFF}x` sorts after the end, so no
  // listing by prefix showed it, and a lifecycle rule on the prefix never expired it.
  const hidden = 'docs/\u{10FFFF}x.txt';

  it('is listed under the prefix by every door that lists by prefix', async () => {
    const Bucket = `atk-${randomBytes(4).toString('hex')}`;
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    for (const Key of ['docs/a.txt', hidden, 'docu.txt']) await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'x' }));
    await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: hidden }));
    const expected = ['docs/a.txt', hidden];
    expect((await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'docs/' }))).Contents?.map((o) => o.Key)).toEqual(expected);
    expect((await s3.send(new ListObjectVersionsCommand({ Bucket, Prefix: 'docs/' }))).Versions?.map((v) => v.Key)).toEqual(expected);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket, Prefix: 'docs/' }))).Uploads?.map((u) => u.Key)).toEqual([hidden]);
    const id = ((await json(await api('/buckets'))).data as { id: number; name: string }[]).find((b) => b.name === Bucket)!.id;
    for (const sort of ['', '&sort=name']) {
      const listed = (await json(await api(`/buckets/${id}/files?prefix=docs/${sort}`))).data as { filename: string }[];
      expect(listed.map((f) => f.filename)).toEqual(expected);
    }
  });

  it('rolls up into its common prefix once in ListMultipartUploads, however it is paged', async () => {
    const Bucket = `atk-${randomBytes(4).toString('hex')}`;
    await s3.send(new CreateBucketCommand({ Bucket }));
    for (const Key of ['a/b', 'a/\u{10FFFF}x', '\u{10FFFF}/y', 'c']) await s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
    const whole = await s3.send(new ListMultipartUploadsCommand({ Bucket, Delimiter: '/' }));
    expect(whole.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['a/', '\u{10FFFF}/']);
    expect(whole.Uploads?.map((u) => u.Key)).toEqual(['c']);
    const seen: string[] = [];
    let marker: { KeyMarker?: string; UploadIdMarker?: string } = {};
    for (let page = 0; page < 10; page++) {
      const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket, Delimiter: '/', MaxUploads: 1, ...marker }));
      seen.push(...(listed.CommonPrefixes ?? []).map((p) => p.Prefix!), ...(listed.Uploads ?? []).map((u) => u.Key!));
      if (!listed.IsTruncated) break;
      marker = { KeyMarker: listed.NextKeyMarker, UploadIdMarker: listed.NextUploadIdMarker };
    }
    expect(seen).toEqual(['a/', 'c', '\u{10FFFF}/']);
    // A key marker equal to the prefix is no common prefix of it: what comes after it is listed.
    const under = await s3.send(new ListMultipartUploadsCommand({ Bucket, Prefix: 'a/', Delimiter: '/', KeyMarker: 'a/' }));
    expect(under.Uploads?.map((u) => u.Key)).toEqual(['a/b', 'a/\u{10FFFF}x']);
  });

  it('is expired by a lifecycle rule on the prefix', async () => {
    const id = await bucket();
    const put = (name: string) => api(`/buckets/${id}/files/${encodeURIComponent(name)}`, { method: 'PUT', raw: 'x' });
    for (const name of ['docs/a.txt', hidden, 'docu.txt']) expect((await put(name)).status).toBe(201);
    const rules = [{ id: 'docs', status: 'enabled', filter: { prefix: 'docs/' }, expiration: { days: 1 } }];
    expect((await api(`/buckets/${id}/lifecycle`, { method: 'PUT', body: { rules } })).status).toBe(200);
    server.clock.advance(3 * DAY);
    try {
      await sweepLifecycle(server.app.pail.storage, { daySeconds: 86_400, between: async () => true });
    } finally {
      server.clock.advance(-3 * DAY);
    }
    const left = (await json(await api(`/buckets/${id}/files`))).data as { filename: string }[];
    expect(left.map((f) => f.filename)).toEqual(['docu.txt']);
  });
});

describe('paging parameters out of range', () => {
  it('the audit log refuses a cursor no id can reach with 400, not a 500', async () => {
    // The key made at sign-up and a bucket: two entries to read.
    await bucket();
    for (const cursor of ['1e300', '99999999999999999999', '0x10', '-1', '0', ' 5', '1.5']) {
      const response = await api(`/audit?cursor=${encodeURIComponent(cursor)}`);
      expect({ cursor, status: response.status }).toEqual({ cursor, status: 400 });
    }
    expect((await json(await api('/audit?cursor=9007199254740991'))).data).toHaveLength(2);
    for (const limit of ['0', '-1', '201', '1e3', 'NaN']) expect((await api(`/audit?limit=${limit}`)).status).toBe(400);
  });

  it('the trash refuses limits out of range', async () => {
    const id = await bucket({ versioning: 'enabled' });
    for (const limit of ['0', '-1', '1001', '1e300', 'x']) expect((await api(`/buckets/${id}/trash?limit=${limit}`)).status).toBe(400);
    expect((await api(`/buckets/${id}/trash?after=${encodeURIComponent('\u{10FFFF}')}&prefix=${'p'.repeat(5000)}`)).status).toBe(200);
  });
});

describe('races on one name in a versioned bucket', () => {
  it('overwrites, deletes and deletes of versions for good at once leave counts and usage exact and every version readable', async () => {
    const id = await bucket({ versioning: 'enabled' });
    const sizes = new Map<string, number>();
    const put = async (i: number) => {
      const body = 'v'.repeat(10 + i);
      const response = await api(`/buckets/${id}/files/race.txt`, { method: 'PUT', raw: body });
      expect(response.status).toBe(201);
      sizes.set((await json(response)).data.version_id, body.length);
    };
    await put(0);
    const work: Promise<unknown>[] = [];
    for (let i = 1; i <= 24; i++) {
      work.push(put(i));
      if (i % 3 === 0) work.push(api(`/buckets/${id}/files/race.txt`, { method: 'DELETE' }).then((r) => expect([200, 404]).toContain(r.status)));
      if (i % 4 === 0) {
        work.push(
          versionsOf(id, 'race.txt').then(async (versions) => {
            const victim = versions[versions.length - 1];
            if (!victim) return;
            const r = await api(`/buckets/${id}/files/race.txt?version_id=${victim.version_id}`, { method: 'DELETE' });
            expect([200, 404]).toContain(r.status);
          }),
        );
      }
    }
    await Promise.all(work);
    const versions = await versionsOf(id, 'race.txt');
    const kept = versions.filter((v) => !v.is_delete_marker);
    const latest = versions.find((v) => v.is_latest);
    const currentBytes = latest && !latest.is_delete_marker ? latest.size : 0;
    const all = kept.reduce((sum, v) => sum + v.size, 0);
    expect(await counts(id)).toEqual({ count: currentBytes > 0 ? 1 : 0, total: all, noncurrent: all - currentBytes, used: all });
    for (const version of kept) {
      const read = await api(`/buckets/${id}/files/race.txt?version_id=${version.version_id}`);
      expect(read.status).toBe(200);
      expect((await read.text()).length).toBe(sizes.get(version.version_id));
    }
  });

  it('restoring a version while it is deleted for good answers 404 or 201, never a 500, and counts stay exact', async () => {
    const id = await bucket({ versioning: 'enabled' });
    const statuses: number[] = [];
    for (let round = 0; round < 12; round++) {
      const body = randomBytes(200 * 1024);
      const first = await api(`/buckets/${id}/files/r${round}.bin`, { method: 'PUT', raw: body });
      const versionId = (await json(first)).data.version_id as string;
      await api(`/buckets/${id}/files/r${round}.bin`, { method: 'PUT', raw: 'newer' });
      const [restored, deleted] = await Promise.all([
        api(`/buckets/${id}/files/r${round}.bin/restore`, { method: 'POST', body: { version_id: versionId } }),
        new Promise((resolve) => setTimeout(resolve, round % 4)).then(() =>
          api(`/buckets/${id}/files/r${round}.bin?version_id=${versionId}`, { method: 'DELETE' }),
        ),
      ]);
      statuses.push(restored.status);
      expect([201, 404]).toContain(restored.status);
      expect([200, 404]).toContain(deleted.status);
      if (restored.status === 201) {
        const current = await api(`/buckets/${id}/files/r${round}.bin`);
        expect(Buffer.from(await current.arrayBuffer()).equals(body)).toBe(true);
      }
    }
    let all = 0;
    let current = 0;
    for (let round = 0; round < 12; round++) {
      for (const v of await versionsOf(id, `r${round}.bin`)) {
        all += v.size;
        if (v.is_latest) current += 1;
      }
    }
    expect(await counts(id)).toMatchObject({ count: current, total: all, used: all });
  });
});

describe('object lock races', () => {
  it('a retention answered 200 holds: a delete racing it either wins before (then the retention is refused) or is refused', async () => {
    const id = await bucket({ objectLock: true });
    for (let round = 0; round < 15; round++) {
      const name = `locked-${round}.txt`;
      const put = await api(`/buckets/${id}/files/${name}`, { method: 'PUT', raw: 'keep me' });
      const versionId = (await json(put)).data.version_id as string;
      const until = new Date(server.clock.now() + DAY).toISOString();
      const [retained, deleted] = await Promise.all([
        api(`/buckets/${id}/retention/${name}?version_id=${versionId}`, { method: 'PUT', body: { mode: 'COMPLIANCE', retain_until: until } }),
        api(`/buckets/${id}/files/${name}?version_id=${versionId}`, { method: 'DELETE' }),
      ]);
      const stillThere = (await api(`/buckets/${id}/files/${name}?version_id=${versionId}`)).status === 200;
      if (retained.status === 200) expect({ round, stillThere, deleted: deleted.status }).toEqual({ round, stillThere: true, deleted: 403 });
      else expect({ round, retained: retained.status, deleted: deleted.status }).toEqual({ round, retained: 404, deleted: 200 });
    }
  });
});

describe('lifecycle rules another user writes', () => {
  it('a rule of a million million days gives PutObject, GetObject and HeadObject no x-amz-expiration to fail on', async () => {
    const Bucket = `atk-${randomBytes(4).toString('hex')}`;
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket,
        LifecycleConfiguration: { Rules: [{ ID: 'forever', Status: 'Enabled', Filter: { Prefix: '' }, Expiration: { Days: 999_999_999_999_999 } }] },
      }),
    );
    const put = await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'body' }));
    expect(put.$metadata.httpStatusCode).toBe(200);
    const head = await s3.send(new HeadObjectCommand({ Bucket, Key: 'k' }));
    expect(head.ContentLength).toBe(4);
    expect(await (await s3.send(new GetObjectCommand({ Bucket, Key: 'k' }))).Body!.transformToString()).toBe('body');
  });

  it('a rule of a million million days neither stops the sweep nor keeps it from the buckets after it', async () => {
    const huge = await bucket();
    const rules = [
      { id: 'forever', status: 'enabled', filter: { prefix: '' }, expiration: { days: 999_999_999_999_999 } },
      { id: 'old', status: 'enabled', filter: { prefix: 'x' }, noncurrent_version_expiration: { noncurrent_days: 999_999_999_999_999 } },
      { id: 'uploads', status: 'enabled', filter: { prefix: '' }, abort_incomplete_multipart_upload: { days_after_initiation: 999_999_999_999_999 } },
    ];
    expect((await api(`/buckets/${huge}/lifecycle`, { method: 'PUT', body: { rules } })).status).toBe(200);
    await api(`/buckets/${huge}/files/stays.txt`, { method: 'PUT', raw: 'stays' });
    // Another user's bucket, swept after the first (buckets go by id).
    const bob = await signUp(server.url);
    const later = (await json(await api('/buckets', { method: 'POST', key: bob.apiKey, body: { name: `atk-${randomBytes(4).toString('hex')}` } }))).data.id;
    await api(`/buckets/${later}/files/old.txt`, { method: 'PUT', key: bob.apiKey, raw: 'old' });
    const expire = [{ id: 'all', status: 'enabled', filter: { prefix: '' }, expiration: { days: 1 } }];
    expect((await api(`/buckets/${later}/lifecycle`, { method: 'PUT', key: bob.apiKey, body: { rules: expire } })).status).toBe(200);
    server.clock.advance(2 * DAY);
    try {
      const start = Date.now();
      while ((await api(`/buckets/${later}/files/old.txt`, { key: bob.apiKey })).status !== 404) {
        expect(Date.now() - start, "bob's file still there: the sweep never reached his bucket").toBeLessThan(15_000);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect((await api(`/buckets/${huge}/files/stays.txt`)).status).toBe(200);
    } finally {
      server.clock.advance(-2 * DAY);
    }
  });
});

describe("a key's limits on the version doors", () => {
  const makeKey = async (body: object) => {
    const made = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `k-${randomBytes(3).toString('hex')}`, ...body }),
    });
    expect(made.status).toBe(201);
    return (await json(made)).data.key as string;
  };

  it('a key limited to one bucket finds no other: versions, trash, restore, deletes, retention and lifecycle all 404', async () => {
    const mine = await bucket({ versioning: 'enabled' });
    const other = await bucket({ versioning: 'enabled', objectLock: true });
    const first = (await json(await api(`/buckets/${other}/files/f.txt`, { method: 'PUT', raw: 'one' }))).data.version_id;
    await api(`/buckets/${other}/files/f.txt`, { method: 'PUT', raw: 'two' });
    const key = await makeKey({ buckets: [mine], permissions: ['read', 'write', 'delete', 'manage', 'bypass-governance'] });
    const tries: [string, string, unknown?][] = [
      ['GET', `/buckets/${other}/files/f.txt/versions`],
      ['GET', `/buckets/${other}/files/f.txt?version_id=${first}`],
      ['GET', `/buckets/${other}/trash`],
      ['POST', `/buckets/${other}/files/f.txt/restore`, { version_id: first }],
      ['POST', `/buckets/${other}/files/f.txt/signed-url`, { method: 'GET' }],
      ['DELETE', `/buckets/${other}/files/f.txt?version_id=${first}`],
      ['PUT', `/buckets/${other}/retention/f.txt?version_id=${first}`, { mode: 'GOVERNANCE', retain_until: new Date(server.clock.now() + DAY).toISOString() }],
      ['PUT', `/buckets/${other}/legal-hold/f.txt`, { legal_hold: true }],
      ['GET', `/buckets/${other}/lifecycle`],
      ['PUT', `/buckets/${other}/lifecycle`, { rules: [{ id: 'x', status: 'enabled', filter: { prefix: '' }, expiration: { days: 1 } }] }],
    ];
    for (const [method, path, body] of tries) {
      const response = await api(path, { method, key, ...(body !== undefined ? { body } : {}) });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
    }
    // The same version id in the key's own bucket names nothing there.
    await api(`/buckets/${mine}/files/f.txt`, { method: 'PUT', raw: 'mine' });
    expect((await api(`/buckets/${mine}/files/f.txt?version_id=${first}`, { key })).status).toBe(404);
    expect((await api(`/buckets/${mine}/files/f.txt?version_id=${first}`, { method: 'DELETE', key })).status).toBe(404);
    expect((await versionsOf(other, 'f.txt')).length).toBe(2);
  });

  it('a read-only key cannot restore, delete a version, or lock one; a writer may restore without manage', async () => {
    const id = await bucket({ versioning: 'enabled', objectLock: true });
    const first = (await json(await api(`/buckets/${id}/files/f.txt`, { method: 'PUT', raw: 'one' }))).data.version_id;
    await api(`/buckets/${id}/files/f.txt`, { method: 'PUT', raw: 'two' });
    const reader = await makeKey({ permissions: ['read'] });
    expect((await api(`/buckets/${id}/files/f.txt/restore`, { method: 'POST', key: reader, body: { version_id: first } })).status).toBe(403);
    expect((await api(`/buckets/${id}/files/f.txt?version_id=${first}`, { method: 'DELETE', key: reader })).status).toBe(403);
    const until = new Date(server.clock.now() + DAY).toISOString();
    expect((await api(`/buckets/${id}/retention/f.txt`, { method: 'PUT', key: reader, body: { mode: 'COMPLIANCE', retain_until: until } })).status).toBe(403);
    expect((await versionsOf(id, 'f.txt')).length).toBe(2);
    // Signing a url still needs manage (the route's other use).
    expect((await api(`/buckets/${id}/files/f.txt/signed-url`, { method: 'POST', key: reader, body: { method: 'GET' } })).status).toBe(403);
    const writer = await makeKey({ permissions: ['read', 'write'] });
    const restored = await api(`/buckets/${id}/files/f.txt/restore`, { method: 'POST', key: writer, body: { version_id: first } });
    expect(restored.status).toBe(201);
    expect(await (await api(`/buckets/${id}/files/f.txt`)).text()).toBe('one');
    expect((await api(`/buckets/${id}/files/f.txt/signed-url`, { method: 'POST', key: writer, body: { method: 'PUT' } })).status).toBe(403);
  });
});

describe('S3 version ids a client should not have', () => {
  const refusal = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      const e = error as { name: string; $metadata?: { httpStatusCode?: number } };
      return { status: e.$metadata?.httpStatusCode, code: e.name };
    }
    throw new Error('expected a refusal');
  };

  it("another bucket's and another user's version ids name nothing; malformed ones are 400; a batch delete answers each key", async () => {
    const [one, two] = [`atk-${randomBytes(4).toString('hex')}`, `atk-${randomBytes(4).toString('hex')}`];
    for (const Bucket of [one, two]) {
      await s3.send(new CreateBucketCommand({ Bucket }));
      await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    }
    const first = (await s3.send(new PutObjectCommand({ Bucket: one, Key: 'k', Body: 'one' }))).VersionId!;
    await s3.send(new PutObjectCommand({ Bucket: two, Key: 'k', Body: 'two' }));
    expect(await refusal(s3.send(new GetObjectCommand({ Bucket: two, Key: 'k', VersionId: first })))).toEqual({ status: 404, code: 'NoSuchVersion' });
    // S3 answers 204 for a version not there; the one of the other bucket stays.
    await s3.send(new DeleteObjectCommand({ Bucket: two, Key: 'k', VersionId: first }));
    expect(await (await s3.send(new GetObjectCommand({ Bucket: one, Key: 'k', VersionId: first }))).Body!.transformToString()).toBe('one');
    const bob = await signUp(server.url);
    const bobS3 = sdkClient(server.s3Url!, bob);
    expect((await refusal(bobS3.send(new GetObjectCommand({ Bucket: one, Key: 'k', VersionId: first })))).status).toBeOneOf([403, 404]);
    expect((await refusal(bobS3.send(new DeleteObjectCommand({ Bucket: one, Key: 'k', VersionId: first })))).status).toBeOneOf([403, 404]);
    for (const VersionId of ['nope', 'NULL', first.toUpperCase(), `${first}0`, '../x', ' '.repeat(3), 'x'.repeat(5000)]) {
      expect(await refusal(s3.send(new GetObjectCommand({ Bucket: one, Key: 'k', VersionId })))).toMatchObject({ status: 400 });
      expect(await refusal(s3.send(new HeadObjectCommand({ Bucket: one, Key: 'k', VersionId })))).toMatchObject({ status: 400 });
      expect(await refusal(s3.send(new DeleteObjectCommand({ Bucket: one, Key: 'k', VersionId })))).toMatchObject({ status: 400 });
    }
    const batch = await s3.send(
      new DeleteObjectsCommand({
        Bucket: one,
        Delete: {
          Objects: [
            { Key: 'k', VersionId: 'nope' },
            { Key: 'k', VersionId: '0'.repeat(32) },
            { Key: 'absent', VersionId: first },
            { Key: 'k', VersionId: first },
          ],
        },
      }),
    );
    expect(batch.Deleted?.map((d) => d.VersionId)).toContain(first);
    expect(batch.Errors?.map((e) => e.Code).sort()).toEqual(expect.arrayContaining(['InvalidArgument']));
    const listed = await s3.send(new ListObjectVersionsCommand({ Bucket: one }));
    expect(listed.Versions ?? []).toEqual([]);
    expect((await s3.send(new GetObjectCommand({ Bucket: two, Key: 'k' }))).Body).toBeDefined();
  });

  it('markers without a key marker, and markers that name nothing, page without a 500', async () => {
    const Bucket = `atk-${randomBytes(4).toString('hex')}`;
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    for (const Key of ['a', 'b', 'c']) await s3.send(new PutObjectCommand({ Bucket, Key, Body: Key }));
    for (const [KeyMarker, VersionIdMarker] of [
      [undefined, '0'.repeat(32)],
      ['b', 'nope'],
      ['b', 'null'],
      ['zzz', '0'.repeat(32)],
      ['\u{10FFFF}', undefined],
    ] as const) {
      const page = await s3
        .send(new ListObjectVersionsCommand({ Bucket, KeyMarker, VersionIdMarker, MaxKeys: 2 }))
        .catch((error: { $metadata: { httpStatusCode: number } }) => error.$metadata.httpStatusCode);
      expect(typeof page === 'number' ? page : 200).toBeOneOf([200, 400]);
    }
  });
});

describe('a control character in a key of a DeleteObjects body', () => {
  it('is refused with 400 InvalidArgument, as in a url, never a 500, and writes nothing (no delete marker under it)', async () => {
    const id = await bucket({ versioning: 'enabled' });
    const Bucket = (await json(await api(`/buckets/${id}`))).data.name as string;
    await s3.send(new PutObjectCommand({ Bucket, Key: 'kept.txt', Body: 'k' }));
    for (const Key of ['a\u0000b', '\u0001']) {
      await expect(s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'kept.txt' }, { Key }] } }))).rejects.toMatchObject({
        name: 'InvalidArgument',
        $metadata: { httpStatusCode: 400 },
      });
    }
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket }));
    expect((versions.Versions ?? []).map((v) => v.Key)).toEqual(['kept.txt']);
    expect(versions.DeleteMarkers ?? []).toEqual([]);
  });

  it('a name no upload may use (an empty folder name, `..`) is deleted as absent: 204, and no delete marker under it', async () => {
    const id = await bucket({ versioning: 'enabled' });
    const Bucket = (await json(await api(`/buckets/${id}`))).data.name as string;
    for (const Key of ['a//b', 'a/../b', '/lead']) {
      await expect(s3.send(new PutObjectCommand({ Bucket, Key, Body: 'x' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 400 } });
      const deleted = await s3.send(new DeleteObjectCommand({ Bucket, Key }));
      expect([deleted.$metadata.httpStatusCode, deleted.DeleteMarker]).toEqual([204, undefined]);
    }
    const batch = await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'c//d' }] } }));
    expect([batch.Deleted?.map((d) => [d.Key, d.DeleteMarker]), batch.Errors ?? []]).toEqual([[['c//d', undefined]], []]);
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket }));
    expect([versions.Versions ?? [], versions.DeleteMarkers ?? []]).toEqual([[], []]);
  });
});

describe('object lock turned on while versioning is suspended', () => {
  it('never leaves a bucket with object lock whose versioning is not enabled, however the two race', async () => {
    let raced = 0;
    for (let round = 0; round < 12; round++) {
      const Bucket = `atk-${randomBytes(4).toString('hex')}`;
      await s3.send(new CreateBucketCommand({ Bucket }));
      await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
      const [suspended, locked] = await Promise.allSettled([
        s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Suspended' } })),
        s3.send(new PutObjectLockConfigurationCommand({ Bucket, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled' } })),
      ]);
      const versioning = (await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status;
      const lock = await s3.send(new GetObjectLockConfigurationCommand({ Bucket })).then(
        (answer) => answer.ObjectLockConfiguration?.ObjectLockEnabled,
        () => undefined,
      );
      if (suspended.status === 'fulfilled' && locked.status === 'fulfilled') raced += 1;
      expect({ round, versioning, lock: lock ?? null }).toEqual({ round, versioning: lock === 'Enabled' ? 'Enabled' : 'Suspended', lock: lock ?? null });
      // Whichever came second was refused with S3's 409.
      for (const outcome of [suspended, locked]) {
        if (outcome.status === 'rejected') expect((outcome.reason as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(409);
      }
    }
    expect(raced).toBe(0);
  });
});

describe('webhook endpoints that stall', () => {
  let hooks: TestServer;
  let stalling: Receiver;
  let quick: Receiver;
  beforeAll(async () => {
    hooks = await startTestServer({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_CONCURRENCY: '2', WEBHOOK_RETRY_BASE_MS: '60000', WEBHOOK_POLL_MS: '50' },
    });
    [stalling, quick] = await Promise.all([startReceiver(), startReceiver()]);
    stalling.delayMs = 30_000;
  });
  afterAll(async () => {
    await hooks?.close();
    await Promise.all([stalling?.close(), quick?.close()]);
  });

  const ownerOn = async () => {
    const user = await signUp(hooks.url);
    const call = (path: string, init: { method?: string; body?: unknown; raw?: string } = {}) =>
      fetch(`${hooks.url}/api/v1${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${user.apiKey}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : init.raw !== undefined ? { body: init.raw } : {}),
      });
    const made = await call('/buckets', { method: 'POST', body: { name: `hk-${randomBytes(4).toString('hex')}` } });
    return { call, bucket: (await json(made)).data.id as number };
  };

  it('a prefix or suffix filter holding a control character is refused with 400, not a 500 (PostgreSQL refuses a NUL)', async () => {
    const { call, bucket: id } = await ownerOn();
    for (const filter of [{ prefix: 'in\u0000' }, { suffix: '\u0007.txt' }]) {
      const refused = await call(`/buckets/${id}/webhooks`, { method: 'POST', body: { url: quick.url, events: ['object.created'], ...filter } });
      expect(refused.status).toBe(400);
      expect((await json(refused)).error).toBe('A prefix or suffix must not contain control characters');
    }
  });

  it("one owner's many stalling endpoints take turns with everyone else's: another owner's event arrives within about one time limit", async () => {
    const mallory = await ownerOn();
    for (let i = 0; i < 10; i++) {
      const made = await mallory.call(`/buckets/${mallory.bucket}/webhooks`, { method: 'POST', body: { url: stalling.url, events: ['object.created'] } });
      expect(made.status).toBe(201);
    }
    const alice = await ownerOn();
    expect((await alice.call(`/buckets/${alice.bucket}/webhooks`, { method: 'POST', body: { url: quick.url, events: ['object.created'] } })).status).toBe(201);
    expect((await mallory.call(`/buckets/${mallory.bucket}/files/flood.txt`, { method: 'PUT', raw: 'x' })).status).toBe(201);
    await stalling.waitFor((received) => received.length >= 2, 'two stalled deliveries under way');
    expect((await alice.call(`/buckets/${alice.bucket}/files/mine.txt`, { method: 'PUT', raw: 'y' })).status).toBe(201);
    // Counted in deliveries, not seconds (a loaded machine stretches seconds): mallory's that began once alice's event was stored.
    const stalledBefore = stalling.received.length;
    await quick.waitFor((received) => received.length >= 1, "alice's event", 30_000);
    // Before: ten stalled endpoints of one owner, claimed by id, took both slots for 1.5 s each: alice's event waited until
    // all ten had begun (about 7.5 s). Taking turns, it has the next slot to free: by then each slot may have begun one of
    // mallory's claimed as it was stored, and the other slot one more.
    expect(stalling.received.length - stalledBefore).toBeLessThanOrEqual(3);
    expect(stalling.received.length).toBeLessThan(10);
  });

  it('a webhook deleted while a delivery to it is under way leaves no attempt behind it', async () => {
    const owner = await ownerOn();
    const receiver = await startReceiver();
    try {
      const made = await owner.call(`/buckets/${owner.bucket}/webhooks`, { method: 'POST', body: { url: receiver.url, events: ['object.created'] } });
      const webhookId = (await json(made)).data.id as number;
      let deleted: Promise<Response> | undefined;
      // The endpoint answers only once its owner has deleted the webhook.
      receiver.delayMs = 500;
      receiver.answer = () => {
        deleted ??= owner.call(`/buckets/${owner.bucket}/webhooks/${webhookId}`, { method: 'DELETE' });
        return { status: 204 };
      };
      expect((await owner.call(`/buckets/${owner.bucket}/files/a.txt`, { method: 'PUT', raw: 'a' })).status).toBe(201);
      await receiver.waitFor((received) => received.length >= 1, 'the delivery');
      expect([200, 204]).toContain((await deleted!).status);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const db = hooks.app.pail.db;
      expect(await db.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', webhookId).execute()).toEqual([]);
      expect(await db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', webhookId).execute()).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe('the audit log read by a key limited to some buckets', () => {
  it("shows only its buckets' entries: no other bucket, no other key", async () => {
    const mine = await bucket();
    const made = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'limited', buckets: [mine], permissions: ['read', 'write', 'delete', 'manage'] }),
    });
    const limited = (await json(made)).data.key as string;
    const other = await bucket({ versioning: 'enabled' });
    expect((await api(`/buckets/${mine}`, { method: 'PATCH', key: limited, body: { versioning: 'enabled' } })).status).toBe(200);
    const everything = (await json(await api('/audit'))).data as { target: string; action: string }[];
    expect(everything.map((entry) => entry.target)).toEqual(expect.arrayContaining([`bucket:${other}`, `bucket:${mine}`]));
    const seen: { target: string }[] = [];
    for (let cursor: string | null = ''; cursor !== null;) {
      const page = await json(await api(`/audit?limit=1&cursor=${cursor}`, { key: limited }));
      seen.push(...page.data);
      cursor = page.next_cursor;
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const entry of seen) expect(entry.target === `bucket:${mine}` || entry.target.startsWith(`bucket:${mine}/`), entry.target).toBe(true);
  });
});

describe('the lifecycle sweep racing its owner', () => {
  let quiet: TestServer;
  beforeAll(async () => {
    // The sweep runs when this test says (sweepLifecycle), not on its own schedule.
    quiet = await startTestServer();
  });
  afterAll(() => quiet?.close());

  it('a noncurrent version that became current again before the sweep reached it is not expired as noncurrent', async () => {
    const owner = await signUp(quiet.url);
    const call = (path: string, init: { method?: string; body?: unknown; raw?: string } = {}) =>
      fetch(`${quiet.url}/api/v1${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${owner.apiKey}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : init.raw !== undefined ? { body: init.raw } : {}),
      });
    const id = (await json(await call('/buckets', { method: 'POST', body: { name: `lc-${randomBytes(4).toString('hex')}` } }))).data.id;
    await call(`/buckets/${id}`, { method: 'PATCH', body: { versioning: 'enabled' } });
    await call(`/buckets/${id}/files/f.txt`, { method: 'PUT', raw: 'older' });
    const newer = (await json(await call(`/buckets/${id}/files/f.txt`, { method: 'PUT', raw: 'newer' }))).data.version_id;
    const rules = [{ id: 'old', status: 'enabled', filter: { prefix: '' }, noncurrent_version_expiration: { noncurrent_days: 1 } }];
    expect((await call(`/buckets/${id}/lifecycle`, { method: 'PUT', body: { rules } })).status).toBe(200);
    quiet.clock.advance(2 * 86_400_000);
    try {
      const ports = quiet.app.pail.storage;
      let interposed = false;
      // Just before the sweep removes the old version (read as noncurrent), its owner deletes the newer one for good.
      const writes = {
        ...ports.writes,
        deleteVersionById: async (...args: Parameters<typeof ports.writes.deleteVersionById>) => {
          if (!interposed) {
            interposed = true;
            expect((await call(`/buckets/${id}/files/f.txt?version_id=${newer}`, { method: 'DELETE' })).status).toBe(200);
          }
          return ports.writes.deleteVersionById(...args);
        },
      };
      await sweepLifecycle({ ...ports, writes }, { daySeconds: 86_400, between: async () => true });
      expect(interposed).toBe(true);
      const current = await call(`/buckets/${id}/files/f.txt`);
      expect(current.status).toBe(200);
      expect(await current.text()).toBe('older');
    } finally {
      quiet.clock.advance(-2 * 86_400_000);
    }
  });
});

describe('a retention set while its version moves', () => {
  it('holds the version where it was locked: the move that comes after it is refused', async () => {
    const id = await bucket({ objectLock: true });
    const put = await api(`/buckets/${id}/files/doc.txt`, { method: 'PUT', raw: 'locked' });
    const versionId = (await json(put)).data.version_id as string;
    const until = new Date(server.clock.now() + DAY).toISOString();
    const writes = server.app.pail.storage.writes;
    const moveVersion = writes.moveVersion.bind(writes);
    let retained: Response | undefined;
    // Once the move has read the version (and found no lock), its owner's other request locks it.
    writes.moveVersion = async (input) => {
      retained ??= await api(`/buckets/${id}/retention/doc.txt?version_id=${versionId}`, { method: 'PUT', body: { mode: 'COMPLIANCE', retain_until: until } });
      return moveVersion(input);
    };
    let moved: Response;
    try {
      moved = await api(`/buckets/${id}/move`, { method: 'POST', body: { from: 'doc.txt', to: 'elsewhere.txt' } });
    } finally {
      writes.moveVersion = moveVersion;
    }
    expect(retained?.status).toBe(200);
    expect(moved.status).toBe(403);
    expect((await json(moved)).code).toBe('ObjectLocked');
    expect(await (await api(`/buckets/${id}/files/doc.txt`)).text()).toBe('locked');
    expect((await api(`/buckets/${id}/files/elsewhere.txt`)).status).toBe(404);
  });
});

describe('a retention set while its version is deleted for good', () => {
  it('the delete that comes after it is refused, on every backend (not only when the race falls that way)', async () => {
    const id = await bucket({ objectLock: true });
    const versionId = (await json(await api(`/buckets/${id}/files/doc.txt`, { method: 'PUT', raw: 'locked' }))).data.version_id as string;
    const until = new Date(server.clock.now() + DAY).toISOString();
    const writes = server.app.pail.storage.writes;
    const deleteVersionById = writes.deleteVersionById.bind(writes);
    let retained: Response | undefined;
    writes.deleteVersionById = async (...args) => {
      retained ??= await api(`/buckets/${id}/retention/doc.txt?version_id=${versionId}`, { method: 'PUT', body: { mode: 'GOVERNANCE', retain_until: until } });
      return deleteVersionById(...args);
    };
    let deleted: Response;
    try {
      deleted = await api(`/buckets/${id}/files/doc.txt?version_id=${versionId}`, { method: 'DELETE' });
    } finally {
      writes.deleteVersionById = deleteVersionById;
    }
    expect(retained?.status).toBe(200);
    expect(deleted.status).toBe(403);
    expect(await (await api(`/buckets/${id}/files/doc.txt?version_id=${versionId}`)).text()).toBe('locked');
  });
});

describe('a copy source naming a version badly', () => {
  it('is refused with 400 InvalidArgument, never a 500, for CopyObject and UploadPartCopy', async () => {
    const Bucket = `atk-${randomBytes(4).toString('hex')}`;
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'src', Body: 'source' }));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'parts' }));
    for (const query of ['versionId=%', 'versionId=%E0%A4%A', 'versionId=', 'versionid=null', 'x=1']) {
      const CopySource = `${Bucket}/src?${query}`;
      const copy = await s3
        .send(new CopyObjectCommand({ Bucket, Key: 'dst', CopySource }))
        .catch((error: { $metadata: { httpStatusCode: number }; name: string }) => error);
      expect({ query, status: '$metadata' in copy ? copy.$metadata.httpStatusCode : 0 }).toEqual({ query, status: 400 });
      const part = await s3
        .send(new UploadPartCopyCommand({ Bucket, Key: 'parts', UploadId, PartNumber: 1, CopySource }))
        .catch((error: { $metadata: { httpStatusCode: number } }) => error);
      expect({ query, status: '$metadata' in part ? part.$metadata.httpStatusCode : 0 }).toEqual({ query, status: 400 });
    }
  });
});

describe('a retention set while its bucket is deleted', () => {
  it('either the deletion came first (the retention finds nothing) or the bucket stays with its locked version', async () => {
    for (let round = 0; round < 12; round++) {
      const id = await bucket({ objectLock: true });
      await api(`/buckets/${id}/files/doc.txt`, { method: 'PUT', raw: 'locked' });
      const until = new Date(server.clock.now() + DAY).toISOString();
      const [retained, deleted] = await Promise.all([
        api(`/buckets/${id}/retention/doc.txt`, { method: 'PUT', body: { mode: 'COMPLIANCE', retain_until: until } }),
        api(`/buckets/${id}`, { method: 'DELETE' }),
      ]);
      const file = await api(`/buckets/${id}/files/doc.txt`);
      if (retained.status === 200) expect({ round, deleted: deleted.status, file: file.status }).toEqual({ round, deleted: 403, file: 200 });
      else expect({ round, retained: retained.status, deleted: deleted.status, file: file.status }).toEqual({ round, retained: 404, deleted: 200, file: 404 });
    }
  });
});

describe("a public bucket's old versions", () => {
  it('are not for anyone: a file its owner deleted (or replaced) is not read by version id without the owner’s credential', async () => {
    const id = await bucket({ versioning: 'enabled' });
    expect((await api(`/buckets/${id}/visibility`, { method: 'POST', body: { visibility: 'public' } })).status).toBe(200);
    const secret = (await json(await api(`/buckets/${id}/files/secret.txt`, { method: 'PUT', raw: 'was public once' }))).data.version_id as string;
    const anonymous = (path: string) => fetch(`${server.url}/api/v1${path}`);
    // While current, anyone reads it (by name, and by its id as S3 allows for a public object).
    expect((await anonymous(`/buckets/${id}/files/secret.txt`)).status).toBe(200);
    expect((await api(`/buckets/${id}/files/secret.txt`, { method: 'DELETE' })).status).toBe(200);
    expect((await anonymous(`/buckets/${id}/files/secret.txt`)).status).toBe(404);
    const byId = await anonymous(`/buckets/${id}/files/secret.txt?version_id=${secret}`);
    expect(byId.status).toBe(404);
    const bob = await signUp(server.url);
    expect((await api(`/buckets/${id}/files/secret.txt?version_id=${secret}`, { key: bob.apiKey })).status).toBe(404);
    // The owner still reads and restores it.
    expect(await (await api(`/buckets/${id}/files/secret.txt?version_id=${secret}`)).text()).toBe('was public once');
  });
});
