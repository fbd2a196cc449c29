/** GET /metrics: Prometheus text with the counts a scrape of a real server shows. */
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListBucketsCommand,
  PutBucketWebsiteCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type TestUser } from './helpers/client.js';
import { createUpload, patchUpload, tusBucket } from './helpers/tus.js';
import { sdkClient } from './helpers/s3-client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: '100000', PLAN_FREE_RATE_LIMIT: '20' } });
  user = await signUp(server.url);
});
afterAll(() => server.close());

/** The value of one sample, `name{labels} value`; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => got[key] === value)) return Number(match[3]);
  }
  return 0;
}

const scrape = async (target = server, headers: Record<string, string> = {}) => {
  const response = await fetch(`${target.url}/metrics`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
};

describe('GET /metrics', () => {
  it('counts requests by operation and status, their latency, bytes, uploads, refusals and storage used', async () => {
    const before = await scrape();
    const key = { 'x-api-key': user.apiKey };
    const created = await fetch(`${server.url}/api/v1/buckets`, {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'metered' }),
    });
    const bucket = ((await created.json()) as { data: { id: number } }).data.id;
    for (let i = 0; i < 3; i++) {
      const put = await fetch(`${server.url}/api/v1/buckets/${bucket}/files/f${i}.bin`, { method: 'PUT', headers: key, body: new Uint8Array(10_000) });
      expect(put.status).toBe(201);
    }
    const got = await fetch(`${server.url}/api/v1/buckets/${bucket}/files/f0.bin`, { headers: key });
    expect((await got.arrayBuffer()).byteLength).toBe(10_000);
    // Refusals: over the cap, a bad key, then over the rate.
    expect((await fetch(`${server.url}/api/v1/buckets/${bucket}/files/big.bin`, { method: 'PUT', headers: key, body: new Uint8Array(90_000) })).status).toBe(
      409,
    );
    expect((await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': 'pail_wrong' } })).status).toBe(401);
    let status = 200;
    while (status !== 429) status = (await fetch(`${server.url}/api/v1/buckets`, { headers: key })).status;

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('pail_http_requests_total', { operation: 'uploadRaw', status: '201' })).toBe(3);
    expect(delta('pail_http_requests_total', { operation: 'createBucket', status: '201' })).toBe(1);
    expect(delta('pail_http_requests_total', { operation: 'readFile', status: '200' })).toBe(1);
    expect(delta('pail_http_request_duration_seconds_count', { operation: 'uploadRaw' })).toBe(4); // the 409 too
    // Buckets are cumulative: the +Inf bucket holds every request, and none is below the smallest bound's bucket.
    expect(delta('pail_http_request_duration_seconds_bucket', { operation: 'uploadRaw', le: '+Inf' })).toBe(4);
    const bucketLines = after.split('\n').filter((line) => line.startsWith('pail_http_request_duration_seconds_bucket{le=') && line.includes('"uploadRaw"'));
    const counts = bucketLines.map((line) => Number(line.split(' ')[1]));
    expect(counts).toHaveLength(14);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(sample(after, 'pail_http_request_duration_seconds_sum', { operation: 'uploadRaw' })).toBeGreaterThan(0);
    expect(delta('pail_uploads_total', { operation: 'uploadRaw' })).toBe(3);
    expect(delta('pail_http_received_bytes_total')).toBeGreaterThanOrEqual(3 * 10_000);
    expect(delta('pail_http_sent_bytes_total')).toBeGreaterThanOrEqual(10_000);
    expect(delta('pail_refusals_total', { reason: 'cap' })).toBe(1);
    expect(delta('pail_refusals_total', { reason: 'auth' })).toBe(1);
    expect(delta('pail_refusals_total', { reason: 'rate' })).toBe(1);
    expect(sample(after, 'pail_storage_used_bytes')).toBe(30_000);
    expect(after).toContain('# TYPE pail_http_request_duration_seconds histogram');
  });

  it("counts the S3 API's requests in the same series, by S3 operation: uploads, refusals and what Pail does not implement", async () => {
    const before = await scrape();
    const owner = await signUp(server.url);
    const s3 = sdkClient(server.s3Url!, owner);
    await s3.send(new CreateBucketCommand({ Bucket: 'metered-s3' }));
    await s3.send(new PutObjectCommand({ Bucket: 'metered-s3', Key: 'a.bin', Body: new Uint8Array(10_000) }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'metered-s3', Key: 'a.bin' }));
    expect((await got.Body!.transformToByteArray()).byteLength).toBe(10_000);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'metered-s3', Key: 'b.bin' }));
    const part = await s3.send(new UploadPartCommand({ Bucket: 'metered-s3', Key: 'b.bin', UploadId, PartNumber: 1, Body: new Uint8Array(20_000) }));
    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: 'metered-s3', Key: 'b.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag! }] } }),
    );
    // Refusals: over the 100,000-byte cap, a wrong secret, and an operation Pail does not have.
    const refused = (promise: Promise<unknown>) =>
      promise.then(
        () => 'stored',
        (error: { name: string }) => error.name,
      );
    expect(await refused(s3.send(new PutObjectCommand({ Bucket: 'metered-s3', Key: 'big.bin', Body: new Uint8Array(90_000) })))).toBe('QuotaExceeded');
    expect(await refused(sdkClient(server.s3Url!, { ...owner, secretAccessKey: 'wrong-secret' }).send(new ListBucketsCommand({})))).toBe(
      'SignatureDoesNotMatch',
    );
    const website = new PutBucketWebsiteCommand({ Bucket: 'metered-s3', WebsiteConfiguration: { IndexDocument: { Suffix: 'index.html' } } });
    expect(await refused(s3.send(website))).toBe('NotImplemented');

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('pail_http_requests_total', { operation: 'CreateBucket', status: '200' })).toBe(1);
    expect(delta('pail_http_requests_total', { operation: 'PutObject', status: '200' })).toBe(1);
    expect(delta('pail_http_requests_total', { operation: 'PutObject', status: '403' })).toBe(1);
    expect(delta('pail_http_requests_total', { operation: 'GetObject', status: '200' })).toBe(1);
    expect(delta('pail_http_requests_total', { operation: 'UploadPart', status: '200' })).toBe(1);
    expect(delta('pail_http_requests_total', { operation: 'ListBuckets', status: '403' })).toBe(1);
    expect(delta('pail_http_requests_total', { operation: 'NotImplemented', status: '501' })).toBe(1);
    expect(delta('pail_uploads_total', { operation: 'PutObject' })).toBe(1);
    expect(delta('pail_uploads_total', { operation: 'CompleteMultipartUpload' })).toBe(1);
    expect(delta('pail_uploads_total', { operation: 'UploadPart' })).toBe(0);
    expect(delta('pail_refusals_total', { reason: 'cap' })).toBe(1);
    expect(delta('pail_refusals_total', { reason: 'auth' })).toBe(1);
    expect(delta('pail_http_received_bytes_total')).toBeGreaterThanOrEqual(30_000);
    expect(delta('pail_http_sent_bytes_total')).toBeGreaterThanOrEqual(10_000);
    expect(delta('pail_http_request_duration_seconds_count', { operation: 'GetObject' })).toBe(1);
  });

  it('counts a file stored when its version commits, whichever door it came through: a finished resumable upload, not its pieces', async () => {
    const before = await scrape();
    const { user: owner, endpoint } = await tusBucket(server, 'metered-tus');
    const url = await createUpload(endpoint, owner, 20_000, 'resumed.bin');
    expect((await patchUpload(url, owner, 0, new Uint8Array(10_000))).status).toBe(204);
    const between = await scrape();
    expect(sample(between, 'pail_uploads_total', { operation: 'resumeUpload' }) - sample(before, 'pail_uploads_total', { operation: 'resumeUpload' })).toBe(0);
    expect((await patchUpload(url, owner, 10_000, new Uint8Array(10_000))).status).toBe(204);
    const after = await scrape();
    expect(sample(after, 'pail_uploads_total', { operation: 'resumeUpload' }) - sample(before, 'pail_uploads_total', { operation: 'resumeUpload' })).toBe(1);
  });

  it('without METRICS_TOKEN, answers loopback addresses only: another address, or a request through a proxy, is refused', async () => {
    for (const remoteAddress of ['127.0.0.1', '127.0.0.9', '::1']) {
      const local = await server.app.inject({ url: '/metrics', remoteAddress });
      expect(local.statusCode, remoteAddress).toBe(200);
      expect(local.body).toContain('pail_http_requests_total');
    }
    for (const remoteAddress of ['203.0.113.9', '10.0.0.5', '::ffff:192.0.2.1', '2001:db8::1']) {
      const remote = await server.app.inject({ url: '/metrics', remoteAddress });
      expect(remote.statusCode, remoteAddress).toBe(403);
      expect(remote.json()).toEqual({ error: expect.stringContaining('loopback addresses only'), code: 'Forbidden' });
      expect(remote.body).not.toContain('pail_');
    }
    const proxied = await fetch(`${server.url}/metrics`, { headers: { 'x-forwarded-for': '127.0.0.1' } });
    expect(proxied.status).toBe(403);
    expect((await fetch(`${server.url}/metrics`, { headers: { forwarded: 'for=127.0.0.1' } })).status).toBe(403);
  });

  it('METRICS_TOKEN requires the bearer token; METRICS=off serves nothing', async () => {
    const guarded = await startTestServer({ env: { METRICS_TOKEN: 'scrape-secret-123' } });
    const off = await startTestServer({ s3: true, env: { METRICS: 'off' } });
    try {
      const refused = await fetch(`${guarded.url}/metrics`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: 'Unauthorized', code: 'Unauthorized' });
      expect((await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer wrong-secret-123' } })).status).toBe(401);
      expect(await scrape(guarded, { authorization: 'Bearer scrape-secret-123' })).toContain('pail_http_requests_total');
      // With the token, from any address.
      const remote = await guarded.app.inject({ url: '/metrics', remoteAddress: '203.0.113.9', headers: { authorization: 'Bearer scrape-secret-123' } });
      expect(remote.statusCode).toBe(200);
      expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
      // With nothing to record into, the S3 listener serves as ever.
      const offUser = await signUp(off.url);
      expect((await sdkClient(off.s3Url!, offUser).send(new ListBucketsCommand({}))).Buckets).toEqual([]);
    } finally {
      await guarded.close();
      await off.close();
    }
  });
});
