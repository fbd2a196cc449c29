/**
 * Two instances on one PostgreSQL (issue 39): uploads through both, and each
 * event is delivered once between them (an endpoint is leased to one
 * instance at a time), in order. Needs PAIL_TEST_BACKEND=scaled.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendKind, scaledBackendEnv, type BackendEnv } from '../helpers/backends.js';
import { json, signUp } from '../helpers/client.js';
import { recordsOf, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { bootApp, type InProcessApp } from './instances.js';

let backend: BackendEnv;
let dataDir: string;
let receiver: Receiver;
const instances: InProcessApp[] = [];

beforeAll(async () => {
  if (backendKind() !== 'scaled') throw new Error('webhooks-two-instances.test.ts needs PAIL_TEST_BACKEND=scaled (run by the scaled project)');
  backend = await scaledBackendEnv();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-webhooks-two-'));
  receiver = await startReceiver();
  const env = { ...backend.env, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_BASE_MS: '50', S3_API_PORT: 'off' };
  instances.push(await bootApp(env, dataDir), await bootApp(env, dataDir));
});
afterAll(async () => {
  for (const instance of instances) await instance.close().catch(() => {});
  await receiver?.close();
  await backend?.cleanup();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('webhooks on two instances', () => {
  it('deliver each event once between them, in order', async () => {
    const [a, b] = instances as [InProcessApp, InProcessApp];
    const user = await signUp(a.url);
    const dev = (url: string, pathname: string, init: RequestInit = {}) =>
      fetch(`${url}/api/v1/buckets${pathname}`, {
        ...init,
        headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json', ...(init.headers as object) },
      });
    const bucket = (await json(await dev(a.url, '', { method: 'POST', body: JSON.stringify({ name: `two-${randomBytes(3).toString('hex')}` }) }))).data
      .id as number;
    const created = await dev(b.url, `/${bucket}/webhooks`, { method: 'POST', body: JSON.stringify({ url: receiver.url, events: ['object.created'] }) });
    expect(created.status).toBe(201);
    receiver.delayMs = 5;
    const names = Array.from({ length: 60 }, (_, i) => `f-${String(i).padStart(3, '0')}.txt`);
    for (const [i, name] of names.entries()) {
      const response = await dev(i % 2 === 0 ? a.url : b.url, `/${bucket}/files/${name}`, { method: 'PUT', body: name });
      expect(response.status).toBe(201);
    }
    // A message may carry several events: counted by the records they carry.
    await receiver.waitFor(() => receiver.delivered().flatMap(recordsOf).length >= names.length, 'every event');
    expect(
      receiver
        .delivered()
        .flatMap(recordsOf)
        .map((r) => r.s3.object!.key),
    ).toEqual(names);
    // Each message once between the two instances.
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
  }, 120_000);
});
