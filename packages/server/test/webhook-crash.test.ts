/**
 * The outbox across SIGKILL (issue 39): a server killed while uploads commit
 * and while their events are being delivered, then started again on the same
 * data, delivers exactly the changes that committed: one event per file that
 * exists, none for an upload that did not commit, duplicates only with the
 * same webhook-id (and then the same message: a message's events are fixed
 * at its first attempt, so one sent again after the crash carries the same).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp } from './helpers/client.js';
import { spawnServer, type ServerProcess } from './helpers/process.js';
import { recordsOf, startReceiver, type Receiver } from './helpers/webhook-receiver.js';

let dataDir: string;
let receiver: Receiver;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-webhook-crash-'));
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('webhooks across a crash', () => {
  it('a server killed during uploads and deliveries delivers, once restarted, exactly the committed changes', async () => {
    const env = { DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50', WEBHOOK_RETRY_BASE_MS: '50' };
    let server: ServerProcess = await spawnServer(env);
    const user = await signUp(server.url);
    const dev = (url: string, pathname: string, init: RequestInit = {}) =>
      fetch(`${url}/api/v1/buckets${pathname}`, {
        ...init,
        headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json', ...(init.headers as object) },
      });
    const bucket = (await json(await dev(server.url, '', { method: 'POST', body: JSON.stringify({ name: `crash-${randomBytes(3).toString('hex')}` }) }))).data
      .id as number;
    const hook = (
      await json(await dev(server.url, `/${bucket}/webhooks`, { method: 'POST', body: JSON.stringify({ url: receiver.url, events: ['object.created'] }) }))
    ).data;
    // A slow receiver: deliveries are in flight when the process dies.
    receiver.delayMs = 30;

    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, writer) => {
      for (let i = 0; !stop; i++) {
        const name = `w${writer}-${i}.bin`;
        const body = randomBytes(i % 3 === 0 ? 100_000 : 500);
        try {
          const response = await dev(server.url, `/${bucket}/files/${name}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body });
          if (response.status === 201) acknowledged.push(name);
        } catch {
          return;
        }
      }
    });
    await receiver.waitFor(() => receiver.received.length >= 5 && acknowledged.length >= 20, 'uploads and deliveries under way');
    server.child.kill('SIGKILL');
    await server.exited;
    stop = true;
    await Promise.all(writers);

    server = await spawnServer(env);
    try {
      const listed = (await json(await dev(server.url, `/${bucket}/files?limit=1000`))).data.map((file: { filename: string }) => file.filename) as string[];
      for (const name of acknowledged) expect(listed).toContain(name);
      receiver.delayMs = 0;
      const keysOf = (r: { body: string }) => recordsOf(r).map((record) => record.s3.object!.key);
      await receiver.waitFor(() => new Set(receiver.delivered().flatMap(keysOf)).size >= listed.length, 'an event for every file');
      // Nothing more is pending: every committed change was delivered, and nothing else.
      for (let i = 0; i < 200; i++) {
        const view = (await json(await dev(server.url, `/${bucket}/webhooks/${hook.id}`))).data;
        if (view.pending === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Each committed file's event once among the messages first received, and nothing else.
      const delivered = receiver.delivered();
      expect(delivered.flatMap(keysOf).sort()).toEqual([...listed].sort());
      // A repeat is the same message: one body per webhook-id, and no event under two webhook-ids.
      const bodyOf = new Map<string, string>();
      for (const request of receiver.received) {
        const id = request.headers['webhook-id']!;
        expect(bodyOf.get(id) ?? request.body).toBe(request.body);
        bodyOf.set(id, request.body);
      }
      const keys = [...bodyOf.values()].flatMap((body) => keysOf({ body }));
      expect(keys.sort()).toEqual([...listed].sort());
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 120_000);
});
