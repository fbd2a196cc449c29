/**
 * A resumable upload on two server processes sharing PostgreSQL, Redis and
 * S3: begun and half sent through one, resumed and finished through the
 * other, with tus-js-client; the file is whole on both and counted once. And
 * one writer at a time across them: a PATCH through one that went quiet is
 * ended by a HEAD through the other, which reports what the first kept.
 * Needs PAIL_TEST_BACKEND=scaled (the scaled project).
 */
import { createHash, randomBytes } from 'node:crypto';
import * as tus from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendKind, scaledBackendEnv, type BackendEnv } from '../helpers/backends.js';
import { json, signUp } from '../helpers/client.js';
import { eventually, spawnServer, type ServerProcess } from './instances.js';

const MiB = 1024 * 1024;

let backend: BackendEnv;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  if (backendKind() !== 'scaled') throw new Error('resumable-two-instances.test.ts needs PAIL_TEST_BACKEND=scaled (run by the scaled project)');
  backend = await scaledBackendEnv();
  const shared = {
    ...backend.env,
    SESSION_SECRET: randomBytes(32).toString('hex'),
    PLAN_FREE_RATE_LIMIT: '100000',
    CLIENT_RATE_LIMIT: '100000',
    SIGNUP_RATE_LIMIT: '100000',
  };
  // One after the other: the first migrates the fresh schema.
  a = await spawnServer(shared);
  try {
    b = await spawnServer(shared);
  } catch (error) {
    await a.stop();
    throw error;
  }
}, 90_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await backend?.cleanup();
});

/** Waits (up to 10 s) until a request holds upload `id`'s writer lease: the PATCH is in and writing. */
async function untilLeased(id: string): Promise<void> {
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: backend.env.DATABASE_URL });
  await db.connect();
  try {
    const leased = async () => (await db.query<{ writer: string | null }>('select writer from resumable_uploads where id = $1', [id])).rows[0]?.writer != null;
    await eventually(leased, 10_000, `a writer lease on upload ${id}`);
  } finally {
    await db.end();
  }
}

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

describe('a resumable upload on two instances', () => {
  it('begun and half sent through A, resumed through B from the offset A kept: whole on both, counted once', async () => {
    const user = await signUp(a.url);
    const created = await fetch(`${a.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `tus-${randomBytes(3).toString('hex')}` }),
    });
    const bucket = (await json(created)).data.id as number;
    const body = randomBytes(7 * MiB + 123);

    let uploadUrl = '';
    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(body, {
        endpoint: `${a.url}/api/v1/buckets/${bucket}/uploads`,
        chunkSize: 2 * MiB,
        retryDelays: [],
        headers: { 'x-api-key': user.apiKey },
        metadata: { filename: 'shared.bin', contentType: 'application/x-shared' },
        onChunkComplete: (_size, sent) => {
          if (sent >= 4 * MiB) {
            uploadUrl = upload.url!;
            void upload.abort().then(resolve, reject);
          }
        },
        onError: reject,
      });
      upload.start();
    });

    const onB = `${b.url}${new URL(uploadUrl).pathname}`;
    const state = await fetch(onB, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0', 'x-api-key': user.apiKey } });
    expect(state.headers.get('upload-offset')).toBe(String(4 * MiB));
    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(body, {
        endpoint: `${b.url}/api/v1/buckets/${bucket}/uploads`,
        uploadUrl: onB,
        chunkSize: 2 * MiB,
        retryDelays: [],
        headers: { 'x-api-key': user.apiKey },
        onSuccess: () => resolve(),
        onError: reject,
      });
      upload.start();
    });

    for (const instance of [a, b]) {
      const got = await fetch(`${instance.url}/api/v1/buckets/${bucket}/files/shared.bin`, { headers: { 'x-api-key': user.apiKey } });
      expect(got.headers.get('content-type')).toBe('application/x-shared');
      expect(md5(new Uint8Array(await got.arrayBuffer()))).toBe(md5(body));
    }
    const me = await json(await fetch(`${a.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data.storage_used_bytes).toBe(body.length);
  }, 90_000);

  it('a PATCH through A whose client went quiet is ended by a HEAD through B, which reports the bytes A kept; B finishes from there', async () => {
    const user = await signUp(a.url);
    const created = await fetch(`${a.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `tus-${randomBytes(3).toString('hex')}` }),
    });
    const bucket = (await json(created)).data.id as number;
    const body = randomBytes(1_000_000);
    const tusHeaders = { 'tus-resumable': '1.0.0', 'x-api-key': user.apiKey };
    const made = await fetch(`${a.url}/api/v1/buckets/${bucket}/uploads`, {
      method: 'POST',
      headers: { ...tusHeaders, 'upload-length': String(body.length), 'upload-metadata': `filename ${Buffer.from('quiet.bin').toString('base64')}` },
    });
    const path = made.headers.get('location')!;
    // Half the bytes, then silence: the connection stays open, as one whose network went away.
    let quiet!: ReadableStreamDefaultController<Uint8Array>;
    const stalled = fetch(`${a.url}${path}`, {
      method: 'PATCH',
      headers: { ...tusHeaders, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', 'content-length': String(body.length) },
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          quiet = controller;
          controller.enqueue(body.subarray(0, 500_000));
        },
      }),
      duplex: 'half',
    } as RequestInit).then(
      (r) => r.status,
      () => 'cut' as const,
    );
    // Gone quiet once A writes what it sent (on a loaded machine A may take a while to let the PATCH in).
    await untilLeased(path.split('/').pop()!);
    const state = await fetch(`${b.url}${path}`, { method: 'HEAD', headers: tusHeaders });
    expect(state.status).toBe(200);
    expect(state.headers.get('upload-offset')).toBe('500000');
    // A's request was ended: its client, were it to speak again, is too late.
    expect(await stalled).toBe('cut');
    quiet.error(new Error('gone'));
    const rest = await fetch(`${b.url}${path}`, {
      method: 'PATCH',
      headers: { ...tusHeaders, 'upload-offset': '500000', 'content-type': 'application/offset+octet-stream' },
      body: body.subarray(500_000),
    });
    expect(rest.status).toBe(204);
    for (const instance of [a, b]) {
      const got = await fetch(`${instance.url}/api/v1/buckets/${bucket}/files/quiet.bin`, { headers: { 'x-api-key': user.apiKey } });
      expect(md5(new Uint8Array(await got.arrayBuffer()))).toBe(md5(body));
    }
    const me = await json(await fetch(`${a.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data.storage_used_bytes).toBe(body.length);
  }, 90_000);

  it('two PATCHes of different bytes at once, through A and through B: the file is one of them, never a mix', async () => {
    const user = await signUp(a.url);
    const created = await fetch(`${a.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `tus-${randomBytes(3).toString('hex')}` }),
    });
    const bucket = (await json(created)).data.id as number;
    const first = randomBytes(1_000_000);
    const second = randomBytes(1_000_000);
    const tusHeaders = { 'tus-resumable': '1.0.0', 'x-api-key': user.apiKey };
    const made = await fetch(`${a.url}/api/v1/buckets/${bucket}/uploads`, {
      method: 'POST',
      headers: { ...tusHeaders, 'upload-length': String(first.length), 'upload-metadata': `filename ${Buffer.from('both.bin').toString('base64')}` },
    });
    const path = made.headers.get('location')!;
    const patchHeaders = { ...tusHeaders, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' };
    const throughA = fetch(`${a.url}${path}`, {
      method: 'PATCH',
      headers: { ...patchHeaders, 'content-length': String(first.length) },
      body: new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(first.subarray(0, 500_000));
          await new Promise((resolve) => setTimeout(resolve, 1500));
          controller.enqueue(first.subarray(500_000));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit).then(
      (r) => r.status,
      () => 'cut' as const,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const throughB = await fetch(`${b.url}${path}`, { method: 'PATCH', headers: patchHeaders, body: second }).then(
      (r) => r.status,
      () => 'cut' as const,
    );
    expect([await throughA, throughB].filter((status) => status === 204).length).toBeLessThanOrEqual(1);
    const state = await fetch(`${b.url}${path}`, { method: 'HEAD', headers: tusHeaders });
    if (state.status === 200) {
      // Unfinished: what is kept is A's (B came after it began).
      const offset = Number(state.headers.get('upload-offset'));
      const rest = await fetch(`${b.url}${path}`, {
        method: 'PATCH',
        headers: { ...patchHeaders, 'upload-offset': String(offset) },
        body: first.subarray(offset),
      });
      expect(rest.status).toBe(204);
    }
    const got = await fetch(`${b.url}/api/v1/buckets/${bucket}/files/both.bin`, { headers: { 'x-api-key': user.apiKey } });
    expect([md5(first), md5(second)]).toContain(md5(new Uint8Array(await got.arrayBuffer())));
    const me = await json(await fetch(`${a.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data.storage_used_bytes).toBe(first.length);
  }, 90_000);
});
