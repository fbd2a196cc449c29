/**
 * What the server keeps on disk is its user's alone: the data directory is
 * 0700; the database, its log, the blobs and the session secret are 0600.
 * Embedded backend only (the files are local).
 */
import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let dataDir: string;
let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  // A data directory that exists already, open to everyone: the server closes it.
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-modes-'));
  await chmod(dataDir, 0o755);
  server = await startTestServer({ dataDir, env: { INLINE_MAX_BYTES: '0' } });
  user = await signUp(server.url);
});
afterAll(async () => {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
});

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.map((entry) => path.join(entry.parentPath, entry.name));
}

describe('file modes', () => {
  it('keeps the data directory 0700 and every file in it 0600', async () => {
    const created = await fetch(`${server.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'modes' }),
    });
    const bucket = ((await created.json()) as { data: { id: number } }).data;
    const put = await fetch(`${server.url}/api/v1/buckets/${bucket.id}/files/secret.bin`, {
      method: 'PUT',
      headers: { 'x-api-key': user.apiKey },
      body: new Uint8Array(100_000),
    });
    expect(put.status).toBe(201);

    expect(await modeOf(dataDir)).toBe(0o700);
    const paths = await filesUnder(dataDir);
    const files: string[] = [];
    for (const entry of paths) {
      const info = await stat(entry);
      if (info.isDirectory()) expect((info.mode & 0o077).toString(8), entry).toBe('0');
      else files.push(entry);
    }
    const names = files.map((file) => path.relative(dataDir, file));
    expect(names).toEqual(expect.arrayContaining(['pail.db', 'pail.db-wal', 'session-secret']));
    expect(names.some((name) => name.startsWith(`blobs${path.sep}modes`))).toBe(true);
    for (const file of files) expect((await modeOf(file)).toString(8), path.relative(dataDir, file)).toBe('600');
  });
});
