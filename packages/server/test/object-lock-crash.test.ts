/**
 * Crash safety of object lock (issue 38): a server SIGKILLed while
 * retentions are extended and legal holds put on comes back with each file's
 * retention either the one it had or one that was sent for it (never another
 * date, never none), its legal hold on or off as one of the requests left
 * it, and every locked version still refused removal.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp } from './helpers/client.js';
import { spawnServer } from './helpers/process.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-lock-crash-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

const DAY = 86_400_000;
const dayAt = (days: number) => new Date(Date.UTC(2031, 0, 1) + days * DAY).toISOString();

describe('object lock cut by a crash', () => {
  it('SIGKILL while retentions are extended and legal holds set leaves each one old or new, and every lock holding', async () => {
    const env = { DATA_DIR: dataDir };
    let server = await spawnServer(env);
    const user = await signUp(server.url);
    const headers = { 'x-api-key': user.apiKey };
    const dev = (base: string, p: string, init: RequestInit = {}) =>
      fetch(`${base}/api/v1/buckets${p}`, {
        ...init,
        headers: { ...headers, 'content-type': typeof init.body === 'string' ? 'application/json' : 'application/octet-stream' },
      });
    const created = await dev(server.url, '', { method: 'POST', body: JSON.stringify({ name: 'crashlock', object_lock: true }) });
    expect(created.status).toBe(201);
    const { id } = (await json(created)).data as { id: number };
    const names = ['a.bin', 'b.bin', 'c.bin', 'd.bin'];
    for (const name of names) {
      expect((await dev(server.url, `/${id}/files/${name}`, { method: 'PUT', body: Buffer.alloc(100, 1) })).status).toBe(201);
      const first = await dev(server.url, `/${id}/retention/${name}`, { method: 'PUT', body: JSON.stringify({ mode: 'COMPLIANCE', retain_until: dayAt(0) }) });
      expect(first.status).toBe(200);
    }
    // Each file's retention moved later and later, and its legal hold put on, all at once when the process dies.
    const sent = new Map<string, string[]>(names.map((name) => [name, [dayAt(0)]]));
    const url = server.url;
    const inFlight = Array.from({ length: 80 }, (_, i) => {
      const name = names[i % names.length]!;
      if (i % 10 === 9) return dev(url, `/${id}/legal-hold/${name}`, { method: 'PUT', body: JSON.stringify({ legal_hold: true }) }).catch(() => undefined);
      const until = dayAt(1 + i);
      sent.get(name)!.push(until);
      return dev(url, `/${id}/retention/${name}`, { method: 'PUT', body: JSON.stringify({ mode: 'COMPLIANCE', retain_until: until }) }).catch(() => undefined);
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    server.child.kill('SIGKILL');
    await server.exited;
    await Promise.all(inFlight);

    server = await spawnServer(env);
    try {
      for (const name of names) {
        const details = (await json(await fetch(`${server.url}/api/v1/buckets/${id}/details/${name}`, { headers }))).data as {
          retention: { mode: string; retain_until: string } | null;
          legal_hold: boolean;
        };
        expect(details.retention?.mode).toBe('COMPLIANCE');
        expect(sent.get(name)).toContain(details.retention!.retain_until);
        expect(typeof details.legal_hold).toBe('boolean');
        // Whatever the crash left, the version is still locked: removing it for good is refused with its date.
        const versions = (await json(await fetch(`${server.url}/api/v1/buckets/${id}/files/${name}/versions`, { headers }))).data as { version_id: string }[];
        expect(versions).toHaveLength(1);
        const removal = await fetch(`${server.url}/api/v1/buckets/${id}/files/${name}?version_id=${versions[0]!.version_id}`, { method: 'DELETE', headers });
        expect(removal.status).toBe(403);
        expect((await json(removal)).code).toBe('ObjectLocked');
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 120_000);
});
