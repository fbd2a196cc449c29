/**
 * Every upload door × every rule, one table (issue 33): the Developer API's
 * PUT and multipart POST, the Client API's PUT, a signed-url PUT, tus, and
 * the S3 API's PutObject, POST Object, UploadPart, UploadPartCopy and
 * CopyObject each meet the storage cap beside kept parts and resumable
 * holdings, the per-file cap, a bucket's types, a key's limits, the rate
 * budget, a body refused mid-stream, a connection cut at a random byte and a
 * second writer at once, and give the same outcome; afterwards the books
 * close (counts equal listings, no blob byte uncounted) and the server lives.
 */
import { CreateMultipartUploadCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, signUp, type TestUser } from './helpers/client.js';
import { cuttingProxy, type CuttingProxy } from './helpers/cutting-proxy.js';
import { createTusUpload, DOORS, placeSource, s3ClientOf, type Door, type DoorWorld, type Outcome, type Target } from './helpers/doors.js';
import { expectBooksClose } from './helpers/ledger.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const CAP = 1_000_000;
/** Kept in the metadata database (under INLINE_MAX_BYTES), and stored as a blob. */
const SIZES = { inline: 40_000, blob: 200_000 };
const RATE = 20;

let server: TestServer;
let rated: TestServer;
let pailProxy: CuttingProxy;
let s3Proxy: CuttingProxy;

beforeAll(async () => {
  [server, rated] = await Promise.all([
    startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: String(CAP), MAX_UPLOADS_PER_USER: '100' } }),
    startTestServer({
      s3: true,
      env: { PLAN_FREE_RATE_LIMIT: String(RATE), CLIENT_RATE_LIMIT: String(RATE), SIGNED_URL_RATE_LIMIT: String(RATE), RATE_LIMIT_WINDOW_SECONDS: '600' },
    }),
  ]);
  pailProxy = await cuttingProxy({ host: '127.0.0.1', port: Number(new URL(server.url).port) });
  s3Proxy = await cuttingProxy({ host: '127.0.0.1', port: Number(new URL(server.s3Url!).port) });
});
afterAll(async () => {
  await Promise.all([pailProxy?.close(), s3Proxy?.close()]);
  await Promise.all([server?.close(), rated?.close()]);
});

interface Cell {
  on: TestServer;
  owner: TestUser;
  world: DoorWorld;
  bucket: Target;
  /** Where copy doors' sources live (no limits). */
  sources: Target;
  /** Copy sources placed so far, by their bytes: a body copied again is copied from the same source. */
  placed: Map<Buffer, string>;
}

async function newBucket(on: TestServer, owner: TestUser, limits: Record<string, unknown> = {}): Promise<Target> {
  const name = `d-${randomBytes(5).toString('hex')}`;
  const response = await fetch(`${on.url}/api/v1/buckets`, {
    method: 'POST',
    headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name, ...limits }),
  });
  expect(response.status).toBe(201);
  return { id: (await json(response)).data.id, name };
}

async function cell(on: TestServer, limits: Record<string, unknown> = {}): Promise<Cell> {
  const owner = await signUp(on.url);
  const direct = { url: on.url, s3Url: on.s3Url! };
  return {
    on,
    owner,
    world: { direct, via: direct, user: owner, owner },
    bucket: await newBucket(on, owner, limits),
    sources: await newBucket(on, owner),
    placed: new Map(),
  };
}

/** Uploads `body` through `door` into the cell's bucket; copy doors copy it from a source placed first. */
async function upload(door: Door, c: Cell, key: string, body: Buffer, options: { contentType?: string; streamed?: boolean; world?: DoorWorld } = {}) {
  const world = options.world ?? c.world;
  const source = door.copies ? { bucket: c.sources, key: await sourceOf(c, body, options.contentType) } : undefined;
  return door.upload(world, c.bucket, key, body, { ...options, ...(source ? { source } : {}) });
}

/** The source object a copy door copies `body` from, placed once per cell. */
async function sourceOf(c: Cell, body: Buffer, contentType?: string): Promise<string> {
  let key = c.placed.get(body);
  if (key === undefined) {
    key = `src-${randomBytes(4).toString('hex')}`;
    await placeSource(c.world, c.sources, key, body, contentType);
    c.placed.set(body, key);
  }
  return key;
}

async function download(c: Cell, key: string): Promise<Buffer | null> {
  const response = await fetch(`${c.on.url}/api/v1/buckets/${c.bucket.id}/files/${key}`, { headers: { 'x-api-key': c.owner.apiKey } });
  return response.status === 200 ? Buffer.from(await response.arrayBuffer()) : null;
}

/** Holds `bytes` against the owner's cap: a kept multipart part and a resumable upload. Answers the upload's url, to end it. */
async function hold(c: Cell, bytes: number, resumable: number): Promise<string> {
  const s3 = s3ClientOf(c.on.s3Url!, c.owner);
  const kept = `kept-${randomBytes(4).toString('hex')}`;
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: c.sources.name, Key: kept }));
  await s3.send(new UploadPartCommand({ Bucket: c.sources.name, Key: kept, UploadId, PartNumber: 1, Body: randomBytes(bytes - resumable) }));
  const url = await createTusUpload(c.world, c.sources, 'held.bin', resumable, 'application/octet-stream');
  if (typeof url !== 'string') throw new Error(`holding a resumable upload failed: ${url.detail}`);
  return url;
}

async function alive(on: TestServer) {
  expect((await fetch(`${on.url}/healthz`)).status).toBe(200);
}

function expectOutcome(answer: { outcome: Outcome; detail: string }, expected: Outcome) {
  expect(answer.outcome, answer.detail).toBe(expected);
}

describe.each(DOORS.map((door) => [door.name, door] as const))('%s', (_name, door) => {
  it.each(Object.entries(SIZES))('storage cap beside kept parts and resumable holdings (%s file)', async (_kind, size) => {
    const c = await cell(server);
    const used = door.copies ? size : 0;
    // One byte more than what would let the file in beside them.
    const held = CAP - used - size + 1;
    const resumable = await hold(c, held, Math.min(100_000, held - 1));
    const body = randomBytes(size);
    expectOutcome(await upload(door, c, 'capped.bin', body), 'cap');
    expect(await download(c, 'capped.bin')).toBeNull();
    await expectBooksClose(server, c.owner.id, { held });
    // Ending the resumable upload gives its bytes back: the same file now fits.
    expect((await fetch(`${server.url}${resumable}`, { method: 'DELETE', headers: { 'tus-resumable': '1.0.0', 'x-api-key': c.owner.apiKey } })).status).toBe(
      204,
    );
    expectOutcome(await upload(door, c, 'capped.bin', body), 'stored');
    expect((await download(c, 'capped.bin'))?.equals(body)).toBe(true);
    await alive(server);
  });

  it('the per-file cap of the bucket', async () => {
    const c = await cell(server, { max_file_bytes: SIZES.blob - 1 });
    expectOutcome(await upload(door, c, 'large.bin', randomBytes(SIZES.blob)), 'too-large');
    expect(await download(c, 'large.bin')).toBeNull();
    await expectBooksClose(server, c.owner.id, { held: 0 });
  });

  it("the bucket's types", async () => {
    const c = await cell(server, { allowed_types: ['image/png'] });
    expectOutcome(await upload(door, c, 'notes.txt', Buffer.from('plain text, not a picture\n'.repeat(2000)), { contentType: 'text/plain' }), 'type');
    expect(await download(c, 'notes.txt')).toBeNull();
    await expectBooksClose(server, c.owner.id, { held: 0 });
  });

  it.skipIf(door.credential === 'session')("a key's limits: a read-only key cannot write", async () => {
    const c = await cell(server);
    const made = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'reader', permissions: ['read'] }),
    });
    const key = (await json(made)).data;
    const reader = { ...c.owner, apiKey: key.key, accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key };
    const answer = await upload(door, c, 'denied.bin', randomBytes(SIZES.blob), { world: { ...c.world, user: reader } });
    expectOutcome(answer, 'forbidden');
    expect(await download(c, 'denied.bin')).toBeNull();
    await expectBooksClose(server, c.owner.id, { held: 0 });
  });

  it('the rate budget of the door', async () => {
    const c = await cell(rated);
    const body = randomBytes(SIZES.inline);
    if (door.copies) await sourceOf(c, body);
    await spendBudget(door, c);
    expectOutcome(await upload(door, c, 'late.bin', body), 'rate');
    if (door.credential === 'signed-url') {
      // The link's readers ran out, not its owner: the owner's key still works.
      expect((await fetch(`${rated.url}/api/v1/buckets`, { headers: { 'x-api-key': c.owner.apiKey } })).status).toBe(200);
    }
    await expectBooksClose(rated, c.owner.id, { held: 0 });
  });

  it('a body refused mid-stream (larger than the room left, sent without a length where the door allows)', async () => {
    const c = await cell(server);
    const size = door.copies ? 600_000 : CAP + 100_000;
    expectOutcome(await upload(door, c, 'flood.bin', randomBytes(size), { streamed: true }), 'cap');
    expect(await download(c, 'flood.bin')).toBeNull();
    await expectBooksClose(server, c.owner.id, { held: 0 });
    await alive(server);
  });

  it('a connection cut at a random byte, three times, then the same upload whole', async () => {
    const c = await cell(server);
    const via = { url: pailProxy.url, s3Url: s3Proxy.url };
    const body = randomBytes(SIZES.blob);
    for (let round = 0; round < 3; round++) {
      const at = randomInt(0, SIZES.blob + 600);
      pailProxy.cutNextAfter(at);
      s3Proxy.cutNextAfter(at);
      const answer = await upload(door, c, 'cut.bin', body, { world: { ...c.world, via } });
      expect(['cut', 'stored'], answer.detail).toContain(answer.outcome);
      // A cut point the request never reached stays queued: drop it.
      clearCuts();
      const stored = await download(c, 'cut.bin');
      if (stored) expect(stored.equals(body)).toBe(true);
      await expectBooksClose(server, c.owner.id, { held: 0 });
    }
    expectOutcome(await upload(door, c, 'cut.bin', body), 'stored');
    expect((await download(c, 'cut.bin'))?.equals(body)).toBe(true);
    await expectBooksClose(server, c.owner.id, { held: 0 });
    await alive(server);
  });

  it('two writers of one name at once: one whole file, counted once', async () => {
    const c = await cell(server);
    const [first, second] = [randomBytes(SIZES.blob), randomBytes(SIZES.blob)];
    const answers = await Promise.all([upload(door, c, 'both.bin', first), upload(door, c, 'both.bin', second)]);
    for (const answer of answers) expectOutcome(answer, 'stored');
    const stored = await download(c, 'both.bin');
    expect(stored?.equals(first) || stored?.equals(second)).toBe(true);
    const books = await expectBooksClose(server, c.owner.id, { held: 0 });
    expect(books.bucketCounts.find((bucket) => bucket.id === c.bucket.id)?.listed).toBe(1);
  });
});

/** A blob, small enough that a copy door's two sources and four versions stay under the cap. */
const VERSION_SIZE = 100_000;

/** A cell whose bucket keeps versions: every overwrite keeps the version it replaces, counted in total_bytes, noncurrent_bytes and usage. */
async function versionedCell(on: TestServer): Promise<Cell> {
  const c = await cell(on);
  const patched = await fetch(`${on.url}/api/v1/buckets/${c.bucket.id}`, {
    method: 'PATCH',
    headers: { 'x-api-key': c.owner.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ versioning: 'enabled' }),
  });
  expect(patched.status).toBe(200);
  return c;
}

async function versionCount(c: Cell, key: string): Promise<number> {
  const response = await fetch(`${c.on.url}/api/v1/buckets/${c.bucket.id}/files/${key}/versions`, { headers: { 'x-api-key': c.owner.apiKey } });
  return response.status === 404 ? 0 : (await json(response)).data.length;
}

describe.each(DOORS.map((door) => [door.name, door] as const))('%s, into a versioned bucket', (_name, door) => {
  it('an overwrite cut at a random byte keeps the version there; counts, total, noncurrent and usage close', async () => {
    const c = await versionedCell(server);
    const first = randomBytes(VERSION_SIZE);
    expectOutcome(await upload(door, c, 'kept.bin', first), 'stored');
    const via = { url: pailProxy.url, s3Url: s3Proxy.url };
    const second = randomBytes(VERSION_SIZE);
    for (let round = 0; round < 3; round++) {
      const at = randomInt(0, VERSION_SIZE + 600);
      pailProxy.cutNextAfter(at);
      s3Proxy.cutNextAfter(at);
      const answer = await upload(door, c, 'kept.bin', second, { world: { ...c.world, via } });
      expect(['cut', 'stored'], answer.detail).toContain(answer.outcome);
      clearCuts();
      // A cut may come after the commit (its answer lost): then the new version is current and the old one kept.
      const current = await download(c, 'kept.bin');
      expect(current?.equals(first) || current?.equals(second)).toBe(true);
      const versions = await versionCount(c, 'kept.bin');
      expect(versions).toBeGreaterThanOrEqual(answer.outcome === 'stored' ? 2 : 1);
      expect(versions).toBeLessThanOrEqual(round + 2);
      await expectBooksClose(server, c.owner.id, { held: 0 });
    }
    await alive(server);
  });

  it('two writers of one name at once: two versions, one current, each whole and counted once', async () => {
    const c = await versionedCell(server);
    const [first, second] = [randomBytes(VERSION_SIZE), randomBytes(VERSION_SIZE)];
    const answers = await Promise.all([upload(door, c, 'both.bin', first), upload(door, c, 'both.bin', second)]);
    for (const answer of answers) expectOutcome(answer, 'stored');
    const current = await download(c, 'both.bin');
    expect(current?.equals(first) || current?.equals(second)).toBe(true);
    expect(await versionCount(c, 'both.bin')).toBe(2);
    const books = await expectBooksClose(server, c.owner.id, { held: 0 });
    expect(books.bucketCounts.find((bucket) => bucket.id === c.bucket.id)).toMatchObject({ listed: 1, keptBytes: VERSION_SIZE });
  });
});

/** Drops the cut point the other door's proxy never used. */
function clearCuts() {
  pailProxy.clear();
  s3Proxy.clear();
}

/** Spends the whole budget the door's credential draws on, with cheap requests of that door's kind. */
async function spendBudget(door: Door, c: Cell) {
  const on = c.on;
  let request: () => Promise<Response>;
  if (door.credential === 'session') {
    request = () => fetch(`${on.url}/api/buckets`, { headers: { authorization: `Bearer ${c.owner.token}` } });
  } else if (door.credential === 'signed-url') {
    // A share link's readers spend the link's budget (per reader address), not the owner's.
    await placeSource(c.world, c.bucket, 'shared.txt', Buffer.from('shared'));
    const made = await fetch(`${on.url}/api/v1/buckets/${c.bucket.id}/files/shared.txt/signed-url`, {
      method: 'POST',
      headers: { 'x-api-key': c.owner.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'GET', expires_in: 600 }),
    });
    const url = (await json(made)).data.url as string;
    request = () => fetch(url);
  } else {
    request = () => fetch(`${on.url}/api/v1/buckets`, { headers: { 'x-api-key': c.owner.apiKey } });
  }
  for (let spent = 0; spent < RATE * 2; spent++) {
    const response = await request();
    await response.body?.cancel();
    if (response.status === 429) return;
  }
  throw new Error(`the ${door.credential} budget never ran out`);
}
