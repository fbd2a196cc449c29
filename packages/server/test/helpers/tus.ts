/** Resumable uploads by hand, as the tus protocol's requests: what the tus suites share. */
import { createHash, randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { eventually } from './eventually.js';
import { backendKind } from './backends.js';
import { devApi, json, signUp, type TestUser } from './client.js';
import type { TestServer } from './server.js';

export const TUS = { 'tus-resumable': '1.0.0' };

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A new user with a bucket, and the bucket's tus endpoint. */
export async function tusBucket(server: TestServer, prefix: string) {
  const user = await signUp(server.url);
  const dev = devApi(server.url, user);
  const created = await dev('', { method: 'POST', body: JSON.stringify({ name: `${prefix}-${randomBytes(4).toString('hex')}` }) });
  const bucket = (await json(created)).data as { id: number };
  return { user, dev, bucket, endpoint: `${server.url}/api/v1/buckets/${bucket.id}/uploads` };
}

/** Creates an upload of `length` bytes named `filename`; answers its url. */
export async function createUpload(endpoint: string, user: TestUser, length: number, filename: string): Promise<string> {
  const created = await fetch(endpoint, {
    method: 'POST',
    headers: { ...TUS, 'x-api-key': user.apiKey, 'upload-length': String(length), 'upload-metadata': `filename ${Buffer.from(filename).toString('base64')}` },
  });
  expect(created.status).toBe(201);
  return new URL(created.headers.get('location')!, endpoint).href;
}

export const patchUpload = (url: string, user: TestUser, offset: number, body: Uint8Array) =>
  fetch(url, {
    method: 'PATCH',
    headers: { ...TUS, 'x-api-key': user.apiKey, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
    body: body as BodyInit,
  });

/**
 * Waits (up to 10 s: a loaded machine takes its time to let a request in) until a PATCH is writing upload `id`.
 * On shared backends that request holds the upload's writer lease in its row; one process keeps no lease, and
 * there the request has written its first bytes to the staging file (which an upload is created with, empty).
 */
export async function untilWriting(server: TestServer, id: string): Promise<void> {
  const writing =
    backendKind() === 'scaled'
      ? async () => {
          const row = await server.app.pail.storage.db.selectFrom('resumable_uploads').select('writer').where('id', '=', id).executeTakeFirst();
          return row?.writer != null;
        }
      : async () => ((await stat(path.join(server.dataDir, 'blobs', 'staging', id)).catch(() => null))?.size ?? 0) > 0;
  await eventually(writing, 10_000, `a PATCH writing upload ${id}`);
}
