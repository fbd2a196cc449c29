/**
 * Webhooks and the audit log through the SDK (issue 39), against a real
 * server and a real receiver: a webhook added, its event delivered and
 * verified with `standardwebhooks`, its deliveries read and one resent, the
 * secret rotated, the audit log paged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { recordOf, startReceiver, verify, type Receiver } from '../../server/test/helpers/webhook-receiver.js';
import { BucketNotFoundError, Pail, ValidationError } from '../src/index.js';

let server: TestServer;
let receiver: Receiver;
let user: TestUser;
let pail: Pail;

beforeAll(async () => {
  server = await startTestServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50' } });
  receiver = await startReceiver();
  user = await signUp(server.url);
  pail = new Pail({ baseUrl: server.url, apiKey: user.apiKey });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

describe('pail.webhooks', () => {
  it('adds a webhook whose deliveries verify, lists its deliveries, resends one, rotates and deletes it', async () => {
    const bucket = await pail.createBucket('sdk-hooks');
    const hook = await pail.webhooks.create(bucket.id, { url: receiver.url, events: ['object.created'] });
    expect(hook.secret).toMatch(/^whsec_/);
    expect(await pail.webhooks.list(bucket.id)).toEqual([expect.objectContaining({ id: hook.id, url: receiver.url, enabled: true })]);
    await pail.uploadFile(bucket.id, 'hello.txt', 'hello');
    await receiver.waitFor((received) => received.length >= 1, 'the event');
    expect(recordOf(receiver.received[0]!)).toMatchObject({ eventName: 's3:ObjectCreated:Put', s3: { object: { key: 'hello.txt', size: 5 } } });
    expect(() => verify(hook.secret, receiver.received[0]!)).not.toThrow();

    // The delivery is recorded once the receiver has answered, which may be after it has the event.
    let deliveries = await pail.webhooks.deliveries(bucket.id, hook.id);
    for (const deadline = Date.now() + 15_000; deliveries[0]?.status !== 'delivered' && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      deliveries = await pail.webhooks.deliveries(bucket.id, hook.id);
    }
    expect(deliveries[0]).toMatchObject({ status: 'delivered', key: 'hello.txt', response_code: 204 });
    await pail.webhooks.resend(bucket.id, hook.id, deliveries[0]!.id);
    await receiver.waitFor((received) => received.length >= 2, 'the resent event');
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);

    const paused = await pail.webhooks.update(bucket.id, hook.id, { enabled: false });
    expect(paused.enabled).toBe(false);
    const rotated = await pail.webhooks.rotateSecret(bucket.id, hook.id);
    expect(rotated.secret).not.toBe(hook.secret);
    await pail.webhooks.delete(bucket.id, hook.id);
    expect(await pail.webhooks.list(bucket.id)).toEqual([]);
    await expect(pail.webhooks.create(bucket.id, { url: 'ftp://example.com', events: ['object.created'] })).rejects.toBeInstanceOf(ValidationError);
    await expect(pail.webhooks.list(999_999)).rejects.toBeInstanceOf(BucketNotFoundError);
  });
});

describe('pail.audit', () => {
  it('pages through the caller’s audit log, newest first', async () => {
    const first = await pail.audit({ limit: 2 });
    expect(first.entries.map((entry) => entry.action)).toEqual(['webhook.deleted', 'webhook.secret_rotated']);
    expect(first.nextCursor).not.toBeNull();
    const all = [];
    for (let cursor: string | undefined; ;) {
      const page = await pail.audit({ limit: 50, ...(cursor ? { cursor } : {}) });
      all.push(...page.entries);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(all.map((entry) => entry.action).reverse()).toEqual([
      'key.created',
      'bucket.created',
      'webhook.created',
      'webhook.updated',
      'webhook.secret_rotated',
      'webhook.deleted',
    ]);
  });
});
