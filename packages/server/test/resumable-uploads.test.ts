/**
 * Resumable uploads (decisions.md, "Resumable uploads"): tus 1.0 on both
 * APIs, driven by a real client (tus-js-client) and, where the protocol's
 * exact answers matter, by plain requests. Uploads in pieces, a connection cut
 * mid-piece and resumed, termination, expiry, the cap held at creation, the
 * bucket's limits, and the file committed once, counted once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import * as tus from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireResumableUploads } from '../src/domain/resumable-uploads.js';
import { blake3Hex } from './helpers/blake3.js';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const KiB = 1024;
const MiB = 1024 * KiB;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { PLAN_FREE_STORAGE_BYTES: String(20 * MiB) } });
});
afterAll(() => server?.close());

async function setUp(limits: Record<string, unknown> = {}) {
  const user = await signUp(server.url);
  const dev = devApi(server.url, user);
  const created = await dev('', { method: 'POST', body: JSON.stringify({ name: `tus-${randomBytes(4).toString('hex')}`, ...limits }) });
  const bucket = (await json(created)).data as { id: number; name: string };
  return { user, dev, bucket, endpoint: `${server.url}/api/v1/buckets/${bucket.id}/uploads` };
}

/** A whole upload with tus-js-client; resolves with its url. */
function tusUpload(
  endpoint: string,
  body: Buffer,
  options: Partial<tus.UploadOptions> & { headers?: Record<string, string> } = {},
): Promise<{ url: string; upload: tus.Upload }> {
  return new Promise((resolve, reject) => {
    const upload: tus.Upload = new tus.Upload(body, {
      endpoint,
      metadata: { filename: 'file.bin', contentType: 'application/octet-stream' },
      retryDelays: [],
      ...options,
      onSuccess: () => resolve({ url: upload.url!, upload }),
      onError: reject,
    });
    upload.start();
  });
}

const md5 = (bytes: Buffer | Uint8Array) => createHash('md5').update(bytes).digest('hex');

async function usedBytes(user: TestUser): Promise<number> {
  return (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data.storage_used_bytes;
}

const TUS = { 'tus-resumable': '1.0.0' };
const metadataHeader = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([name, value]) => `${name} ${Buffer.from(value).toString('base64')}`)
    .join(',');

/** Creates an upload with a plain POST; returns its url. */
async function create(endpoint: string, user: TestUser, length: number, fields: Record<string, string> = { filename: 'raw.bin' }): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: { ...TUS, 'x-api-key': user.apiKey, 'upload-length': String(length), 'upload-metadata': metadataHeader(fields) },
  });
}

const locationOf = (created: Response, endpoint: string) => new URL(created.headers.get('location')!, endpoint).href;

const patch = (url: string, user: TestUser, offset: number, body: Buffer) =>
  fetch(url, {
    method: 'PATCH',
    headers: { ...TUS, 'x-api-key': user.apiKey, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
    body: body as BodyInit,
  });

const head = (url: string, user: TestUser) => fetch(url, { method: 'HEAD', headers: { ...TUS, 'x-api-key': user.apiKey } });

describe('tus uploads with tus-js-client', () => {
  it('uploads in pieces on the Developer API: the file appears once, whole, counted once; the upload is then gone', async () => {
    const { user, dev, bucket, endpoint } = await setUp();
    const body = randomBytes(300 * KiB + 7);
    let progressed = 0;
    const { url } = await tusUpload(endpoint, body, {
      chunkSize: 64 * KiB,
      headers: { 'x-api-key': user.apiKey },
      metadata: { filename: 'docs/report.bin', contentType: 'application/x-report' },
      onProgress: (sent) => (progressed = sent),
    });
    expect(progressed).toBe(body.length);
    expect(url).toMatch(new RegExp(`^${server.url}/api/v1/buckets/${bucket.id}/uploads/[0-9a-f]{32}$`));
    // (The server answers a relative Location, which the client resolves against the endpoint.)
    const got = await dev(`/${bucket.id}/files/docs/report.bin`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/x-report');
    // The Pail API's ETag, as for any upload: the content's BLAKE3 (taken as the pieces arrived).
    expect(got.headers.get('etag')).toBe(`"${await blake3Hex(body)}"`);
    expect(md5(Buffer.from(await got.arrayBuffer()))).toBe(md5(body));
    expect(await usedBytes(user)).toBe(body.length);
    const buckets = (await json(await dev(''))).data as { id: number; object_count: number; total_bytes: number }[];
    expect(buckets.find((b) => b.id === bucket.id)).toMatchObject({ object_count: 1, total_bytes: body.length });
    expect((await head(url, user)).status).toBe(404);
  });

  it('works on the Client API with a session token, creation-with-upload carrying the first bytes', async () => {
    const { user, bucket } = await setUp();
    const body = randomBytes(100 * KiB);
    await tusUpload(`${server.url}/api/buckets/${bucket.id}/uploads`, body, {
      uploadDataDuringCreation: true,
      chunkSize: 40 * KiB,
      headers: { authorization: `Bearer ${user.token}` },
      metadata: { filename: 'client.bin' },
    });
    const got = await fetch(`${server.url}/api/buckets/${bucket.id}/files/client.bin`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(md5(Buffer.from(await got.arrayBuffer()))).toBe(md5(body));
  });

  it('a connection cut mid-piece is resumed from what the server kept, and the file is whole', async () => {
    const { user, dev, bucket } = await setUp();
    const proxy = await cuttingProxy(new URL(server.url).port, 700 * KiB);
    try {
      const body = randomBytes(2 * MiB);
      await tusUpload(`http://127.0.0.1:${proxy.port}/api/v1/buckets/${bucket.id}/uploads`, body, {
        chunkSize: 1 * MiB,
        retryDelays: [50, 100, 200, 400],
        headers: { 'x-api-key': user.apiKey },
        metadata: { filename: 'cut.bin' },
      });
      expect(proxy.cuts()).toBeGreaterThan(0);
      const response = await dev(`/${bucket.id}/files/cut.bin`);
      expect(response.headers.get('etag')).toBe(`"${await blake3Hex(body)}"`);
      const got = Buffer.from(await response.arrayBuffer());
      expect(got.length).toBe(body.length);
      expect(md5(got)).toBe(md5(body));
      expect(await usedBytes(user)).toBe(body.length);
    } finally {
      await proxy.close();
    }
  });
});

describe('the protocol, request by request', () => {
  it('POST answers 201 with Location, HEAD the offset and length, PATCH at the wrong offset 409, DELETE ends it', async () => {
    const { user, dev, bucket, endpoint } = await setUp();
    const created = await create(endpoint, user, 1000, { filename: 'parts.bin' });
    expect(created.status).toBe(201);
    expect(created.headers.get('tus-resumable')).toBe('1.0.0');
    expect(created.headers.get('location')).toMatch(new RegExp(`^/api/v1/buckets/${bucket.id}/uploads/[0-9a-f]{32}$`));
    const url = new URL(created.headers.get('location')!, endpoint).href;
    const body = randomBytes(1000);
    const first = await patch(url, user, 0, body.subarray(0, 400));
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe('400');
    expect(first.headers.get('upload-expires')).not.toBeNull();
    const state = await head(url, user);
    expect(state.status).toBe(200);
    expect(state.headers.get('upload-offset')).toBe('400');
    expect(state.headers.get('upload-length')).toBe('1000');
    expect(state.headers.get('cache-control')).toBe('no-store');

    const wrong = await patch(url, user, 300, body.subarray(300));
    expect(wrong.status).toBe(409);
    // Not there yet: nothing listed.
    expect((await json(await dev(`/${bucket.id}/files`))).data).toEqual([]);

    const ended = await fetch(url, { method: 'DELETE', headers: { ...TUS, 'x-api-key': user.apiKey } });
    expect(ended.status).toBe(204);
    expect((await head(url, user)).status).toBe(404);
    expect((await patch(url, user, 400, body.subarray(400))).status).toBe(404);
  });

  it("another user's upload is not found; a missing Upload-Length or file name is 400 {error}", async () => {
    const alice = await setUp();
    const bob = await setUp();
    const url = locationOf(await create(alice.endpoint, alice.user, 10), alice.endpoint);
    expect((await head(url, bob.user)).status).toBe(404);
    // Bob's own bucket, Alice's upload id: not his either.
    const underBob = url.replace(`/buckets/${alice.bucket.id}/`, `/buckets/${bob.bucket.id}/`);
    expect((await head(underBob, bob.user)).status).toBe(404);

    const noLength = await fetch(alice.endpoint, {
      method: 'POST',
      headers: { ...TUS, 'x-api-key': alice.user.apiKey, 'upload-defer-length': '1', 'upload-metadata': metadataHeader({ filename: 'x' }) },
    });
    // tus's answer for an extension the server does not have.
    expect(noLength.status).toBe(501);
    expect((await json(noLength)).error).toMatch(/creation-defer-length/);
    const noName = await create(alice.endpoint, alice.user, 10, { contentType: 'text/plain' });
    expect(noName.status).toBe(400);
    expect((await json(noName)).error).toBe('Upload-Metadata must name the file: filename');
    const badName = await create(alice.endpoint, alice.user, 10, { filename: 'a/../b' });
    expect(badName.status).toBe(400);
  });

  it('an upload idle for 24 hours expires: its hold on the cap and its bytes go', async () => {
    const { user, endpoint } = await setUp();
    const url = locationOf(await create(endpoint, user, 15 * MiB, { filename: 'idle.bin' }), endpoint);
    expect((await patch(url, user, 0, randomBytes(1000))).status).toBe(204);
    // 15 of 20 MiB held: another 10 MiB upload does not fit.
    expect((await create(endpoint, user, 10 * MiB)).status).toBe(409);
    const storage = server.app.pail.storage;
    expect(await expireResumableUploads(storage, 24 * 3600)).toBe(0);
    expect(await expireResumableUploads(storage, 24 * 3600, Date.now() + 24 * 3600 * 1000 + 1000)).toBeGreaterThanOrEqual(1);
    expect((await head(url, user)).status).toBe(404);
    expect((await create(endpoint, user, 10 * MiB)).status).toBe(201);
  });
});

describe('the rate budget', () => {
  it("a resumable upload spends one request of the plan's budget, at its creation: its pieces spend none", async () => {
    const limited = await startTestServer({ env: { PLAN_FREE_RATE_LIMIT: '6' } });
    try {
      const user = await signUp(limited.url);
      const created = await fetch(`${limited.url}/api/v1/buckets`, {
        method: 'POST',
        headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'budget' }),
      });
      const bucket = (await json(created)).data.id as number;
      const body = randomBytes(20 * KiB);
      // 20 pieces, far more than the 6 requests a minute the plan allows.
      await tusUpload(`${limited.url}/api/v1/buckets/${bucket}/uploads`, body, {
        chunkSize: KiB,
        headers: { 'x-api-key': user.apiKey },
        metadata: { filename: 'many.bin' },
      });
      const got = await fetch(`${limited.url}/api/v1/buckets/${bucket}/files/many.bin`, { headers: { 'x-api-key': user.apiKey } });
      expect(got.status).toBe(200);
      expect(Number(got.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
      expect(md5(Buffer.from(await got.arrayBuffer()))).toBe(md5(body));
    } finally {
      await limited.close();
    }
  });
});

describe('the cap and the bucket limits', () => {
  it('the declared length is held at creation: two uploads racing into one cap never both fit, and the refusal is 409 naming the cap', async () => {
    const { user, endpoint } = await setUp();
    const attempts = await Promise.all([create(endpoint, user, 12 * MiB), create(endpoint, user, 12 * MiB)]);
    expect(attempts.map((response) => response.status).sort()).toEqual([201, 409]);
    const refused = attempts.find((response) => response.status === 409)!;
    expect((await json(refused)).error).toBe('Storage limit exceeded: the free plan allows 20 MiB');
  });

  it("over the bucket's or the server's file limit is 413 at creation; a declared type the bucket does not take 415", async () => {
    const { user, endpoint } = await setUp({ max_file_bytes: 1000, allowed_types: ['image/*'] });
    expect((await create(endpoint, user, 1001, { filename: 'a.png', contentType: 'image/png' })).status).toBe(413);
    const declared = await create(endpoint, user, 10, { filename: 'a.txt', contentType: 'text/plain' });
    expect(declared.status).toBe(415);
    expect((await json(declared)).error).toBe('File type text/plain is not allowed in this bucket (allowed: image/*)');
  });

  it('the first bytes decide the type: a text file claiming image/png is 415 and its upload ends; a PNG declared generic is stored as image/png', async () => {
    const { user, dev, bucket, endpoint } = await setUp({ allowed_types: ['image/*'] });
    const fake = Buffer.from('not a picture, only words '.repeat(40));
    const url = locationOf(await create(endpoint, user, fake.length, { filename: 'photo.png', contentType: 'image/png' }), endpoint);
    const refused = await patch(url, user, 0, fake);
    expect(refused.status).toBe(415);
    expect((await json(refused)).error).toBe("The file's content is not image/png, as declared");
    expect((await head(url, user)).status).toBe(404);

    const png = pngBytes(5000);
    const pngUrl = locationOf(await create(endpoint, user, png.length, { filename: 'real', contentType: 'application/octet-stream' }), endpoint);
    expect((await patch(pngUrl, user, 0, png)).status).toBe(204);
    const listed = (await json(await dev(`/${bucket.id}/files`))).data as { filename: string; content_type: string }[];
    expect(listed.map((file) => [file.filename, file.content_type])).toEqual([['real', 'image/png']]);
  });
});

function pngBytes(size: number): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(size);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const ihdr = [Buffer.from([0, 0, 0, 13]), Buffer.from('IHDR'), Buffer.alloc(13, 1), Buffer.alloc(4)];
  return Buffer.concat([signature, ...ihdr, length, Buffer.from('IDAT'), randomBytes(size), Buffer.alloc(4)]);
}

/**
 * A proxy in front of the server that cuts the first connections after they
 * have carried `after` bytes upstream (a dropped network mid-request), then
 * lets the rest through.
 */
async function cuttingProxy(port: string, after: number, times = 1): Promise<{ port: number; cuts: () => number; close: () => Promise<void> }> {
  let cuts = 0;
  const sockets = new Set<Socket>();
  const proxy: Server = createServer((client) => {
    const upstream = connect(Number(port), '127.0.0.1');
    sockets.add(client).add(upstream);
    let carried = 0;
    client.on('data', (chunk: Buffer) => {
      carried += chunk.length;
      if (cuts < times && carried > after) {
        cuts += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
    for (const socket of [client, upstream]) {
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: (proxy.address() as { port: number }).port,
    cuts: () => cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.close(() => resolve());
      }),
  };
}
