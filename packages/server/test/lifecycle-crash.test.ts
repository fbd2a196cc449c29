/**
 * Crash safety of the lifecycle sweep (issue 37): a server SIGKILLed while
 * its sweep adds delete markers and removes old versions in a versioned
 * bucket comes back with object_count, total_bytes, noncurrent_bytes and the
 * owner's usage equal to what the versions it lists hold, and every current
 * file whole. One second is a day here (LIFECYCLE_DAY_SECONDS).
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
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-lifecycle-crash-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

const FILES = 120;

describe('the lifecycle sweep cut by a crash', () => {
  it('SIGKILL mid-sweep leaves counts, totals and usage exact, and what is current whole', async () => {
    let server = await spawnServer({ DATA_DIR: dataDir, LIFECYCLE_DAY_SECONDS: '1', LIFECYCLE_INTERVAL_SECONDS: '1' });
    const user = await signUp(server.url);
    const headers = { 'x-api-key': user.apiKey };
    const dev = (base: string, p: string, init: RequestInit = {}) =>
      fetch(`${base}/api/v1/buckets${p}`, {
        ...init,
        headers: { ...headers, 'content-type': typeof init.body === 'string' ? 'application/json' : 'application/octet-stream' },
      });
    const { id } = (await json(await dev(server.url, '', { method: 'POST', body: JSON.stringify({ name: 'crashlc' }) }))).data as { id: number };
    expect((await dev(server.url, `/${id}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    // Two versions of each name (one noncurrent), small and blob-sized.
    const names = Array.from({ length: FILES }, (_, i) => `f/${String(i).padStart(4, '0')}.bin`);
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(
        names
          .slice(i, i + 20)
          .flatMap((name, j) => [
            dev(server.url, `/${id}/files/${name}`, { method: 'PUT', body: randomBytes(j % 2 ? 300 : 70_000) }).then(() =>
              dev(server.url, `/${id}/files/${name}`, { method: 'PUT', body: randomBytes(200) }),
            ),
          ]),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const rules = [{ id: 'all', status: 'enabled', filter: { prefix: 'f/' }, expiration: { days: 1 }, noncurrent_version_expiration: { noncurrent_days: 1 } }];
    expect((await dev(server.url, `/${id}/lifecycle`, { method: 'PUT', body: JSON.stringify({ rules }) })).status).toBe(200);
    // Killed once the sweep is under way: some files expired, not all.
    const started = Date.now();
    for (;;) {
      const { object_count: count } = (await json(await dev(server.url, `/${id}`))).data as { object_count: number };
      if (count < FILES) break;
      if (Date.now() - started > 60_000) throw new Error('the sweep never started');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    server.child.kill('SIGKILL');
    await server.exited;

    // Back without sweeping, to read the books as the crash left them.
    server = await spawnServer({ DATA_DIR: dataDir, LIFECYCLE_DAY_SECONDS: '1', LIFECYCLE_INTERVAL_SECONDS: '3600' });
    try {
      const listed = await expectVersionBooksClose(server.url, user, id, names);
      let current = 0;
      for (const [name, versions] of listed) {
        if (!versions[0]!.is_latest || versions[0]!.is_delete_marker) continue;
        current += 1;
        const read = await dev(server.url, `/${id}/files/${name}`);
        expect((await read.arrayBuffer()).byteLength).toBe(versions[0]!.size);
      }
      expect(current).toBeLessThan(FILES);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 180_000);
});
