/**
 * Webhooks (issue 39) with a real receiver: every door's change arrives once,
 * in order, in S3's event format, signed so that the `standardwebhooks`
 * package verifies it; a receiver that fails for a while still gets every
 * event in order; urls to private addresses are refused without the
 * operator's allowance; the owner sees deliveries, can resend, rotate the
 * secret (both secrets sign during the overlap) and reads it all in the audit log.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUserByEmail } from '../src/db/repositories/users.js';
import { pruneDeliveredEvents } from '../src/domain/webhook-deliverer.js';
import { restoreVersion } from '../src/domain/versions.js';
import { resolveWebhookUrl } from '../src/domain/webhook-urls.js';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createUpload, patchUpload } from './helpers/tus.js';
import { recordOf, recordsOf, startReceiver, verify, type Receiver } from './helpers/webhook-receiver.js';

const ALL_EVENTS = ['object.created', 'object.removed', 'object.restored', 'bucket.visibility_changed', 'bucket.deleted'];

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_POLL_MS: '50' } });
  receiver = await startReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function owner(baseUrl = server.url) {
  const user = await signUp(baseUrl);
  const dev = devApi(baseUrl, user);
  const name = `hooks-${randomBytes(4).toString('hex')}`;
  const created = await dev('', { method: 'POST', body: JSON.stringify({ name }) });
  expect(created.status).toBe(201);
  return { user, dev, bucket: { id: (await json(created)).data.id as number, name } };
}

async function addWebhook(o: Awaited<ReturnType<typeof owner>>, body: Record<string, unknown>) {
  const response = await o.dev(`/${o.bucket.id}/webhooks`, { method: 'POST', body: JSON.stringify(body) });
  expect(response.status).toBe(201);
  return (await json(response)).data as { id: number; secret: string; url: string };
}

/** The messages to one webhook (by its configurationId), first arrivals that were answered 2xx. */
const deliveredTo = (webhookId: number) => receiver.delivered().filter((r) => recordOf(r).s3.configurationId === `webhook-${webhookId}`);
/** The events those messages carried, in order (a message may carry several). */
const eventsTo = (webhookId: number) => deliveredTo(webhookId).flatMap(recordsOf);
const allTo = (webhookId: number) => receiver.received.filter((r) => recordOf(r).s3.configurationId === `webhook-${webhookId}`);

type DeliveryRow = {
  id: number;
  key: string;
  version_id: string | null;
  status: string;
  attempts: number;
  webhook_id_header: string;
  attempt_log: { outcome: string; response_code: number; response_excerpt: string }[];
};

/** The webhook's delivery log once `recorded` holds: the deliverer records an answer only after the receiver has it. */
async function deliveryLog(o: Awaited<ReturnType<typeof owner>>, webhookId: number, recorded: (rows: DeliveryRow[]) => boolean) {
  let rows: DeliveryRow[] = [];
  for (let i = 0; i < 400; i++) {
    rows = (await json(await o.dev(`/${o.bucket.id}/webhooks/${webhookId}/deliveries`))).data;
    if (recorded(rows)) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return rows;
}

describe('every door', () => {
  it('produces its event once, in order, in S3 format, signed', async () => {
    const o = await owner();
    const hook = await addWebhook(o, { url: receiver.url, events: ALL_EVENTS });
    expect(hook.secret).toMatch(/^whsec_/);
    const s3 = sdkClient(server.s3Url!, o.user);
    const Bucket = o.bucket.name;

    const put = await o.dev(`/${o.bucket.id}/files/notes/my%20file.txt`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(put.status).toBe(201);
    const etag = (await o.dev(`/${o.bucket.id}/files/notes/my%20file.txt`)).headers.get('etag')!.replace(/"/g, '');
    await s3.send(new PutObjectCommand({ Bucket, Key: 'b.txt', Body: 'bee' }));
    const multipart = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'c.bin' }));
    const part = await s3.send(new UploadPartCommand({ Bucket, Key: 'c.bin', UploadId: multipart.UploadId, PartNumber: 1, Body: randomBytes(1000) }));
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key: 'c.bin',
        UploadId: multipart.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    const tus = await createUpload(`${server.url}/api/v1/buckets/${o.bucket.id}/uploads`, o.user, 4, 'd.bin');
    expect((await patchUpload(tus, o.user, 0, Buffer.from('dddd'))).status).toBe(204);
    const signed = await fetch(`${server.url}/api/v1/buckets/${o.bucket.id}/files/e.txt/signed-url`, {
      method: 'POST',
      headers: { 'x-api-key': o.user.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'PUT' }),
    });
    expect(signed.status).toBe(201);
    expect((await fetch((await json(signed)).data.url as string, { method: 'PUT', body: 'signed' })).status).toBe(201);
    await s3.send(new CopyObjectCommand({ Bucket, Key: 'f.txt', CopySource: `${Bucket}/b.txt` }));
    expect((await o.dev(`/${o.bucket.id}/move`, { method: 'POST', body: JSON.stringify({ from: 'f.txt', to: 'g.txt' }) })).status).toBe(200);
    expect((await o.dev(`/${o.bucket.id}/files/g.txt`, { method: 'DELETE' })).status).toBe(200);
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'b.txt' }));
    expect((await o.dev(`/${o.bucket.id}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'public' }) })).status).toBe(200);
    expect((await o.dev(`/${o.bucket.id}`, { method: 'DELETE' })).status).toBe(200);

    const expected = [
      ['object.created', 's3:ObjectCreated:Put', 'notes/my+file.txt'],
      ['object.created', 's3:ObjectCreated:Put', 'b.txt'],
      ['object.created', 's3:ObjectCreated:CompleteMultipartUpload', 'c.bin'],
      ['object.created', 's3:ObjectCreated:Put', 'd.bin'],
      ['object.created', 's3:ObjectCreated:Put', 'e.txt'],
      ['object.created', 's3:ObjectCreated:Copy', 'f.txt'],
      ['object.removed', 's3:ObjectRemoved:Delete', 'f.txt'],
      ['object.created', 's3:ObjectCreated:Copy', 'g.txt'],
      ['object.removed', 's3:ObjectRemoved:Delete', 'g.txt'],
      ['object.removed', 's3:ObjectRemoved:Delete', 'b.txt'],
      ['bucket.visibility_changed', 'pail:BucketVisibilityChanged:Public', undefined],
      ['bucket.deleted', 'pail:BucketDeleted', undefined],
    ];
    await receiver.waitFor(() => eventsTo(hook.id).length >= expected.length, `${expected.length} events`);
    const got = eventsTo(hook.id);
    expect(got.map((r) => [r.pail.event, r.eventName, r.s3.object?.key])).toEqual(expected);
    // Each event once: no message twice (every attempt was answered 204).
    expect(allTo(hook.id).flatMap(recordsOf)).toHaveLength(expected.length);
    for (const received of deliveredTo(hook.id)) expect(() => verify(hook.secret, received)).not.toThrow();
    expect(got[0]).toMatchObject({ eventVersion: '2.1', eventSource: 'aws:s3', s3: { bucket: { name: o.bucket.name }, object: { size: 5, eTag: etag } } });
    // An unversioned bucket's events name no version, as S3's do not.
    expect(got.filter((r) => r.s3.object !== undefined && 'versionId' in r.s3.object)).toEqual([]);
    const sequencers = got.flatMap((r) => (r.s3.object ? [r.s3.object.sequencer] : []));
    expect([...sequencers].sort()).toEqual(sequencers);
    // A signature made with another secret does not verify.
    expect(() => verify(`whsec_${randomBytes(24).toString('base64')}`, deliveredTo(hook.id)[0]!)).toThrow();
  });

  it('filters by event, prefix and suffix; a bucket without a webhook writes no outbox row', async () => {
    const o = await owner();
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created'], prefix: 'img/', suffix: '.png' });
    for (const name of ['img/a.png', 'img/b.jpg', 'doc/c.png', 'img/d.png']) {
      expect((await o.dev(`/${o.bucket.id}/files/${name}`, { method: 'PUT', body: 'x' })).status).toBe(201);
    }
    expect((await o.dev(`/${o.bucket.id}/files/img/a.png`, { method: 'DELETE' })).status).toBe(200);
    expect((await o.dev(`/${o.bucket.id}/files/img/z.png`, { method: 'PUT', body: 'z' })).status).toBe(201);
    await receiver.waitFor(() => eventsTo(hook.id).length >= 3, '3 matching events');
    expect(eventsTo(hook.id).map((r) => r.s3.object!.key)).toEqual(['img/a.png', 'img/d.png', 'img/z.png']);

    const other = await owner();
    expect((await other.dev(`/${other.bucket.id}/files/x.png`, { method: 'PUT', body: 'x' })).status).toBe(201);
    const rows = await server.app.pail.db.selectFrom('webhook_deliveries').select('id').where('bucket_name', '=', other.bucket.name).execute();
    expect(rows).toEqual([]);
  });
  it('keeps its connection to an endpoint between deliveries: 20 events over one or two connections, not 20', async () => {
    const o = await owner();
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created'] });
    const before = receiver.connections;
    for (let i = 0; i < 20; i++) expect((await o.dev(`/${o.bucket.id}/files/f${i}.txt`, { method: 'PUT', body: 'x' })).status).toBe(201);
    await receiver.waitFor(() => eventsTo(hook.id).length >= 20, '20 events');
    expect(eventsTo(hook.id).map((r) => r.s3.object!.key)).toEqual(Array.from({ length: 20 }, (_, i) => `f${i}.txt`));
    expect(receiver.connections - before).toBeLessThanOrEqual(2);
  });

  it('a restored version is announced as object.restored, with the bytes it restored', async () => {
    const o = await owner();
    expect((await o.dev(`/${o.bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created', 'object.restored'] });
    expect((await o.dev(`/${o.bucket.id}/files/doc.txt`, { method: 'PUT', body: 'first' })).status).toBe(201);
    expect((await o.dev(`/${o.bucket.id}/files/doc.txt`, { method: 'PUT', body: 'second!' })).status).toBe(201);
    const versions = (await json(await o.dev(`/${o.bucket.id}/files/doc.txt/versions`))).data as { version_id: string; size: number }[];
    const first = versions.find((version) => version.size === 5)!;
    const restored = await o.dev(`/${o.bucket.id}/files/doc.txt/restore`, { method: 'POST', body: JSON.stringify({ version_id: first.version_id }) });
    expect(restored.status).toBe(201);
    await receiver.waitFor(() => eventsTo(hook.id).length >= 3, '3 events');
    expect(eventsTo(hook.id).map((r) => [r.pail.event, r.eventName, r.s3.object!.size])).toEqual([
      ['object.created', 's3:ObjectCreated:Put', 5],
      ['object.created', 's3:ObjectCreated:Put', 7],
      ['object.restored', 's3:ObjectRestore:Completed', 5],
    ]);
    // Each event names the version it made, as S3's events do in a versioned bucket: the ids the versions list shows.
    const now = (await json(await o.dev(`/${o.bucket.id}/files/doc.txt/versions`))).data as { version_id: string }[];
    expect(eventsTo(hook.id).map((r) => r.s3.object!.versionId)).toEqual(now.map((version) => version.version_id).reverse());
  });

  it("a delete marker is announced with its version id; a suspended bucket's write as the `null` version", async () => {
    const o = await owner();
    expect((await o.dev(`/${o.bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created', 'object.removed'] });
    const s3 = sdkClient(server.s3Url!, o.user);
    const Bucket = o.bucket.name;
    const put = (await s3.send(new PutObjectCommand({ Bucket, Key: 'm.txt', Body: 'em' }))).VersionId!;
    const marker = await s3.send(new DeleteObjectCommand({ Bucket, Key: 'm.txt' }));
    expect(marker.DeleteMarker).toBe(true);
    expect((await o.dev(`/${o.bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'suspended' }) })).status).toBe(200);
    await s3.send(new PutObjectCommand({ Bucket, Key: 's.txt', Body: 'es' }));
    await receiver.waitFor(() => eventsTo(hook.id).length >= 3, '3 events');
    expect(eventsTo(hook.id).map((r) => [r.eventName, r.s3.object!.key, r.s3.object!.versionId])).toEqual([
      ['s3:ObjectCreated:Put', 'm.txt', put],
      ['s3:ObjectRemoved:DeleteMarkerCreated', 'm.txt', marker.VersionId],
      ['s3:ObjectCreated:Put', 's.txt', 'null'],
    ]);
    // The owner's delivery log names the same versions, newest first.
    const log = await deliveryLog(o, hook.id, (rows) => rows.length === 3);
    expect(log.map((row) => [row.key, row.version_id])).toEqual([
      ['s.txt', 'null'],
      ['m.txt', marker.VersionId],
      ['m.txt', put],
    ]);
  });

  it('a move in a versioned bucket: the marker left at the old name and the version made at the new one, each with its id', async () => {
    const o = await owner();
    expect((await o.dev(`/${o.bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.removed', 'object.created'] });
    expect((await o.dev(`/${o.bucket.id}/files/from.txt`, { method: 'PUT', body: 'moving' })).status).toBe(201);
    expect((await o.dev(`/${o.bucket.id}/move`, { method: 'POST', body: JSON.stringify({ from: 'from.txt', to: 'to.txt' }) })).status).toBe(200);
    const newest = async (name: string) =>
      ((await json(await o.dev(`/${o.bucket.id}/files/${name}/versions`))).data as { version_id: string; is_delete_marker: boolean }[])[0]!;
    const marker = await newest('from.txt');
    expect(marker.is_delete_marker).toBe(true);
    await receiver.waitFor(() => eventsTo(hook.id).length >= 3, '3 events');
    expect(
      eventsTo(hook.id)
        .map((r) => [r.eventName, r.s3.object!.key, r.s3.object!.versionId])
        .slice(1),
    ).toEqual([
      ['s3:ObjectRemoved:DeleteMarkerCreated', 'from.txt', marker.version_id],
      ['s3:ObjectCreated:Copy', 'to.txt', (await newest('to.txt')).version_id],
    ]);
  });

  it("a restore asked with a door's own operation name (the CLI's 'cli') is still announced as object.restored", async () => {
    const o = await owner();
    expect((await o.dev(`/${o.bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created', 'object.restored'] });
    for (const body of ['first', 'second!']) expect((await o.dev(`/${o.bucket.id}/files/doc.txt`, { method: 'PUT', body })).status).toBe(201);
    const versions = (await json(await o.dev(`/${o.bucket.id}/files/doc.txt/versions`))).data as { version_id: string; size: number }[];
    const { db, storage } = server.app.pail;
    const account = (await findUserByEmail(db, o.user.email))!;
    const bucket = await db.selectFrom('buckets').selectAll().where('id', '=', o.bucket.id).executeTakeFirstOrThrow();
    // As `pail versions restore` calls it (packages/cli/src/commands/versions.ts).
    await restoreVersion(storage, account, bucket, 'doc.txt', versions.find((version) => version.size === 5)!.version_id, 'cli');
    await receiver.waitFor(() => eventsTo(hook.id).length >= 3, '3 events');
    expect(eventsTo(hook.id).map((r) => [r.pail.event, r.eventName, r.s3.object!.size])).toEqual([
      ['object.created', 's3:ObjectCreated:Put', 5],
      ['object.created', 's3:ObjectCreated:Put', 7],
      ['object.restored', 's3:ObjectRestore:Completed', 5],
    ]);
  });

  it('a version deleted for good (Pail API, S3 DeleteObject and DeleteObjects with a version id) is announced once each as object.removed', async () => {
    const o = await owner();
    expect((await o.dev(`/${o.bucket.id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.removed'] });
    const s3 = sdkClient(server.s3Url!, o.user);
    const Bucket = o.bucket.name;
    for (const body of ['one', 'two']) expect((await o.dev(`/${o.bucket.id}/files/api.txt`, { method: 'PUT', body })).status).toBe(201);
    const older = ((await json(await o.dev(`/${o.bucket.id}/files/api.txt/versions`))).data as { version_id: string }[])[1]!.version_id;
    expect((await o.dev(`/${o.bucket.id}/files/api.txt?version_id=${older}`, { method: 'DELETE' })).status).toBe(200);
    const one = (await s3.send(new PutObjectCommand({ Bucket, Key: 's3.txt', Body: 'one' }))).VersionId!;
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 's3.txt', VersionId: one }));
    const many = (await s3.send(new PutObjectCommand({ Bucket, Key: 'many.txt', Body: 'many' }))).VersionId!;
    const batch = await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'many.txt', VersionId: many }] } }));
    expect(batch.Errors ?? []).toEqual([]);

    const expected = [
      ['object.removed', 's3:ObjectRemoved:Delete', 'api.txt'],
      ['object.removed', 's3:ObjectRemoved:Delete', 's3.txt'],
      ['object.removed', 's3:ObjectRemoved:Delete', 'many.txt'],
    ];
    await receiver.waitFor(() => eventsTo(hook.id).length >= expected.length, `${expected.length} events`);
    expect(eventsTo(hook.id).map((r) => [r.pail.event, r.eventName, r.s3.object?.key])).toEqual(expected);
    // Each names the version deleted, as S3's events do.
    expect(eventsTo(hook.id).map((r) => r.s3.object?.versionId)).toEqual([older, one, many]);
    // Exactly one each: the outbox holds no more than was delivered (each written with its delete, so all are there now).
    const rows = await server.app.pail.db.selectFrom('webhook_deliveries').select('object_key').where('webhook_id', '=', hook.id).execute();
    expect(rows.map((row) => row.object_key).sort()).toEqual(['api.txt', 'many.txt', 's3.txt']);
  });
});

describe('delivery', () => {
  it('retries a receiver that answers 500 for a while, and it gets every event in order, duplicates only with the same webhook-id', async () => {
    const o = await owner();
    let failures = 0;
    const hookUrl = `${receiver.url}?flaky=1`;
    receiver.answer = (request) => {
      if (request.body.includes('"flaky-') && failures < 4) {
        failures += 1;
        return { status: 500, body: 'down for maintenance' };
      }
      return { status: 204 };
    };
    const hook = await addWebhook(o, { url: hookUrl, events: ['object.created'] });
    const names = Array.from({ length: 6 }, (_, i) => `flaky-${i}.txt`);
    for (const name of names) expect((await o.dev(`/${o.bucket.id}/files/${name}`, { method: 'PUT', body: name })).status).toBe(201);
    await receiver.waitFor(() => eventsTo(hook.id).length >= names.length, 'every event');
    receiver.answer = () => ({ status: 204 });
    expect(eventsTo(hook.id).map((r) => r.s3.object!.key)).toEqual(names);
    // Every request carried its events in order: a failed message was repeated (same webhook-id) before the next was sent.
    const ids = allTo(hook.id).map((r) => r.headers['webhook-id']);
    expect(ids.filter((id, i) => id !== ids[i - 1])).toEqual(deliveredTo(hook.id).map((r) => r.headers['webhook-id']));
    expect(failures).toBe(4);

    const isFirst = (d: DeliveryRow) => d.key === 'flaky-0.txt';
    const deliveries = await deliveryLog(o, hook.id, (rows) => rows.find(isFirst)?.status === 'delivered');
    const firstEvent = deliveries.find(isFirst)!;
    expect(firstEvent).toMatchObject({ status: 'delivered', attempts: 5, response_code: 204 });
    expect(firstEvent.attempt_log[0]).toMatchObject({ attempt: 1, outcome: 'failed', response_code: 500, response_excerpt: 'down for maintenance' });

    // Resend: the same body and webhook-id again.
    const before = allTo(hook.id).length;
    expect((await o.dev(`/${o.bucket.id}/webhooks/${hook.id}/deliveries/${firstEvent.id}/resend`, { method: 'POST' })).status).toBe(202);
    await receiver.waitFor(() => allTo(hook.id).length > before, 'the resent delivery');
    const resent = allTo(hook.id).at(-1)!;
    expect(resent.headers['webhook-id']).toBe(firstEvent.webhook_id_header);
    expect(resent.body).toBe(deliveredTo(hook.id)[0]!.body);
  });

  it('does not follow a redirect, and keeps only a short excerpt of the answer', async () => {
    const o = await owner();
    const target = await startReceiver();
    const hookUrl = `${receiver.url}?redirect=1`;
    receiver.answer = (request) =>
      request.body.includes('redirected.txt') ? { status: 302, headers: { location: target.url }, body: 'x'.repeat(5000) } : { status: 204 };
    try {
      const hook = await addWebhook(o, { url: hookUrl, events: ['object.created'] });
      expect((await o.dev(`/${o.bucket.id}/files/redirected.txt`, { method: 'PUT', body: 'r' })).status).toBe(201);
      await receiver.waitFor(() => allTo(hook.id).length >= 1, 'the first attempt');
      const deliveries = await deliveryLog(o, hook.id, (rows) => (rows[0]?.attempt_log.length ?? 0) > 0);
      expect(deliveries[0]!.attempt_log[0]).toMatchObject({ outcome: 'failed', response_code: 302 });
      expect(deliveries[0]!.attempt_log[0]!.response_excerpt.length).toBeLessThanOrEqual(1024);
      expect(target.received).toEqual([]);
      await o.dev(`/${o.bucket.id}/webhooks/${hook.id}`, { method: 'DELETE' });
    } finally {
      receiver.answer = () => ({ status: 204 });
      await target.close();
    }
  });

  it('a rotated secret signs beside the new one during the overlap; both verify', async () => {
    const o = await owner();
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created'] });
    const rotated = await json(await o.dev(`/${o.bucket.id}/webhooks/${hook.id}/rotate-secret`, { method: 'POST' }));
    expect(rotated.data.secret).not.toBe(hook.secret);
    expect(rotated.data.previous_secret_until).not.toBeNull();
    expect((await o.dev(`/${o.bucket.id}/files/rotated.txt`, { method: 'PUT', body: 'r' })).status).toBe(201);
    await receiver.waitFor(() => eventsTo(hook.id).length >= 1, 'the event');
    const delivery = deliveredTo(hook.id)[0]!;
    expect(delivery.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => verify(hook.secret, delivery)).not.toThrow();
    expect(() => verify(rotated.data.secret, delivery)).not.toThrow();
  });

  it('keeps secrets sealed in the database (only the shown prefix readable); a secret stored before sealing still signs', async () => {
    const o = await owner();
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created'] });
    const rotated = (await json(await o.dev(`/${o.bucket.id}/webhooks/${hook.id}/rotate-secret`, { method: 'POST' }))).data as { secret: string };
    const row = await server.app.pail.db.selectFrom('webhooks').select(['secret', 'previous_secret']).where('id', '=', hook.id).executeTakeFirstOrThrow();
    for (const [stored, secret] of [
      [row.secret, rotated.secret],
      [row.previous_secret!, hook.secret],
    ] as const) {
      expect(stored.startsWith(secret.slice(0, 10))).toBe(true);
      expect(stored).not.toContain(secret.slice(10, 30));
    }
    const listed = (await json(await o.dev(`/${o.bucket.id}/webhooks/${hook.id}`))).data as { secret_prefix: string };
    expect(listed.secret_prefix).toBe(rotated.secret.slice(0, 10));
    // A secret as an earlier version stored it, whole: read as it is.
    await server.app.pail.db
      .updateTable('webhooks')
      .set({ secret: hook.secret, previous_secret: null, previous_secret_until: null })
      .where('id', '=', hook.id)
      .execute();
    expect((await o.dev(`/${o.bucket.id}/files/legacy.txt`, { method: 'PUT', body: 'l' })).status).toBe(201);
    await receiver.waitFor(() => eventsTo(hook.id).length >= 1, 'the event');
    expect(() => verify(hook.secret, deliveredTo(hook.id)[0]!)).not.toThrow();
  });

  it('prunes delivered events past WEBHOOK_KEEP_DELIVERED_DAYS with their attempts; pending ones stay, whatever their age', async () => {
    const o = await owner();
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created'] });
    for (const name of ['old-1.txt', 'old-2.txt', 'new.txt'])
      expect((await o.dev(`/${o.bucket.id}/files/${name}`, { method: 'PUT', body: 'x' })).status).toBe(201);
    await receiver.waitFor(() => eventsTo(hook.id).length >= 3, '3 events');
    const db = server.app.pail.db;
    // Recorded as delivered once the answer is back (the receiver counts a request before it answers).
    const delivered = () => db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.id).where('state', '=', 'delivered').execute();
    for (let i = 0; i < 400 && (await delivered()).length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    const rows = await db.selectFrom('webhook_deliveries').select(['id', 'object_key']).where('webhook_id', '=', hook.id).orderBy('id').execute();
    const old = rows.filter((row) => row.object_key!.startsWith('old-')).map((row) => row.id);
    const longAgo = new Date(Date.now() - 40 * 86_400_000).toISOString();
    await db.updateTable('webhook_deliveries').set({ delivered_at: longAgo }).where('id', 'in', old).execute();
    // An event still pending from long ago (its endpoint paused): never pruned.
    expect((await o.dev(`/${o.bucket.id}/webhooks/${hook.id}`, { method: 'PATCH', body: JSON.stringify({ enabled: false }) })).status).toBe(200);
    await db
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: hook.id,
        message_id: 'msg_old_pending',
        event: 'object.created',
        event_name: 's3:ObjectCreated:Put',
        bucket_name: o.bucket.name,
        object_key: 'waiting.txt',
        size: 1,
        etag: 'e',
        principal: null,
        event_time: longAgo,
        state: 'pending',
      })
      .execute();

    expect(await pruneDeliveredEvents(db, 30)).toBeGreaterThanOrEqual(2);
    const left = await db.selectFrom('webhook_deliveries').select(['object_key', 'state']).where('webhook_id', '=', hook.id).orderBy('id').execute();
    expect(left).toEqual([
      { object_key: 'new.txt', state: 'delivered' },
      { object_key: 'waiting.txt', state: 'pending' },
    ]);
    expect(await db.selectFrom('webhook_attempts').select('id').where('delivery_id', 'in', old).execute()).toEqual([]);
    const listed = (await json(await o.dev(`/${o.bucket.id}/webhooks/${hook.id}/deliveries`))).data as { key: string }[];
    expect(listed.map((delivery) => delivery.key).sort()).toEqual(['new.txt', 'waiting.txt']);
  });

  it('a disabled webhook keeps its events, and delivers them once enabled again', async () => {
    const o = await owner();
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created'] });
    const paused = await o.dev(`/${o.bucket.id}/webhooks/${hook.id}`, { method: 'PATCH', body: JSON.stringify({ enabled: false }) });
    expect((await json(paused)).data.enabled).toBe(false);
    // Disabled: no event is written for it at all.
    expect((await o.dev(`/${o.bucket.id}/files/while-paused.txt`, { method: 'PUT', body: 'p' })).status).toBe(201);
    const enabled = await o.dev(`/${o.bucket.id}/webhooks/${hook.id}`, { method: 'PATCH', body: JSON.stringify({ enabled: true }) });
    expect((await json(enabled)).data).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await o.dev(`/${o.bucket.id}/files/after.txt`, { method: 'PUT', body: 'a' })).status).toBe(201);
    await receiver.waitFor(() => eventsTo(hook.id).length >= 1, 'the event after enabling');
    expect(eventsTo(hook.id).map((r) => r.s3.object!.key)).toEqual(['after.txt']);
    const listed = (await json(await o.dev(`/${o.bucket.id}/webhooks`))).data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).not.toHaveProperty('secret');
  });

  it('an endpoint failing past the retry period is disabled with a reason its owner sees', async () => {
    const short = await startTestServer({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_FOR_SECONDS: '1' },
    });
    const failing = await startReceiver();
    failing.answer = () => ({ status: 503 });
    try {
      const o = await owner(short.url);
      const response = await o.dev(`/${o.bucket.id}/webhooks`, { method: 'POST', body: JSON.stringify({ url: failing.url, events: ['object.created'] }) });
      const hook = (await json(response)).data;
      expect((await o.dev(`/${o.bucket.id}/files/x.txt`, { method: 'PUT', body: 'x' })).status).toBe(201);
      let view = hook;
      for (let i = 0; i < 400 && view.enabled; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        view = (await json(await o.dev(`/${o.bucket.id}/webhooks/${hook.id}`))).data;
      }
      expect(view.enabled).toBe(false);
      expect(view.disabled_reason).toMatch(/failed since .*HTTP 503/);
      expect(view.pending).toBe(1);
    } finally {
      await failing.close();
      await short.close();
    }
  });
});

describe('safety', () => {
  let strict: TestServer;
  let o: Awaited<ReturnType<typeof owner>>;
  beforeAll(async () => {
    strict = await startTestServer();
    o = await owner(strict.url);
  });
  afterAll(async () => strict?.close());

  it.each([
    ['http://127.0.0.1:8080/hook', 'https'],
    ['https://127.0.0.1/hook', 'not a public address'],
    ['https://169.254.169.254/latest/meta-data', 'not a public address'],
    ['https://10.1.2.3/hook', 'not a public address'],
    ['https://192.168.0.10/hook', 'not a public address'],
    ['https://[::1]/hook', 'not a public address'],
    ['https://[fd00::1]/hook', 'not a public address'],
    ['https://[::ffff:127.0.0.1]/hook', 'not a public address'],
    ['https://[::127.0.0.1]/hook', 'not a public address'],
    ['https://0x7f.1/hook', 'not a public address'],
    ['https://[64:ff9b::7f00:1]/hook', 'not a public address'],
    ['https://[2002:7f00:1::]/hook', 'not a public address'],
    ['https://100.64.0.1/hook', 'not a public address'],
    ['https://localhost/hook', 'not a public address'],
    ['not a url', 'not a valid'],
  ])('refuses %s without the allowance', async (url, why) => {
    const response = await o.dev(`/${o.bucket.id}/webhooks`, { method: 'POST', body: JSON.stringify({ url, events: ['object.created'] }) });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain(why);
  });

  it('checks again at delivery: a name that resolves to a private address is refused', async () => {
    await expect(resolveWebhookUrl('https://localhost/hook', false)).rejects.toThrow(/not a public address/);
    await expect(resolveWebhookUrl('https://169.254.169.254/', false)).rejects.toThrow(/not a public address/);
    await expect(resolveWebhookUrl('https://8.8.8.8/hook', false)).resolves.toMatchObject({ address: '8.8.8.8' });
  });

  it('refuses an unknown event, and another owner cannot see the webhooks', async () => {
    const bad = await o.dev(`/${o.bucket.id}/webhooks`, { method: 'POST', body: JSON.stringify({ url: 'https://8.8.8.8/', events: ['object.exploded'] }) });
    expect(bad.status).toBe(400);
    const stranger = await owner(strict.url);
    expect((await stranger.dev(`/${o.bucket.id}/webhooks`)).status).toBe(404);
  });
});

describe('the audit log', () => {
  it("records who made and revoked keys, buckets, visibility and webhooks, newest first, paged; only the user's own", async () => {
    const o = await owner();
    const hook = await addWebhook(o, { url: receiver.url, events: ['object.created'] });
    await o.dev(`/${o.bucket.id}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'public' }) });
    await o.dev(`/${o.bucket.id}/webhooks/${hook.id}`, { method: 'DELETE' });
    await o.dev(`/${o.bucket.id}`, { method: 'DELETE' });
    const session = { authorization: `Bearer ${o.user.token}` };
    const page = await json(await fetch(`${server.url}/api/audit?limit=3`, { headers: session }));
    expect(page.data.map((e: { action: string }) => e.action)).toEqual(['bucket.deleted', 'webhook.deleted', 'bucket.visibility_changed']);
    expect(page.data[0].actor).toMatch(/^key:\d+$/);
    const rest = await json(await fetch(`${server.url}/api/audit?cursor=${page.next_cursor}`, { headers: session }));
    expect(rest.data.map((e: { action: string }) => e.action)).toEqual(['webhook.created', 'bucket.created', 'key.created']);
    expect(rest.data.at(-1).actor).toMatch(/^session:/);
    expect(rest.next_cursor).toBeNull();
    const viaKey = await json(await fetch(`${server.url}/api/v1/audit`, { headers: { 'x-api-key': o.user.apiKey } }));
    expect(viaKey.data).toHaveLength(6);
    const other: TestUser = await signUp(server.url);
    expect(
      (await json(await fetch(`${server.url}/api/audit`, { headers: { authorization: `Bearer ${other.token}` } }))).data.map(
        (e: { action: string }) => e.action,
      ),
    ).toEqual(['key.created']);
  });
});
