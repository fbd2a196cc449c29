/**
 * A resumable upload on two server processes sharing PostgreSQL, Redis and
 * S3: begun and half sent through one, resumed and finished through the
 * other, with tus-js-client; the file is whole on both and counted once.
 * Needs PAIL_TEST_BACKEND=scaled (the scaled project).
 */
import { createHash, randomBytes } from 'node:crypto';
import * as tus from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendKind, scaledBackendEnv, type BackendEnv } from '../helpers/backends.js';
import { json, signUp } from '../helpers/client.js';
import { spawnServer, type ServerProcess } from './instances.js';

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
});
