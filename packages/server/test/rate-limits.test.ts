/**
 * Rate limits (decisions.md, "Plans, storage caps, rate limits"): the
 * Developer API per user and plan, all of a user's keys sharing one budget;
 * anonymous public downloads per client IP; login attempts per account and per
 * IP. Small limits are configured so the edge is reached in a few requests, and
 * RATE_LIMIT_WINDOW_SECONDS=2 shows a budget refilling.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { setPlan } from '../src/domain/users.js';
import { devApi, json, signUp, type TestUser } from './helpers/client.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The three budget headers, as numbers (NaN when missing). */
function budget(response: Response) {
  return {
    limit: Number(response.headers.get('ratelimit-limit') ?? NaN),
    remaining: Number(response.headers.get('ratelimit-remaining') ?? NaN),
    reset: Number(response.headers.get('ratelimit-reset') ?? NaN),
  };
}

async function expectRateLimited(response: Response, limit: number, windowSeconds: number, head = false) {
  expect(response.status).toBe(429);
  // A HEAD answer has no body; its headers say the same.
  if (head) expect(await response.text()).toBe('');
  else expect(await json(response)).toMatchObject({ error: 'Rate limit exceeded' });
  const retryAfter = response.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(windowSeconds);
  const { limit: l, remaining, reset } = budget(response);
  expect(l).toBe(limit);
  expect(remaining).toBe(0);
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(windowSeconds);
  return Number(retryAfter);
}

/** Spends `count` requests of `user`'s budget, checking each success's headers. */
async function spend(url: string, user: Pick<TestUser, 'apiKey'>, count: number, limit: number, windowSeconds = 60) {
  const dev = devApi(url, user);
  for (let i = 1; i <= count; i++) {
    const response = await dev('');
    expect(response.status, `request ${i}`).toBe(200);
    const { limit: l, remaining, reset } = budget(response);
    expect(l).toBe(limit);
    expect(remaining, `remaining after request ${i}`).toBe(limit - i);
    expect(reset).toBeGreaterThanOrEqual(0);
    expect(reset).toBeLessThanOrEqual(windowSeconds);
    await response.arrayBuffer();
  }
}

async function newKey(url: string, user: TestUser): Promise<string> {
  const response = await fetch(`${url}/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'another' }),
  });
  expect(response.status).toBe(201);
  return (await json(response)).data.key;
}

/** A login sent from a chosen loopback address (Linux answers on all of 127.0.0.0/8). */
function loginFrom(localAddress: string, url: string, email: string, password: string) {
  return postFrom(localAddress, `${url}/api/auth/login`, { email, password });
}

/** A JSON POST from a chosen loopback address. */
function postFrom(localAddress: string, url: string, json: unknown): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const body = JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text, headers: response.headers }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

async function login(url: string, email: string, password: string, headers: Record<string, string> = {}) {
  return fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email, password }),
  });
}

/** A public bucket with one small file, made with the owner's key. */
async function publicFile(url: string, owner: TestUser) {
  const dev = devApi(url, owner);
  const bucket = (await json(await dev('', { method: 'POST', body: JSON.stringify({ name: `pub-${randomUUID().slice(0, 8)}`, visibility: 'public' }) }))).data;
  expect((await dev(`/${bucket.id}/files/hello.txt`, { method: 'PUT', body: 'hello', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  const listed = (await json(await dev(`/${bucket.id}/files`))).data[0];
  return { bucket, apiPath: `${url}/api/v1/buckets/${bucket.id}/files/hello.txt`, storageUrl: listed.url as string };
}

describe('Developer API budgets per user, with small configured limits', () => {
  let server: TestServer;
  const limits = { free: 5, plus: 7, pro: 9, max: 11 };

  beforeAll(async () => {
    server = await startTestServer({
      env: {
        PLAN_FREE_RATE_LIMIT: String(limits.free),
        PLAN_PLUS_RATE_LIMIT: String(limits.plus),
        PLAN_PRO_RATE_LIMIT: String(limits.pro),
        PLAN_MAX_RATE_LIMIT: String(limits.max),
      },
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('counts down in RateLimit-Remaining, then answers 429 Rate limit exceeded with Retry-After and the budget headers', async () => {
    const user = await signUp(server.url);
    await spend(server.url, user, limits.free, limits.free);
    const dev = devApi(server.url, user);
    await expectRateLimited(await dev(''), limits.free, 60);
    // Every kind of request is refused now, and a refused write changes nothing.
    await expectRateLimited(await dev('', { method: 'POST', body: JSON.stringify({ name: 'too-late' }) }), limits.free, 60);
    await expectRateLimited(await fetch(`${server.url}/api/v1/bucket/list`, { headers: { authorization: `Bearer ${user.apiKey}` } }), limits.free, 60);
    const list = await json(await fetch(`${server.url}/api/buckets`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(list.data.map((b: { name: string }) => b.name)).not.toContain('too-late');
  });

  it('shares one budget among all keys of a user, both headers, both bases', async () => {
    const user = await signUp(server.url);
    const second = await newKey(server.url, user);
    const calls = [
      () => fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } }),
      () => fetch(`${server.url}/api/v1/bucket`, { headers: { 'x-api-key': second } }),
      () => fetch(`${server.url}/api/v1/buckets/list`, { headers: { authorization: `Bearer ${second}` } }),
      () => fetch(`${server.url}/api/v1/bucket`, { headers: { authorization: `Bearer ${user.apiKey}` } }),
    ];
    for (let i = 1; i <= limits.free; i++) {
      const response = await calls[i % calls.length]!();
      expect(response.status).toBe(200);
      expect(budget(response).remaining).toBe(limits.free - i);
    }
    for (const call of calls) await expectRateLimited(await call(), limits.free, 60);
    // A key made after the budget is spent has nothing left either.
    const third = await newKey(server.url, user);
    await expectRateLimited(await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': third } }), limits.free, 60);
  });

  it('does not touch other users', async () => {
    const spender = await signUp(server.url);
    const bystander = await signUp(server.url);
    await spend(server.url, spender, limits.free, limits.free);
    await expectRateLimited(await devApi(server.url, spender)(''), limits.free, 60);
    await spend(server.url, bystander, 1, limits.free);
  });

  it('does not apply to the Client API', async () => {
    const user = await signUp(server.url);
    await spend(server.url, user, limits.free, limits.free);
    await expectRateLimited(await devApi(server.url, user)(''), limits.free, 60);
    for (let i = 0; i < limits.free + 2; i++) {
      const response = await fetch(`${server.url}/api/buckets`, { headers: { authorization: `Bearer ${user.token}` } });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
  });

  it('counts error responses too, and they carry the headers', async () => {
    const user = await signUp(server.url);
    const dev = devApi(server.url, user);
    const responses = [
      await dev('/999999'),
      await dev('', { method: 'POST', body: JSON.stringify({ name: 'X' }) }),
      await dev('/999999/files/nope.txt', { method: 'HEAD' }),
    ];
    expect(responses.map((r) => r.status)).toEqual([404, 400, 404]);
    responses.forEach((response, i) => {
      expect(budget(response)).toMatchObject({ limit: limits.free, remaining: limits.free - 1 - i });
    });
  });

  it('holds under concurrency: of many simultaneous requests exactly the budget succeeds', async () => {
    const user = await signUp(server.url);
    const dev = devApi(server.url, user);
    const responses = await Promise.all(Array.from({ length: 4 * limits.free }, () => dev('')));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(limits.free);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3 * limits.free);
    const remaining = responses
      .filter((r) => r.status === 200)
      .map((r) => budget(r).remaining)
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: limits.free }, (_, i) => i));
    await Promise.all(responses.map((r) => r.arrayBuffer()));
  });

  it.each(['plus', 'pro', 'max'] as const)('sizes the budget by plan: %s', async (plan) => {
    const user = await signUp(server.url);
    await setPlan(server.app.pail.storage, user.email, plan);
    const me = await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data).toMatchObject({ plan, rate_limit_per_minute: limits[plan] });
    await spend(server.url, user, limits[plan], limits[plan]);
    await expectRateLimited(await devApi(server.url, user)(''), limits[plan], 60);
  });
});

describe('Developer API budgets with the default limits', () => {
  let server: TestServer;

  beforeAll(async () => {
    // The shared test helper sets generous budgets; empty values restore the defaults.
    server = await startTestServer({ env: { PLAN_FREE_RATE_LIMIT: '', PUBLIC_RATE_LIMIT: '' } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('free 100, plus 200, pro 500, max 1500 requests per minute', async () => {
    const expected = { free: 100, plus: 200, pro: 500, max: 1500 } as const;
    for (const plan of ['free', 'plus', 'pro', 'max'] as const) {
      const user = await signUp(server.url);
      if (plan !== 'free') await setPlan(server.app.pail.storage, user.email, plan);
      const me = await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
      expect(me.data.rate_limit_per_minute, plan).toBe(expected[plan]);
      const response = await devApi(server.url, user)('');
      expect(response.status).toBe(200);
      expect(budget(response), plan).toMatchObject({ limit: expected[plan], remaining: expected[plan] - 1 });
      expect(budget(response).reset).toBeLessThanOrEqual(60);
    }
  });

  it('the 101st request of a free user in a minute is refused', async () => {
    const user = await signUp(server.url);
    const dev = devApi(server.url, user);
    for (let i = 1; i <= 100; i++) {
      const response = await dev('');
      expect(response.status, `request ${i}`).toBe(200);
      await response.arrayBuffer();
    }
    await expectRateLimited(await dev(''), 100, 60);
  });

  it('every kind of Developer API response carries RateLimit-Limit, -Remaining and -Reset', async () => {
    const user = await signUp(server.url);
    const dev = devApi(server.url, user);
    const created = await dev('', { method: 'POST', body: JSON.stringify({ name: 'headers' }) });
    const { id } = (await json(created)).data;
    const responses: Response[] = [created];
    const steps: Array<[string, RequestInit]> = [
      ['', {}],
      ['/list', {}],
      [`/${id}`, {}],
      [`/${id}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'public' }) }],
      [`/${id}/files/a.txt`, { method: 'PUT', body: 'abc', headers: { 'content-type': 'text/plain' } }],
      [`/${id}/files`, {}],
      [`/${id}/files/a.txt`, {}],
      [`/${id}/files/a.txt`, { method: 'HEAD' }],
      [`/${id}/files/a.txt`, { headers: { range: 'bytes=0-0' } }],
      [`/${id}/files/missing.txt`, {}],
      [`/${id}/files/a.txt`, { method: 'DELETE' }],
      [`/${id}/delete`, { method: 'DELETE' }],
      [`/${id}`, {}],
    ];
    for (const [path, init] of steps) {
      const response = await dev(path, init);
      await response.arrayBuffer();
      responses.push(response);
    }
    expect(responses.map((r) => r.status)).toEqual([201, 200, 200, 200, 200, 201, 200, 200, 200, 206, 404, 200, 200, 404]);
    responses.forEach((response, i) => {
      const b = budget(response);
      expect(b.limit, `response ${i}`).toBe(100);
      expect(b.remaining, `response ${i}`).toBe(100 - 1 - i);
      expect(Number.isInteger(b.reset)).toBe(true);
      expect(b.reset).toBeLessThanOrEqual(60);
    });
  });
});

describe('anonymous public downloads, per client IP (PUBLIC_RATE_LIMIT)', () => {
  let server: TestServer;
  const publicLimit = 3;

  beforeAll(async () => {
    server = await startTestServer({ env: { PUBLIC_RATE_LIMIT: String(publicLimit) } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('limits anonymous GET and HEAD, through the Developer API and the storage URL alike; owners are not affected', async () => {
    const owner = await signUp(server.url);
    const file = await publicFile(server.url, owner);

    const first = await fetch(file.apiPath);
    expect(first.status).toBe(200);
    expect(await first.text()).toBe('hello');
    expect(budget(first)).toMatchObject({ limit: publicLimit, remaining: publicLimit - 1 });
    const second = await fetch(file.storageUrl, { method: 'HEAD' });
    expect(second.status).toBe(200);
    expect(budget(second)).toMatchObject({ limit: publicLimit, remaining: publicLimit - 2 });
    const third = await fetch(file.storageUrl);
    expect(third.status).toBe(200);
    expect(budget(third)).toMatchObject({ limit: publicLimit, remaining: 0 });
    await third.arrayBuffer();

    await expectRateLimited(await fetch(file.apiPath), publicLimit, 60);
    await expectRateLimited(await fetch(file.storageUrl), publicLimit, 60);
    await expectRateLimited(await fetch(file.apiPath, { method: 'HEAD' }), publicLimit, 60, true);
    await expectRateLimited(await fetch(`${server.url}/api/v1/bucket/${file.bucket.id}/files/hello.txt`), publicLimit, 60);
    // X-Forwarded-For is not trusted unless TRUST_PROXY is set: no way around the limit.
    await expectRateLimited(await fetch(file.apiPath, { headers: { 'x-forwarded-for': '203.0.113.7' } }), publicLimit, 60);

    // With a key or a session, the owner's own budget applies instead.
    const withKey = await fetch(file.apiPath, { headers: { 'x-api-key': owner.apiKey } });
    expect(withKey.status).toBe(200);
    expect(await withKey.text()).toBe('hello');
    const withSession = await fetch(file.storageUrl, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(withSession.status).toBe(200);
    const viaClientApi = await fetch(`${server.url}/api/buckets/${file.bucket.id}/files/hello.txt`, { headers: { cookie: owner.cookie } });
    expect(viaClientApi.status).toBe(200);
    // Another user's key reads the public file on their own budget too.
    const stranger = await signUp(server.url);
    expect((await fetch(file.apiPath, { headers: { 'x-api-key': stranger.apiKey } })).status).toBe(200);
  });
});

// The two wait out a window each, side by side: a user's budget and an address's are apart.
describe.concurrent('budgets refill after the window (RATE_LIMIT_WINDOW_SECONDS=2)', () => {
  let server: TestServer;
  const window = 2;

  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_WINDOW_SECONDS: String(window), PLAN_FREE_RATE_LIMIT: '3', PUBLIC_RATE_LIMIT: '2' } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('a user can spend the whole budget again once Retry-After has passed', async () => {
    const user = await signUp(server.url);
    await spend(server.url, user, 3, 3, window);
    const retryAfter = await expectRateLimited(await devApi(server.url, user)(''), 3, window);
    await sleep(retryAfter * 1000 + 300);
    await spend(server.url, user, 3, 3, window);
    await expectRateLimited(await devApi(server.url, user)(''), 3, window);
  });

  it('so can an anonymous client IP', async () => {
    const owner = await signUp(server.url);
    const file = await publicFile(server.url, owner);
    for (let i = 1; i <= 2; i++) expect((await fetch(file.apiPath)).status).toBe(200);
    const retryAfter = await expectRateLimited(await fetch(file.apiPath), 2, window);
    await sleep(retryAfter * 1000 + 300);
    const again = await fetch(file.apiPath);
    expect(again.status).toBe(200);
    expect(budget(again)).toMatchObject({ limit: 2, remaining: 1 });
  });
});

describe('Client API budget per user (CLIENT_RATE_LIMIT) and sign-ups per address (SIGNUP_RATE_LIMIT)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ env: { CLIENT_RATE_LIMIT: '4', SIGNUP_RATE_LIMIT: '2', PLAN_FREE_RATE_LIMIT: '50' } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('a session token gets CLIENT_RATE_LIMIT requests a minute, then 429, whatever route; the API key keeps its own budget', async () => {
    const user = await signUp(server.url); // signs up from 127.0.0.1: one of that address's two
    const session = { authorization: `Bearer ${user.token}` };
    // signUp() made one Client API request already (POST /api/keys).
    for (let remaining = 2; remaining >= 0; remaining--) {
      const response = await fetch(`${server.url}/api/buckets`, { headers: session });
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-limit')).toBe('4');
      expect(response.headers.get('ratelimit-remaining')).toBe(String(remaining));
    }
    for (const path of ['/api/buckets', '/api/keys', '/api/auth/me']) {
      const refused = await fetch(`${server.url}${path}`, { headers: session });
      expect(refused.status, path).toBe(429);
      expect(await json(refused)).toMatchObject({ error: 'Rate limit exceeded' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const cookie = await fetch(`${server.url}/api/buckets`, { headers: { cookie: user.cookie } });
    expect(cookie.status).toBe(429);
    expect((await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } })).status).toBe(200);
  });

  it('an address gets SIGNUP_RATE_LIMIT sign-ups an hour; another address is not held back', async () => {
    const signup = (from: string) => postFrom(from, `${server.url}/api/auth/signup`, { email: `new-${randomUUID()}@example.com`, password: 'long enough' });
    expect((await signup('127.0.0.3')).status).toBe(201);
    expect((await signup('127.0.0.3')).status).toBe(201);
    const refused = await signup('127.0.0.3');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'Rate limit exceeded' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
    expect((await signup('127.0.0.4')).status).toBe(201);
  });
});

describe('per-user limits on buckets and keys, and bad credentials per address', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ env: { MAX_BUCKETS_PER_USER: '2', MAX_KEYS_PER_USER: '2', PUBLIC_RATE_LIMIT: '3' } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('MAX_BUCKETS_PER_USER: racing creates never pass it; a deleted bucket frees its place', async () => {
    const user = await signUp(server.url);
    const dev = devApi(server.url, user);
    const created = await Promise.all(Array.from({ length: 5 }, (_, i) => dev('', { method: 'POST', body: JSON.stringify({ name: `race-${i}` }) })));
    const statuses = created.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 201, 403, 403, 403]);
    const refused = created.find((response) => response.status === 403)!;
    expect(await json(refused)).toEqual({ error: 'Limit reached: a user may have at most 2 buckets; delete one first', code: 'Forbidden' });
    const listed = (await json(await dev(''))).data as { id: number }[];
    expect(listed).toHaveLength(2);
    expect((await dev(`/${listed[0]!.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await dev('', { method: 'POST', body: JSON.stringify({ name: 'after-delete' }) })).status).toBe(201);
  });

  it('MAX_KEYS_PER_USER: a third live key is refused; revoking one frees its place', async () => {
    const user = await signUp(server.url); // one key already
    const keys = (init: RequestInit = {}, path = '') =>
      fetch(`${server.url}/api/keys${path}`, {
        ...init,
        headers: { authorization: `Bearer ${user.token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
      });
    const second = await keys({ method: 'POST', body: '{}' });
    expect(second.status).toBe(201);
    const third = await keys({ method: 'POST', body: '{}' });
    expect(third.status).toBe(403);
    expect((await json(third)).error).toBe('Limit reached: a user may have at most 2 API keys; delete one first');
    expect((await keys({ method: 'DELETE' }, `/${(await json(second)).data.id}`)).status).toBe(200);
    expect((await keys({ method: 'POST', body: '{}' })).status).toBe(201);
  });

  it("requests with an unknown key or token count against the address's budget: 401, then 429", async () => {
    const from = '127.0.0.5';
    const guess = (key: string) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(`${server.url}/api/v1/buckets`, { localAddress: from, headers: { 'x-api-key': key } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', reject);
        request.end();
      });
    for (let i = 0; i < 3; i++) expect(await guess(`pail_guess${i}`)).toBe(401);
    expect(await guess('pail_guess-again')).toBe(429);
    // Another address, and real keys, are not held back.
    const user = await signUp(server.url);
    expect((await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': user.apiKey } })).status).toBe(200);
  });
});

describe('login throttling (LOGIN_RATE_LIMIT)', () => {
  describe('per account, LOGIN_RATE_LIMIT=3', () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startTestServer({ env: { LOGIN_RATE_LIMIT: '3' } });
    });

    afterAll(async () => {
      await server?.close();
    });

    it('after 3 failures the account refuses even the right password with 429 and Retry-After', async () => {
      const user = await signUp(server.url);
      for (let i = 0; i < 3; i++) {
        // The address in another case is the same account.
        const response = await login(server.url, i === 1 ? user.email.toUpperCase() : user.email, `wrong ${i}`);
        expect(response.status).toBe(401);
        expect((await json(response)).error).toBe('Invalid email or password');
      }
      const blocked = await login(server.url, user.email, user.password);
      expect(blocked.status).toBe(429);
      expect(await json(blocked)).toMatchObject({ error: 'Rate limit exceeded' });
      expect(blocked.headers.getSetCookie()).toEqual([]);
      const retryAfter = Number(blocked.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(15 * 60);
      // Existing sessions and keys are not affected.
      expect((await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } })).status).toBe(200);
    });

    it('other accounts from the same address can still log in', async () => {
      const victim = await signUp(server.url);
      const other = await signUp(server.url);
      for (let i = 0; i < 3; i++) expect((await login(server.url, victim.email, 'wrong')).status).toBe(401);
      expect((await login(server.url, victim.email, victim.password)).status).toBe(429);
      expect((await login(server.url, other.email, 'wrong')).status).toBe(401);
      expect((await login(server.url, other.email, other.password)).status).toBe(200);
    });

    it('an account guessed at from one address still lets its owner in from another', async () => {
      const owner = await signUp(server.url);
      const guesser = '127.0.0.2';
      for (let i = 0; i < 3; i++) expect((await loginFrom(guesser, server.url, owner.email, `guess ${i}`)).status).toBe(401);
      // The guessing address is refused, even with the right password ...
      expect((await loginFrom(guesser, server.url, owner.email, owner.password)).status).toBe(429);
      // ... while the owner, from an address with no failures, logs in.
      const fromOwner = await loginFrom('127.0.0.1', server.url, owner.email, owner.password);
      expect(fromOwner.status).toBe(200);
      expect(fromOwner.body).toContain('"token"');
    });

    it('treats an unknown email the same way, so throttling tells nothing about which accounts exist', async () => {
      const ghost = `ghost-${randomUUID()}@example.com`;
      for (let i = 0; i < 3; i++) expect((await login(server.url, ghost, 'whatever1')).status).toBe(401);
      const blocked = await login(server.url, ghost, 'whatever1');
      expect(blocked.status).toBe(429);
      expect(await json(blocked)).toMatchObject({ error: 'Rate limit exceeded' });
    });
  });

  describe('under concurrency, LOGIN_RATE_LIMIT=3', () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startTestServer({ env: { LOGIN_RATE_LIMIT: '3' } });
    });

    afterAll(async () => {
      await server?.close();
    });

    it('a correct password between failures still works, and does not use up the address', async () => {
      // 20 attempts in all, more than the address's 15: successes are given back.
      const user = await signUp(server.url);
      for (let round = 0; round < 10; round++) {
        expect((await login(server.url, user.email, 'wrong password')).status).toBe(401);
        expect((await login(server.url, user.email, user.password)).status).toBe(200);
      }
    });

    it('holds under concurrency: simultaneous wrong guesses cannot get past the limit', async () => {
      const user = await signUp(server.url);
      const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => login(server.url, user.email, `guess number ${i}`)));
      const statuses = responses.map((r) => r.status);
      await Promise.all(responses.map((r) => r.arrayBuffer()));
      // At most the limit of guesses is ever checked; the rest are refused unseen.
      expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(1);
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(3);
      expect(statuses.filter((s) => s !== 401).every((s) => s === 429)).toBe(true);
      expect((await login(server.url, user.email, user.password)).status).toBe(429);
    });
  });

  describe('per address, LOGIN_RATE_LIMIT=2 (so 10 failures per IP)', () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startTestServer({ env: { LOGIN_RATE_LIMIT: '2' } });
    });

    afterAll(async () => {
      await server?.close();
    });

    it('after 10 failures spread over many accounts the address is refused, for every account', async () => {
      const user = await signUp(server.url);
      for (let i = 0; i < 10; i++) {
        // One failure per account: no account reaches its own limit.
        const response = await login(server.url, `spray-${i}-${randomUUID()}@example.com`, 'password1');
        expect(response.status, `failure ${i + 1}`).toBe(401);
      }
      const blocked = await login(server.url, user.email, user.password);
      expect(blocked.status).toBe(429);
      expect(await json(blocked)).toMatchObject({ error: 'Rate limit exceeded' });
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // X-Forwarded-For is not trusted by default, so it does not reset the count.
      expect((await login(server.url, user.email, user.password, { 'x-forwarded-for': '198.51.100.9' })).status).toBe(429);
    });
  });

  describe('defaults: 10 failures per account, 50 per address', () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startTestServer();
    });

    afterAll(async () => {
      await server?.close();
    });

    it('the 11th attempt on an account after 10 failures is refused', async () => {
      const user = await signUp(server.url);
      for (let i = 0; i < 10; i++) expect((await login(server.url, user.email, 'not it at all')).status, `failure ${i + 1}`).toBe(401);
      const blocked = await login(server.url, user.email, user.password);
      expect(blocked.status).toBe(429);
    });

    it('the address is refused after 50 failures in all', async () => {
      // 10 failures from the previous test, 40 more over accounts that stay under their own limit.
      const user = await signUp(server.url);
      for (let i = 0; i < 40; i++) {
        const response = await login(server.url, `spray-${i % 8}-default@example.com`, 'password1');
        expect(response.status, `failure ${i + 11}`).toBe(401);
      }
      const blocked = await login(server.url, user.email, user.password);
      expect(blocked.status).toBe(429);
    });
  });
});

describe('configuration', () => {
  it('RATE_LIMIT_WINDOW_SECONDS defaults to 60 and must be a positive whole number', () => {
    expect(loadConfig({}).rateLimitWindowSeconds).toBe(60);
    expect(loadConfig({ RATE_LIMIT_WINDOW_SECONDS: '5' }).rateLimitWindowSeconds).toBe(5);
    for (const bad of ['0', 'abc', '-1', '1.5']) {
      expect(() => loadConfig({ RATE_LIMIT_WINDOW_SECONDS: bad }), bad).toThrow(/RATE_LIMIT_WINDOW_SECONDS/);
    }
  });

  it('plan limits, PUBLIC_RATE_LIMIT and LOGIN_RATE_LIMIT are configurable and checked', () => {
    const config = loadConfig({
      PLAN_FREE_RATE_LIMIT: '1',
      PLAN_PLUS_RATE_LIMIT: '2',
      PLAN_PRO_RATE_LIMIT: '3',
      PLAN_MAX_RATE_LIMIT: '4',
      PUBLIC_RATE_LIMIT: '5',
      LOGIN_RATE_LIMIT: '6',
    });
    expect(Object.fromEntries(Object.entries(config.plans).map(([plan, l]) => [plan, l.ratePerMinute]))).toEqual({ free: 1, plus: 2, pro: 3, max: 4 });
    expect(config.publicRateLimit).toBe(5);
    expect(config.loginRateLimit).toBe(6);
    const defaults = loadConfig({});
    expect(Object.fromEntries(Object.entries(defaults.plans).map(([plan, l]) => [plan, l.ratePerMinute]))).toEqual({
      free: 100,
      plus: 200,
      pro: 500,
      max: 1500,
    });
    expect(defaults.publicRateLimit).toBe(600);
    expect(defaults.loginRateLimit).toBe(10);
    expect(defaults.clientRateLimit).toBe(600);
    expect(defaults.signupRateLimit).toBe(10);
    expect(loadConfig({ CLIENT_RATE_LIMIT: '7', SIGNUP_RATE_LIMIT: '8' })).toMatchObject({ clientRateLimit: 7, signupRateLimit: 8 });
    expect(defaults.signedUrlRateLimit).toBe(600);
    expect(loadConfig({ SIGNED_URL_RATE_LIMIT: '9' })).toMatchObject({ signedUrlRateLimit: 9 });
    expect(() => loadConfig({ SIGNED_URL_RATE_LIMIT: '0' })).toThrow(/SIGNED_URL_RATE_LIMIT/);
    expect(defaults).toMatchObject({ maxBucketsPerUser: 100, maxKeysPerUser: 100 });
    expect(loadConfig({ MAX_BUCKETS_PER_USER: '3', MAX_KEYS_PER_USER: '4' })).toMatchObject({ maxBucketsPerUser: 3, maxKeysPerUser: 4 });
    for (const name of [
      'PLAN_FREE_RATE_LIMIT',
      'PLAN_MAX_RATE_LIMIT',
      'PUBLIC_RATE_LIMIT',
      'LOGIN_RATE_LIMIT',
      'CLIENT_RATE_LIMIT',
      'SIGNUP_RATE_LIMIT',
      'MAX_BUCKETS_PER_USER',
      'MAX_KEYS_PER_USER',
    ]) {
      expect(() => loadConfig({ [name]: 'lots' }), name).toThrow(new RegExp(name));
      expect(() => loadConfig({ [name]: '0' }), name).toThrow(new RegExp(name));
    }
  });

  it('TRUST_PROXY is a hop count or the proxies\' addresses, never "trust everything"', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.5, 172.16.0.0/12,::1,loopback' }).trustProxy).toEqual(['10.0.0.5', '172.16.0.0/12', '::1', 'loopback']);
    for (const bad of ['true', 'yes', 'on']) expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY must be a hop count .* not true/);
    for (const bad of ['proxy.example.com', '10.0.0.0/33', '10.0.0.1/8/2', '1,,2']) expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
  });
});

describe('behind a proxy (TRUST_PROXY)', () => {
  for (const trust of ['1', '127.0.0.1']) {
    it(`TRUST_PROXY=${trust}: the client address is the one the proxy saw, and a client cannot choose its own`, async () => {
      const server = await startTestServer({ env: { TRUST_PROXY: trust, PUBLIC_RATE_LIMIT: '2' } });
      try {
        const owner = await signUp(server.url);
        const { storageUrl } = await publicFile(server.url, owner);
        const from = (chain: string) => fetch(storageUrl, { headers: { 'x-forwarded-for': chain } });
        expect((await from('198.51.100.1')).status).toBe(200);
        expect((await from('198.51.100.1')).status).toBe(200);
        expect((await from('198.51.100.1')).status).toBe(429);
        // Another client behind the proxy has its own budget.
        expect((await from('198.51.100.2')).status).toBe(200);
        // A client that writes its own X-Forwarded-For gets the proxy's entry appended: still itself.
        expect((await from('203.0.113.9, 198.51.100.1')).status).toBe(429);
      } finally {
        await server.close();
      }
    });
  }
});
