/**
 * The API key never leaves for another origin: the SDK follows redirects
 * itself and drops `x-api-key` (and Authorization) when the next hop is
 * another origin. fetch on its own would carry the header along.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pail } from '../src/index.js';

const KEY = 'pail_secret-key-for-redirect-tests';
const seen: { server: 'home' | 'elsewhere'; url: string; headers: IncomingHttpHeaders }[] = [];
let home: Server;
let elsewhere: Server;

const listen = (server: Server) =>
  new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
const emptyList = JSON.stringify({ data: [], buckets: [] });

let homeUrl: string;
let elsewhereUrl: string;

beforeAll(async () => {
  elsewhere = createServer((request, response) => {
    seen.push({ server: 'elsewhere', url: request.url ?? '', headers: request.headers });
    response.writeHead(200, { 'content-type': 'application/json' }).end(emptyList);
  });
  elsewhereUrl = await listen(elsewhere);
  home = createServer((request, response) => {
    seen.push({ server: 'home', url: request.url ?? '', headers: request.headers });
    if (request.url === '/away/api/v1/buckets') return response.writeHead(302, { location: `${elsewhereUrl}/api/v1/buckets` }).end();
    if (request.url === '/moved/api/v1/buckets') return response.writeHead(307, { location: '/api/v1/buckets' }).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(emptyList);
  });
  homeUrl = await listen(home);
});

afterAll(async () => {
  await new Promise((resolve) => home.close(resolve));
  await new Promise((resolve) => elsewhere.close(resolve));
});

describe('redirects', () => {
  it('a redirect to another origin is followed without the API key', async () => {
    seen.length = 0;
    const pail = new Pail({ baseUrl: `${homeUrl}/away`, apiKey: KEY });
    expect(await pail.listBuckets()).toEqual([]);
    expect(seen.map((hit) => hit.server)).toEqual(['home', 'elsewhere']);
    expect(seen[0]!.headers['x-api-key']).toBe(KEY);
    expect(seen[1]!.headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(seen[1]!.headers)).not.toContain(KEY);
  });

  it('a redirect within the same origin keeps the key', async () => {
    seen.length = 0;
    const pail = new Pail({ baseUrl: `${homeUrl}/moved`, apiKey: KEY });
    expect(await pail.listBuckets()).toEqual([]);
    expect(seen.map((hit) => [hit.server, hit.url])).toEqual([
      ['home', '/moved/api/v1/buckets'],
      ['home', '/api/v1/buckets'],
    ]);
    expect(seen[1]!.headers['x-api-key']).toBe(KEY);
  });
});
