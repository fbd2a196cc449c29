/**
 * Several events in one webhook message (issue 39): the events already
 * pending when a message is formed go together, as S3's Records[], in order
 * and signed; a lone event goes at once, alone; a message's events are fixed
 * at its first attempt, so a retry and a resend carry the same body under the
 * same webhook-id; each event's delivery is still listed on its own.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Migrator, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/db/migrations.js';
import { openSqlite } from '../src/db/sqlite.js';
import { devApi, json, signUp } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { recordOf, recordsOf, startReceiver, verify, type Receiver, type Received } from './helpers/webhook-receiver.js';

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_POLL_MS: '50', WEBHOOK_TIMEOUT_MS: '60000' } });
  receiver = await startReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

interface Delivery {
  id: number;
  key: string;
  status: string;
  attempts: number;
  webhook_id_header: string;
}

/** A bucket with a webhook on object.created to the receiver, and a way to upload into it. */
async function hookedBucket() {
  const user = await signUp(server.url);
  const dev = devApi(server.url, user);
  const created = await dev('', { method: 'POST', body: JSON.stringify({ name: `batches-${randomBytes(4).toString('hex')}` }) });
  const bucket = (await json(created)).data.id as number;
  const made = await dev(`/${bucket}/webhooks`, { method: 'POST', body: JSON.stringify({ url: receiver.url, events: ['object.created'] }) });
  expect(made.status).toBe(201);
  const hook = (await json(made)).data as { id: number; secret: string };
  const put = async (name: string) => expect((await dev(`/${bucket}/files/${name}`, { method: 'PUT', body: name })).status).toBe(201);
  const mine = (r: Received) => recordOf(r).s3.configurationId === `webhook-${hook.id}`;
  const deliveries = async () => (await json(await dev(`/${bucket}/webhooks/${hook.id}/deliveries`))).data as Delivery[];
  return { dev, bucket, hook, put, mine, deliveries };
}

const keysOf = (r: Received) => recordsOf(r).map((record) => record.s3.object!.key);

describe('webhook messages of several events', () => {
  it('sends the events pending together in one message, in order and signed; a lone event goes at once, alone', async () => {
    const { hook, put, mine, deliveries } = await hookedBucket();
    const release = receiver.hold();
    await put('first.txt');
    // The first event went alone, at once: its message is under way (held) while the next ones commit.
    await receiver.waitFor((received) => received.filter(mine).length >= 1, 'the first message');
    const names = Array.from({ length: 10 }, (_, i) => `then-${i}.txt`);
    for (const name of names) await put(name);
    release();
    await receiver.waitFor((received) => received.filter(mine).flatMap(keysOf).length >= 11, 'every event');

    const messages = receiver.received.filter(mine);
    expect(messages.map(keysOf)).toEqual([['first.txt'], names]);
    for (const message of messages) expect(() => verify(hook.secret, message)).not.toThrow();
    const sequencers = messages.flatMap(recordsOf).map((record) => record.s3.object!.sequencer);
    expect([...sequencers].sort()).toEqual(sequencers);
    expect(new Set(messages.flatMap(recordsOf).map((record) => record.eventName))).toEqual(new Set(['s3:ObjectCreated:Put']));

    // Each event is listed on its own, delivered, under the webhook-id of the message that carried it.
    let listed: Delivery[] = [];
    for (let i = 0; i < 200 && listed.filter((d) => d.status === 'delivered').length < 11; i++) {
      listed = await deliveries();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(listed.map((d) => d.key).sort()).toEqual(['first.txt', ...names].sort());
    for (const delivery of listed) {
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(delivery.webhook_id_header).toBe(messages[delivery.key === 'first.txt' ? 0 : 1]!.headers['webhook-id']);
    }
  });

  it('retries a failed message with the same webhook-id and body (events that came meanwhile wait for the next), and a resend sends it as it was', async () => {
    const { hook, put, mine, deliveries, dev, bucket } = await hookedBucket();
    const release = receiver.hold();
    await put('first.txt');
    await receiver.waitFor((received) => received.filter(mine).length >= 1, 'the first message');
    const names = Array.from({ length: 5 }, (_, i) => `batch-${i}.txt`);
    for (const name of names) await put(name);
    // The message of five fails until an event has committed after its first attempt.
    let failing = true;
    receiver.answer = (request) => (mine(request) && recordsOf(request).length > 1 && failing ? { status: 503, body: 'busy' } : { status: 204 });
    release();
    try {
      const failures = () => receiver.received.filter((r) => mine(r) && r.status === 503).length;
      await receiver.waitFor(() => failures() >= 1, 'a failed attempt');
      await put('late.txt');
      const seen = failures();
      await receiver.waitFor(() => failures() > seen, 'a retry after the late event committed');
      failing = false;
      await receiver.waitFor((received) => received.filter(mine).flatMap(keysOf).includes('late.txt'), 'the late event');
    } finally {
      receiver.answer = () => ({ status: 204 });
    }

    const batch = receiver.received.filter((r) => mine(r) && keysOf(r).includes('batch-0.txt'));
    expect(batch.length).toBeGreaterThanOrEqual(3);
    expect(batch.map((r) => r.status).at(-1)).toBe(204);
    for (const attempt of batch) {
      expect(attempt.headers['webhook-id']).toBe(batch[0]!.headers['webhook-id']);
      expect(attempt.body).toBe(batch[0]!.body);
      expect(() => verify(hook.secret, attempt)).not.toThrow();
    }
    expect(keysOf(batch[0]!)).toEqual(names);
    // In order, each event once among the messages answered 2xx.
    const delivered = receiver.delivered().filter(mine);
    expect(delivered.flatMap(keysOf)).toEqual(['first.txt', ...names, 'late.txt']);

    let listed: Delivery[] = [];
    for (let i = 0; i < 200 && !listed.some((d) => d.key === 'late.txt' && d.status === 'delivered'); i++) {
      listed = await deliveries();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    for (const name of names) {
      expect(listed.find((d) => d.key === name)).toMatchObject({
        status: 'delivered',
        attempts: batch.length,
        webhook_id_header: batch[0]!.headers['webhook-id'],
      });
    }

    // A resend of one of its events sends the whole message again, as it was.
    const before = receiver.received.filter(mine).length;
    const third = listed.find((d) => d.key === 'batch-2.txt')!;
    expect((await dev(`/${bucket}/webhooks/${hook.id}/deliveries/${third.id}/resend`, { method: 'POST' })).status).toBe(202);
    await receiver.waitFor((received) => received.filter(mine).length > before, 'the resent message');
    const resent = receiver.received.filter(mine).at(-1)!;
    expect(resent.headers['webhook-id']).toBe(batch[0]!.headers['webhook-id']);
    expect(resent.body).toBe(batch[0]!.body);
    expect(() => verify(hook.secret, resent)).not.toThrow();
  });

  it('an endpoint that takes a message and fails the next in one drain is failing from then, not since its old failure', async () => {
    const { hook, put, mine, dev, bucket } = await hookedBucket();
    const db = server.app.pail.db;
    // Held back while 101 events commit, so that one drain sends them as two messages (100 and 1).
    await db.updateTable('webhooks').set({ next_attempt_at: '9999-01-01T00:00:00.000Z' }).where('id', '=', hook.id).execute();
    const names = Array.from({ length: 101 }, (_, i) => `n-${String(i).padStart(3, '0')}.txt`);
    for (const name of names) await put(name);
    // Failing for years, as far as its row says: the next failure alone, counted from then, would disable it.
    receiver.answer = (request) => (mine(request) && recordsOf(request).length === 1 ? { status: 500 } : { status: 204 });
    try {
      await db.updateTable('webhooks').set({ next_attempt_at: null, failing_since: '2000-01-01T00:00:00.000Z' }).where('id', '=', hook.id).execute();
      await receiver.waitFor((received) => received.some((r) => mine(r) && r.status === 500), 'the second message failing');
      const webhook = async () => (await json(await dev(`/${bucket}/webhooks/${hook.id}`))).data as { enabled: boolean; disabled_reason: string | null };
      // Its first message got through in the same drain: still enabled, and the last event still to come.
      expect(await webhook()).toMatchObject({ enabled: true, disabled_reason: null });
      receiver.answer = () => ({ status: 204 });
      await receiver.waitFor((received) => received.some((r) => mine(r) && r.status === 204 && keysOf(r).includes('n-100.txt')), 'the last event');
      expect((await webhook()).enabled).toBe(true);
    } finally {
      receiver.answer = () => ({ status: 204 });
    }
  });
});

describe('the 0027 migration', () => {
  it('makes each delivery already in the outbox a message of its own: one sent alone under its id never gains events', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-batches-'));
    const database = openSqlite(path.join(dir, 'pail.db'));
    try {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the schema as it was at 0026, before the column existed
      const db = database.db as unknown as Kysely<any>;
      const migrator = new Migrator({ db, provider: migrationProvider('sqlite') });
      expect((await migrator.migrateTo('0026_delivery_pruning')).error).toBeUndefined();
      const at = '2026-01-01T00:00:00.000Z';
      for (const [i, state] of ['pending', 'pending', 'delivered'].entries()) {
        await db
          .insertInto('webhook_deliveries')
          .values({
            webhook_id: 1,
            message_id: `msg_${i}`,
            event: 'object.created',
            event_name: 'ObjectCreated:Put',
            bucket_name: 'b',
            event_time: at,
            state,
            attempts: i === 0 ? 3 : 0,
          })
          .execute();
      }
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const rows: { id: number; message_id: string; message_last_id: number | null }[] = await db
        .selectFrom('webhook_deliveries')
        .select(['id', 'message_id', 'message_last_id'])
        .orderBy('id')
        .execute();
      expect(rows.map((row) => [row.message_id, row.message_last_id === row.id])).toEqual([
        ['msg_0', true],
        ['msg_1', true],
        ['msg_2', true],
      ]);
    } finally {
      await database.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
