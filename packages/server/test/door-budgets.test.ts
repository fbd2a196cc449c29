/**
 * Every door spends a budget (decisions.md, "Plans, storage caps, rate
 * limits"): a session's reads of `/storage` urls spend its Client API budget;
 * a share link (a Pail signed url, an S3 presigned url) spends a budget of
 * its own per reader address (SIGNED_URL_RATE_LIMIT), never its owner's key
 * budget. Readers are told apart by loopback address (Linux answers on all of
 * 127.0.0.0/8).
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARE_LINKS_PER_PLAN_RATE } from '../src/http/rate-limits.js';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const CLIENT_LIMIT = 4;
const SIGNED_LIMIT = 3;
const KEY_LIMIT = 8;

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A GET from a chosen loopback address. */
function getFrom(localAddress: string, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { localAddress, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, headers: response.headers }));
    });
    request.on('error', reject);
    request.end();
  });
}

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    s3: true,
    env: { CLIENT_RATE_LIMIT: String(CLIENT_LIMIT), SIGNED_URL_RATE_LIMIT: String(SIGNED_LIMIT), PLAN_FREE_RATE_LIMIT: String(KEY_LIMIT) },
  });
});
afterAll(() => server?.close());

/** A private bucket with one small file, made with the owner's key: three requests of its budget. */
async function privateFile(owner: TestUser) {
  const dev = devApi(server.url, owner);
  const bucket = (await json(await dev('', { method: 'POST', body: JSON.stringify({ name: `priv-${randomUUID().slice(0, 8)}` }) }))).data;
  const put = await dev(`/${bucket.id}/files/hello.txt`, { method: 'PUT', body: 'hello', headers: { 'content-type': 'text/plain' } });
  expect(put.status).toBe(201);
  const listed = (await json(await dev(`/${bucket.id}/files`))).data[0];
  return { bucket, url: listed.url as string };
}

/** The owner's key budget left, spending one request to read it. */
async function keyRemaining(owner: TestUser): Promise<number> {
  const response = await devApi(server.url, owner)('');
  await response.arrayBuffer();
  return Number(response.headers.get('ratelimit-remaining'));
}

describe('session reads of /storage urls', () => {
  it.each(['token', 'cookie'] as const)('spend the Client API budget (session %s), then 429', async (via) => {
    const owner = await signUp(server.url); // one Client API request already (POST /api/keys)
    const file = await privateFile(owner);
    const headers: Record<string, string> = via === 'token' ? { authorization: `Bearer ${owner.token}` } : { cookie: owner.cookie };
    for (let remaining = CLIENT_LIMIT - 2; remaining >= 0; remaining--) {
      const read = await fetch(file.url, { headers });
      expect(read.status).toBe(200);
      expect(await read.text()).toBe('hello');
      expect(read.headers.get('ratelimit-limit')).toBe(String(CLIENT_LIMIT));
      expect(read.headers.get('ratelimit-remaining')).toBe(String(remaining));
    }
    const refused = await fetch(file.url, { headers });
    expect(refused.status).toBe(429);
    expect(await json(refused)).toMatchObject({ error: 'Rate limit exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The same session's Client API requests share the spent budget; the key keeps its own.
    expect((await fetch(`${server.url}/api/buckets`, { headers })).status).toBe(429);
    expect(await keyRemaining(owner)).toBe(KEY_LIMIT - 4);
  });
});

describe('share links spend a budget of their own per reader address', () => {
  it("a Pail signed url: 429 to one reader past SIGNED_URL_RATE_LIMIT, others still read, the owner's key budget untouched", async () => {
    const owner = await signUp(server.url);
    const file = await privateFile(owner);
    const signed = await devApi(server.url, owner)(`/${file.bucket.id}/files/hello.txt/signed-url`, {
      method: 'POST',
      body: JSON.stringify({ method: 'GET', expires_in: 600 }),
    });
    expect(signed.status).toBe(201);
    const link = (await json(signed)).data.url as string;
    const before = await keyRemaining(owner);

    for (let remaining = SIGNED_LIMIT - 1; remaining >= 0; remaining--) {
      const read = await getFrom('127.0.0.21', link);
      expect(read.status).toBe(200);
      expect(read.body).toBe('hello');
      expect(read.headers['ratelimit-limit']).toBe(String(SIGNED_LIMIT));
      expect(read.headers['ratelimit-remaining']).toBe(String(remaining));
    }
    const refused = await getFrom('127.0.0.21', link);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'Rate limit exceeded' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // Another reader still reads; the owner's key spent nothing on any of it.
    expect((await getFrom('127.0.0.22', link)).status).toBe(200);
    expect(await keyRemaining(owner)).toBe(before - 1);

    // The owner's script spends the whole key budget: the link still answers a new reader.
    while ((await keyRemaining(owner)) > 0);
    expect((await devApi(server.url, owner)('')).status).toBe(429);
    const stranger = await getFrom('127.0.0.23', link);
    expect(stranger.status).toBe(200);
    expect(stranger.body).toBe('hello');
  });

  it("all of an owner's links together stop at SHARE_LINKS_PER_PLAN_RATE times the plan's rate, whatever the readers' addresses", async () => {
    const owner = await signUp(server.url);
    const file = await privateFile(owner);
    const signed = await devApi(server.url, owner)(`/${file.bucket.id}/files/hello.txt/signed-url`, {
      method: 'POST',
      body: JSON.stringify({ method: 'GET', expires_in: 600 }),
    });
    const link = (await json(signed)).data.url as string;
    const ceiling = KEY_LIMIT * SHARE_LINKS_PER_PLAN_RATE;
    // Readers spread over many addresses, each within its own budget, read the ceiling's worth.
    for (let read = 0; read < ceiling; read++) {
      const answer = await getFrom(`127.0.1.${1 + Math.floor(read / SIGNED_LIMIT)}`, link);
      expect(answer.status, `read ${read}`).toBe(200);
    }
    const fresh = await getFrom('127.0.2.1', link);
    expect(fresh.status).toBe(429);
    expect(JSON.parse(fresh.body)).toMatchObject({ error: 'Rate limit exceeded' });
  });

  it("an S3 presigned GetObject url: the reader's own budget, not the owner's", async () => {
    const owner = await signUp(server.url);
    const file = await privateFile(owner);
    const s3 = sdkClient(server.s3Url!, owner);
    const link = await getSignedUrl(s3, new GetObjectCommand({ Bucket: file.bucket.name, Key: 'hello.txt' }), { expiresIn: 600 });
    const before = await keyRemaining(owner);
    for (let i = 0; i < SIGNED_LIMIT; i++) {
      const read = await getFrom('127.0.0.31', link);
      expect(read.status).toBe(200);
      expect(read.body).toBe('hello');
    }
    const refused = await getFrom('127.0.0.31', link);
    expect(refused.status).toBe(503);
    expect(refused.body).toContain('<Code>SlowDown</Code>');
    expect((await getFrom('127.0.0.32', link)).status).toBe(200);
    expect(await keyRemaining(owner)).toBe(before - 1);
  });
});
