/**
 * `Expect: 100-continue` on both listeners (http/expectations.ts): the go-ahead
 * comes only for a request that will be served; a refused one gets its final
 * answer instead, with its connection closed, and never sees a 100. An empty
 * `Expect:` is no expectation. Driven over raw sockets, as a client that
 * waits for the go-ahead before sending its body.
 */
import { CreateBucketCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { sdkClient } from './helpers/s3-client.js';
import { signRequest } from './helpers/s3-signing.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let alice: TestUser;
let bucketId: number;
const s3Bucket = `expect-${Date.now()}`;

beforeAll(async () => {
  server = await startTestServer({ s3: true, env: { PLAN_FREE_STORAGE_BYTES: '100000' } });
  alice = await signUp(server.url);
  const created = await devApi(server.url, alice)('', { method: 'POST', body: JSON.stringify({ name: 'expect-api' }) });
  bucketId = ((await json(created)) as { data: { id: number } }).data.id;
  await sdkClient(server.s3Url!, alice).send(new CreateBucketCommand({ Bucket: s3Bucket }));
});
afterAll(() => server.close());

/** What the server sent on a socket so far, and whether it closed. */
class RawExchange {
  private received = '';
  closed = false;
  private readonly socket: Socket;
  private waiting: (() => void)[] = [];

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = connect(Number(port), hostname);
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => {
      this.received += chunk;
      this.wake();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    this.socket.on('error', () => {});
  }

  private wake() {
    for (const waiter of this.waiting.splice(0)) waiter();
  }

  send(text: string | Buffer) {
    this.socket.write(text);
  }

  /** Waits until what was received matches, or the socket closed; answers all that was received. */
  async until(pattern: RegExp): Promise<string> {
    while (!pattern.test(this.received) && !this.closed) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.received;
  }

  async closedNow(): Promise<boolean> {
    while (!this.closed) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return true;
  }

  end() {
    this.socket.destroy();
  }
}

function head(method: string, path: string, headers: Record<string, string>): string {
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}

const FINAL = /HTTP\/1\.1 [2-5]\d\d [^\r\n]*\r\n[\s\S]*?\r\n\r\n/;

describe('Expect: 100-continue on the Pail API', () => {
  const hostOf = () => new URL(server.url).host;

  it('a request that will be served gets 100 Continue, then its answer once the body came', async () => {
    const exchange = new RawExchange(server.url);
    const body = 'x'.repeat(1000);
    exchange.send(
      head('PUT', `/api/v1/buckets/${bucketId}/files/continued.txt`, {
        host: hostOf(),
        'x-api-key': alice.apiKey,
        'content-type': 'text/plain',
        'content-length': String(body.length),
        expect: '100-continue',
      }),
    );
    expect(await exchange.until(/\r\n\r\n/)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    exchange.send(body);
    expect(await exchange.until(/HTTP\/1\.1 201/)).toContain('HTTP/1.1 201');
    exchange.end();
    const got = await fetch(`${server.url}/api/v1/buckets/${bucketId}/files/continued.txt`, { headers: { 'x-api-key': alice.apiKey } });
    expect(await got.text()).toBe(body);
  });

  it('a refused request gets its final answer without 100 Continue, and the connection closes: a bad key, a file past the cap', async () => {
    const refusals: [Record<string, string>, number][] = [
      [{ 'x-api-key': 'pail_not-a-key', 'content-length': '1000' }, 401],
      [{ 'x-api-key': alice.apiKey, 'content-length': '200000' }, 409],
    ];
    for (const [headers, status] of refusals) {
      const exchange = new RawExchange(server.url);
      exchange.send(head('PUT', `/api/v1/buckets/${bucketId}/files/refused.bin`, { host: hostOf(), expect: '100-continue', ...headers }));
      const answer = await exchange.until(FINAL);
      expect(answer, answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(answer).not.toContain('100 Continue');
      expect(answer.toLowerCase()).toContain('connection: close');
      expect(await exchange.closedNow()).toBe(true);
    }
  });

  it('an empty Expect: is served as if absent', async () => {
    const response = await new Promise<string>((resolve) => {
      const exchange = new RawExchange(server.url);
      exchange.send(head('GET', `/api/v1/buckets/${bucketId}`, { host: hostOf(), 'x-api-key': alice.apiKey, expect: '' }));
      void exchange.until(FINAL).then((text) => {
        exchange.end();
        resolve(text);
      });
    });
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('Expect: 100-continue on the S3 API', () => {
  const hostOf = () => new URL(server.s3Url!).host;

  it('a signed PutObject gets 100 Continue, then 200 once the body came', async () => {
    const body = 'y'.repeat(500);
    const path = `/${s3Bucket}/continued.txt`;
    const signed = await signRequest(server.s3Url!, alice, 'PUT', path, {}, { 'content-length': String(body.length), expect: '100-continue' });
    const exchange = new RawExchange(server.s3Url!);
    exchange.send(head('PUT', path, signed));
    expect(await exchange.until(/\r\n\r\n/)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    exchange.send(body);
    expect(await exchange.until(/HTTP\/1\.1 200/)).toContain('HTTP/1.1 200');
    exchange.end();
    const got = await sdkClient(server.s3Url!, alice).send(new GetObjectCommand({ Bucket: s3Bucket, Key: 'continued.txt' }));
    expect(await got.Body!.transformToString()).toBe(body);
  });

  it('an unsigned PutObject, one into a missing bucket, and one past the cap are refused without 100 Continue', async () => {
    const missing = `/no-such-bucket-${Date.now()}/a.txt`;
    const cases: [string, Record<string, string>, number][] = [
      [`/${s3Bucket}/anonymous.txt`, { host: hostOf(), 'content-length': '123' }, 403],
      [missing, await signRequest(server.s3Url!, alice, 'PUT', missing, {}, { 'content-length': '123' }), 404],
      [`/${s3Bucket}/big.bin`, await signRequest(server.s3Url!, alice, 'PUT', `/${s3Bucket}/big.bin`, {}, { 'content-length': '300000' }), 403],
    ];
    for (const [path, headers, status] of cases) {
      const exchange = new RawExchange(server.s3Url!);
      exchange.send(head('PUT', path, { ...headers, expect: '100-continue' }));
      const answer = await exchange.until(FINAL);
      expect(answer, path).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(answer).not.toContain('100 Continue');
      expect(await exchange.closedNow()).toBe(true);
    }
  });

  it('an empty Expect: is served as if absent', async () => {
    const path = `/${s3Bucket}/continued.txt`;
    const signed = await signRequest(server.s3Url!, alice, 'GET', path, {}, { expect: '' });
    const exchange = new RawExchange(server.s3Url!);
    exchange.send(head('GET', path, signed));
    const answer = await exchange.until(FINAL);
    exchange.end();
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });
});
