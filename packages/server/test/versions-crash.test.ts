/**
 * Crash safety of versioned writes: a server SIGKILLed while overwrites and
 * delete markers race in a versioned bucket comes back with each write whole
 * or absent, and with object_count, total_bytes, noncurrent_bytes and the
 * owner's usage equal to what its versions hold.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp } from './helpers/client.js';
import { spawnServer } from './helpers/process.js';
import { expectVersionBooksClose } from './helpers/version-books.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-versions-crash-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe('versioned writes cut by a crash', () => {
  it('SIGKILL during overwrites and delete markers leaves counts, totals and usage exact', async () => {
    const env = { DATA_DIR: dataDir };
    let server = await spawnServer(env);
    const user = await signUp(server.url);
    const dev = (p: string, init: RequestInit = {}) =>
      fetch(`${server.url}/api/v1/buckets${p}`, {
        ...init,
        headers: { 'x-api-key': user.apiKey, 'content-type': typeof init.body === 'string' ? 'application/json' : 'application/octet-stream' },
      });
    const { id } = (await json(await dev('', { method: 'POST', body: JSON.stringify({ name: 'crashv' }) }))).data as { id: number };
    expect((await dev(`/${id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    const names = ['a.bin', 'b.bin', 'c.bin', 'd.bin'];
    for (const name of names) await dev(`/${id}/files/${name}`, { method: 'PUT', body: randomBytes(1000) });
    // Writes and deletes in flight when the process dies: small (inline) and larger (blob store) versions alike.
    const inFlight = Array.from({ length: 60 }, (_, i) => {
      const name = names[i % names.length]!;
      const request =
        i % 5 === 4
          ? dev(`/${id}/files/${name}`, { method: 'DELETE' })
          : dev(`/${id}/files/${name}`, { method: 'PUT', body: randomBytes(i % 2 ? 500 : 200_000) });
      return request.catch(() => undefined);
    });
    await new Promise((resolve) => setTimeout(resolve, 40));
    server.child.kill('SIGKILL');
    await server.exited;
    await Promise.all(inFlight);

    server = await spawnServer(env);
    try {
      const headers = { 'x-api-key': user.apiKey };
      await expectVersionBooksClose(server.url, user, id, names);
      // Every version still reads whole.
      for (const name of names) {
        const latest = await fetch(`${server.url}/api/v1/buckets/${id}/files/${name}`, { headers });
        if (latest.status === 200) expect((await latest.arrayBuffer()).byteLength).toBe(Number(latest.headers.get('content-length')));
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 60_000);
});
