/** Probes, the OpenAPI document and its page, and what a 500 looks like. */
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('probes', () => {
  it('GET /healthz is 200 {status: "ok"}', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ status: 'ok' });
  });

  it('GET /readyz checks the metadata and blob stores', async () => {
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ status: 'ok' });
  });
});

describe('OpenAPI', () => {
  it('serves an OpenAPI 3.1 document generated from the route schemas', async () => {
    const response = await fetch(`${server.url}/openapi.json`);
    expect(response.status).toBe(200);
    const doc = await json(response);
    expect(doc.openapi).toBe('3.1.0');
    for (const p of ['/api/v1/buckets', '/api/v1/bucket/{id}/files/{filename}', '/api/buckets/{id}/objects', '/api/auth/login', '/api/keys']) {
      expect(Object.keys(doc.paths), p).toContain(p);
    }
    const create = doc.paths['/api/v1/buckets'].post;
    expect(create.tags).toEqual(['Developer API']);
    expect(create.responses['201']).toBeDefined();
    expect(JSON.stringify(create.responses['201'])).toContain('object_count');
  });

  it('has an interactive page at /docs', async () => {
    const response = await fetch(`${server.url}/docs`, { redirect: 'follow' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    expect(await response.text()).toMatch(/swagger/i);
  });
});

describe('server errors', () => {
  // Breaks a blob behind the server's back, which needs the filesystem store.
  it.skipIf(process.env.PAIL_TEST_BACKEND === 'scaled')('a 500 says nothing internal and carries x-request-id', async () => {
    if (server.config.blob.kind !== 'fs') throw new Error('expected the filesystem store');
    const user = await signUp(server.url);
    const headers = { 'x-api-key': user.apiKey };
    const bucket = (
      await json(
        await fetch(`${server.url}/api/v1/buckets`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"name":"broken"}' }),
      )
    ).data.id;
    // Over INLINE_MAX_BYTES (64 KiB), so the bytes are a file in the blob store.
    await fetch(`${server.url}/api/v1/buckets/${bucket}/files/lost.txt`, { method: 'PUT', headers, body: 'b'.repeat(64 * 1024 + 1) });
    const object = (await json(await fetch(`${server.url}/api/v1/buckets/${bucket}/files`, { headers }))).data[0];
    // Lose the blob under the server (disk failure, operator error).
    await unlink(path.join(server.config.blob.root, object.storage_name));
    const response = await fetch(`${server.url}/api/v1/buckets/${bucket}/files/lost.txt`, { headers });
    expect(response.status).toBe(500);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = await json(response);
    expect(body).toEqual({ error: 'Internal server error', code: 'InternalError' });
  });
});

describe('dashboard', () => {
  it("is never framed by another site: every page carries a Content-Security-Policy with frame-ancestors 'none'", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-dashboard-'));
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>Pail</title>');
    const withDashboard = await startTestServer({ env: { DASHBOARD_DIR: dir } });
    try {
      for (const page of ['/', '/index.html', '/buckets/7']) {
        const response = await fetch(`${withDashboard.url}${page}`, { headers: { accept: 'text/html' } });
        expect(response.status, page).toBe(200);
        expect(await response.text(), page).toContain('<title>Pail</title>');
        expect(response.headers.get('content-security-policy'), page).toContain("frame-ancestors 'none'");
      }
    } finally {
      await withDashboard.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
