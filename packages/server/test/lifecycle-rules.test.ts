/**
 * Lifecycle rules kept through both doors: S3's LifecycleConfiguration as
 * the AWS SDK sends and reads it (round trip, S3's refusals with its codes,
 * 501 for transitions) and the Pail API's JSON on the Developer and Client
 * APIs, one set of rules seen alike from both.
 */
import {
  CreateBucketCommand,
  DeleteBucketLifecycleCommand,
  GetBucketLifecycleConfigurationCommand,
  PutBucketLifecycleConfigurationCommand,
  S3ServiceException,
  type LifecycleRule as S3Rule,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let alice: TestUser;
let s3: S3Client;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer({ s3: true });
  if (server.s3Url === null) throw new Error('the S3 listener did not start');
  alice = await signUp(server.url);
  s3 = sdkClient(server.s3Url, alice);
});
afterAll(() => server.close());

async function newBucket(): Promise<{ name: string; id: number }> {
  const name = `lc-${Date.now().toString(36)}-${counter++}`;
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  const buckets = (await json(await devApi(server.url, alice)(''))).data as { id: number; name: string }[];
  return { name, id: buckets.find((bucket) => bucket.name === name)!.id };
}

async function s3Error(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode };
    throw error;
  }
  throw new Error('expected the request to fail');
}

const put = (Bucket: string, Rules: S3Rule[]) => s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket, LifecycleConfiguration: { Rules } }));
const get = async (Bucket: string) => (await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket }))).Rules;

describe('S3: Put/Get/DeleteBucketLifecycleConfiguration', () => {
  it('keeps every action and filter as sent, and shows them back the same', async () => {
    const { name } = await newBucket();
    const rules: S3Rule[] = [
      { ID: 'legacy', Prefix: 'logs/', Status: 'Enabled', Expiration: { Days: 30 } },
      { ID: 'dated', Filter: { Prefix: 'old/' }, Status: 'Disabled', Expiration: { Date: new Date('2030-01-01T00:00:00.000Z') } },
      {
        ID: 'and',
        Filter: { And: { Prefix: 'tmp/', Tags: [{ Key: 'kind', Value: 'scratch' }], ObjectSizeGreaterThan: 10, ObjectSizeLessThan: 1000 } },
        Status: 'Enabled',
        Expiration: { Days: 2 },
        NoncurrentVersionExpiration: { NoncurrentDays: 3, NewerNoncurrentVersions: 2 },
      },
      { ID: 'tag', Filter: { Tag: { Key: 'team', Value: 'a' } }, Status: 'Enabled', Expiration: { Days: 9 } },
      { ID: 'markers', Filter: {}, Status: 'Enabled', Expiration: { ExpiredObjectDeleteMarker: true } },
      { ID: 'uploads', Filter: { Prefix: '' }, Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } },
    ];
    await put(name, rules);
    expect(await get(name)).toEqual(rules);
    // A second put replaces the rules whole.
    await put(name, [rules[0]!]);
    expect(await get(name)).toEqual([rules[0]]);
  });

  it('reads conditions beside And, or several without it, as all of them (as Ceph does)', async () => {
    const { name } = await newBucket();
    const filter = { Prefix: 'days1/', Tag: { Key: 'tom', Value: 'sawyer' }, And: { Prefix: 'days1', Tags: [{ Key: 'huck', Value: 'finn' }] } };
    await put(name, [{ ID: 'r', Filter: filter, Status: 'Enabled', Expiration: { Days: 1 } }]);
    expect((await get(name))![0]!.Filter).toEqual({
      And: {
        Prefix: 'days1/',
        Tags: [
          { Key: 'tom', Value: 'sawyer' },
          { Key: 'huck', Value: 'finn' },
        ],
      },
    });
    const disjoint = { Prefix: 'a/', And: { Prefix: 'b/', Tags: [{ Key: 'k', Value: 'v' }] } };
    expect(await s3Error(put(name, [{ ID: 'r', Filter: disjoint, Status: 'Enabled', Expiration: { Days: 1 } }]))).toEqual({
      name: 'MalformedXML',
      status: 400,
    });
  });

  it('gives a rule without an ID one, as S3 does', async () => {
    const { name } = await newBucket();
    await put(name, [{ Prefix: 'a/', Status: 'Enabled', Expiration: { Days: 1 } }]);
    const [rule] = (await get(name))!;
    expect(rule!.ID).toMatch(/\S/);
    expect(rule).toMatchObject({ Prefix: 'a/', Status: 'Enabled', Expiration: { Days: 1 } });
  });

  it('answers NoSuchLifecycleConfiguration without rules, and 204 to a delete whether or not there were any', async () => {
    const { name } = await newBucket();
    expect(await s3Error(get(name))).toEqual({ name: 'NoSuchLifecycleConfiguration', status: 404 });
    expect((await s3.send(new DeleteBucketLifecycleCommand({ Bucket: name }))).$metadata.httpStatusCode).toBe(204);
    await put(name, [{ ID: 'r', Prefix: '', Status: 'Enabled', Expiration: { Days: 1 } }]);
    expect((await s3.send(new DeleteBucketLifecycleCommand({ Bucket: name }))).$metadata.httpStatusCode).toBe(204);
    expect(await s3Error(get(name))).toEqual({ name: 'NoSuchLifecycleConfiguration', status: 404 });
  });

  it('refuses what S3 refuses, with its codes, and keeps the rules it had', async () => {
    const { name } = await newBucket();
    const kept: S3Rule[] = [{ ID: 'kept', Prefix: 'k/', Status: 'Enabled', Expiration: { Days: 5 } }];
    await put(name, kept);
    const refusals: [S3Rule[], string, number][] = [
      [[{ ID: 'a'.repeat(256), Prefix: '', Status: 'Enabled', Expiration: { Days: 1 } }], 'InvalidArgument', 400],
      [
        [
          { ID: 'same', Prefix: 'a/', Status: 'Enabled', Expiration: { Days: 1 } },
          { ID: 'same', Prefix: 'b/', Status: 'Enabled', Expiration: { Days: 2 } },
        ],
        'InvalidArgument',
        400,
      ],
      [[{ ID: 'r', Prefix: '', Status: 'enabled' as 'Enabled', Expiration: { Days: 1 } }], 'MalformedXML', 400],
      [[{ ID: 'r', Prefix: '', Status: 'Enabled', Expiration: { Days: 0 } }], 'InvalidArgument', 400],
      [[{ ID: 'r', Prefix: '', Status: 'Enabled', Expiration: { Days: 1, ExpiredObjectDeleteMarker: true } }], 'MalformedXML', 400],
      [[{ ID: 'r', Prefix: '', Status: 'Enabled' }], 'MalformedXML', 400],
      [[{ ID: 'r', Prefix: '', Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 0 } }], 'InvalidArgument', 400],
      [
        [{ ID: 'r', Filter: { Tag: { Key: 'k', Value: 'v' } }, Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }],
        'InvalidRequest',
        400,
      ],
      [
        [{ ID: 'r', Filter: { And: { ObjectSizeGreaterThan: 100, ObjectSizeLessThan: 50 } }, Status: 'Enabled', Expiration: { Days: 1 } }],
        'InvalidArgument',
        400,
      ],
      [[{ ID: 'r', Prefix: '', Status: 'Enabled', Transitions: [{ Days: 1, StorageClass: 'GLACIER' }] }], 'NotImplemented', 501],
      [[{ ID: 'r', Prefix: '', Status: 'Enabled', NoncurrentVersionTransitions: [{ NoncurrentDays: 1, StorageClass: 'GLACIER' }] }], 'NotImplemented', 501],
    ];
    for (const [rules, code, status] of refusals) {
      expect(await s3Error(put(name, rules)), JSON.stringify(rules).slice(0, 120)).toEqual({ name: code, status });
    }
    expect(await get(name)).toEqual(kept);
  });

  it('refuses a date that is not a midnight, and a document that is not a configuration', async () => {
    const { name } = await newBucket();
    const dated = (date: Date) => put(name, [{ ID: 'd', Prefix: '', Status: 'Enabled', Expiration: { Date: date } }]);
    expect(await s3Error(dated(new Date('2030-01-01T12:00:00Z')))).toEqual({ name: 'InvalidArgument', status: 400 });
    expect(await s3Error(s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: name, LifecycleConfiguration: { Rules: [] } })))).toEqual({
      name: 'MalformedXML',
      status: 400,
    });
  });

  it('lets only the bucket’s owner see or change its rules', async () => {
    const { name } = await newBucket();
    const bob = await signUp(server.url);
    const bobS3 = sdkClient(server.s3Url!, bob);
    await put(name, [{ ID: 'r', Prefix: '', Status: 'Enabled', Expiration: { Days: 1 } }]);
    // One request at a time: each refusal is awaited as it is made, so none is left unheard.
    for (const attempt of [
      () => bobS3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: name })),
      () => bobS3.send(new DeleteBucketLifecycleCommand({ Bucket: name })),
      () => bobS3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: name, LifecycleConfiguration: { Rules: [] } })),
    ]) {
      expect((await s3Error(attempt())).status).toBe(404);
    }
    expect(await get(name)).toHaveLength(1);
  });
});

describe('Pail API: PUT/GET/DELETE …/buckets/:id/lifecycle', () => {
  it('keeps the same rules as JSON on both APIs, and S3 reads them as it reads its own', async () => {
    const { name, id } = await newBucket();
    const api = devApi(server.url, alice);
    expect((await api(`/${id}/lifecycle`)).status).toBe(404);
    const rules = [
      {
        id: 'tmp',
        status: 'enabled',
        filter: { prefix: 'tmp/', tags: [{ key: 'kind', value: 'scratch' }], object_size_less_than: 100 },
        expiration: { days: 3 },
      },
      { id: 'uploads', status: 'enabled', filter: { prefix: '' }, abort_incomplete_multipart_upload: { days_after_initiation: 2 } },
      { id: 'when', status: 'disabled', prefix: 'old/', expiration: { date: '2031-02-03' } },
    ];
    const saved = await api(`/${id}/lifecycle`, { method: 'PUT', body: JSON.stringify({ rules }) });
    expect(saved.status).toBe(200);
    const kept = [rules[0], rules[1], { ...rules[2], expiration: { date: '2031-02-03T00:00:00.000Z' } }];
    expect((await json(saved)).data).toEqual({ rules: kept });
    expect((await json(await api(`/${id}/lifecycle`))).data).toEqual({ rules: kept });

    const client = await fetch(`${server.url}/api/buckets/${id}/lifecycle`, { headers: { authorization: `Bearer ${alice.token}` } });
    expect((await json(client)).data).toEqual({ rules: kept });
    // The change is in the owner's audit log, with the key that made it.
    const audit = await json(await fetch(`${server.url}/api/audit`, { headers: { authorization: `Bearer ${alice.token}` } }));
    const entry = audit.data.find((e: { action: string; target: string }) => e.action === 'bucket.lifecycle_changed' && e.target === `bucket:${id}`);
    expect(entry).toMatchObject({ details: { rules: 3 } });
    expect(entry.actor).toMatch(/^key:/);
    expect(await get(name)).toEqual([
      {
        ID: 'tmp',
        Filter: { And: { Prefix: 'tmp/', Tags: [{ Key: 'kind', Value: 'scratch' }], ObjectSizeLessThan: 100 } },
        Status: 'Enabled',
        Expiration: { Days: 3 },
      },
      { ID: 'uploads', Filter: { Prefix: '' }, Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 } },
      { ID: 'when', Prefix: 'old/', Status: 'Disabled', Expiration: { Date: new Date('2031-02-03T00:00:00.000Z') } },
    ]);

    const removed = await fetch(`${server.url}/api/buckets/${id}/lifecycle`, { method: 'DELETE', headers: { authorization: `Bearer ${alice.token}` } });
    expect(removed.status).toBe(200);
    expect(await s3Error(get(name))).toEqual({ name: 'NoSuchLifecycleConfiguration', status: 404 });
  });

  it('refuses rules S3 would refuse, with a validation error naming the mistake', async () => {
    const { id } = await newBucket();
    const api = devApi(server.url, alice);
    const refused = async (rules: unknown) => {
      const response = await api(`/${id}/lifecycle`, { method: 'PUT', body: JSON.stringify({ rules }) });
      return { status: response.status, body: await json(response) };
    };
    const same = await refused([
      { id: 'x', status: 'enabled', expiration: { days: 1 } },
      { id: 'x', status: 'enabled', expiration: { days: 2 } },
    ]);
    expect(same.status).toBe(400);
    expect(same.body.error).toMatch(/unique/);
    expect((await refused([{ status: 'enabled' }])).status).toBe(400);
    expect((await refused([{ status: 'on', expiration: { days: 1 } }])).status).toBe(400);
    expect((await refused([{ status: 'enabled', expiration: { days: 0 } }])).status).toBe(400);
    expect((await refused([{ status: 'enabled', expiration: { date: 'tomorrow' } }])).status).toBe(400);
    expect((await refused([])).status).toBe(400);
    expect((await api(`/${id}/lifecycle`)).status).toBe(404);
  });
});
