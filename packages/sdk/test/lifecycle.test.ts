/** A bucket's lifecycle rules through the SDK, against a real server: set, get, delete, and the typed errors. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signUp } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { BucketNotFoundError, Pail, ValidationError, type LifecycleRule } from '../src/index.js';

let server: TestServer;
let pail: Pail;

beforeAll(async () => {
  server = await startTestServer();
  pail = new Pail({ baseUrl: server.url, apiKey: (await signUp(server.url)).apiKey });
});
afterAll(async () => {
  await server?.close();
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

it('sets, reads and removes lifecycle rules; null when there are none', async () => {
  const { id } = await pail.createBucket('sdk-lifecycle');
  expect(await pail.getLifecycle(id)).toBeNull();
  const rules: LifecycleRule[] = [
    { id: 'logs', status: 'enabled', filter: { prefix: 'logs/', object_size_greater_than: 0 }, expiration: { days: 30 } },
    { status: 'enabled', abort_incomplete_multipart_upload: { days_after_initiation: 7 } },
  ];
  const kept = await pail.setLifecycle(id, rules);
  expect(kept[0]).toEqual(rules[0]);
  expect(kept[1]).toMatchObject({ ...rules[1], id: expect.any(String) });
  expect(await pail.getLifecycle(id)).toEqual(kept);
  await pail.deleteLifecycle(id);
  expect(await pail.getLifecycle(id)).toBeNull();
  expect(await rejection(pail.setLifecycle(id, [{ status: 'enabled', expiration: { days: 1, expired_object_delete_marker: true } }]))).toBeInstanceOf(
    ValidationError,
  );
  expect(await rejection(pail.getLifecycle(999_999))).toBeInstanceOf(BucketNotFoundError);
});
