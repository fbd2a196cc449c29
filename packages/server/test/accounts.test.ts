/**
 * Accounts, sessions and API keys (decisions.md, "Accounts and sessions" and
 * "API keys"): signup, login, logout, me, the session cookie's attributes, and
 * the SDK page's key management.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createUser } from '../src/domain/users.js';
import { devApi, json, signUp } from './helpers/client.js';
import { freePort, startTestServer, type TestServer } from './helpers/server.js';

const GiB = 1024 ** 3;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const USER_FIELDS = ['created_at', 'email', 'id', 'plan', 'rate_limit_per_minute', 'storage_held_bytes', 'storage_limit_bytes', 'storage_used_bytes'];

let server: TestServer;

const email = () => `person-${randomUUID()}@example.com`;

function post(pathname: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function sessionCookie(response: Response): { value: string; attributes: string[]; raw: string } | undefined {
  const raw = response.headers.getSetCookie().find((c) => c.startsWith('pail_session='));
  if (!raw) return undefined;
  const [pair, ...attributes] = raw.split(';').map((s) => s.trim());
  return { value: pair!.slice('pail_session='.length), attributes: attributes.map((a) => a.toLowerCase()), raw };
}

function me(headers: Record<string, string>) {
  return fetch(`${server.url}/api/auth/me`, { headers });
}

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

describe('signup', () => {
  it('answers 201 {data: {user, token}} and sets the session cookie', async () => {
    const address = email();
    const response = await post('/api/auth/signup', { email: address, password: 'long enough' });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(Object.keys(body)).toEqual(['data']);
    expect(Object.keys(body.data).sort()).toEqual(['token', 'user']);
    const { user, token } = body.data;
    expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
    expect(user).toMatchObject({
      email: address,
      plan: 'free',
      storage_used_bytes: 0,
      storage_held_bytes: 0,
      storage_limit_bytes: GiB,
      // The test server's generous budget; rate-limits.test.ts checks the defaults.
      rate_limit_per_minute: server.config.plans.free.ratePerMinute,
    });
    expect(Number.isInteger(user.id)).toBe(true);
    expect(user.created_at).toMatch(ISO);
    expect(typeof token).toBe('string');
    expect(token.split('.')).toHaveLength(3); // a JWT

    const cookie = sessionCookie(response);
    expect(cookie).toBeDefined();
    expect(cookie!.value.length).toBeGreaterThan(0);
    // The new session works at once, by cookie and by token.
    expect((await me({ cookie: `pail_session=${cookie!.value}` })).status).toBe(200);
    expect((await me({ authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it('never returns the password or its hash', async () => {
    const response = await post('/api/auth/signup', { email: email(), password: 'hunter2hunter2' });
    const text = await response.text();
    expect(text).not.toContain('hunter2hunter2');
    expect(text).not.toMatch(/password|hash|scrypt|argon/i);
  });

  it('normalises the email: an address taken in another case is 409', async () => {
    const address = email();
    const first = await post('/api/auth/signup', { email: `  ${address.toUpperCase()} `, password: 'long enough' });
    expect(first.status).toBe(201);
    expect((await json(first)).data.user.email).toBe(address);
    for (const variant of [address, address.toUpperCase()]) {
      const again = await post('/api/auth/signup', { email: variant, password: 'another one' });
      expect(again.status).toBe(409);
      const body = await json(again);
      expect(typeof body.error).toBe('string');
      expect(again.headers.getSetCookie()).toEqual([]);
    }
  });

  it('lets exactly one of several simultaneous signups with one email through; the rest are 409', async () => {
    const address = email();
    const responses = await Promise.all(Array.from({ length: 6 }, () => post('/api/auth/signup', { email: address, password: 'long enough' })));
    const statuses = responses.map((r) => r.status).sort();
    await Promise.all(responses.map((r) => r.arrayBuffer()));
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
  });

  it('needs a password of at least 8 characters: 7 is 400, 8 is fine', async () => {
    const address = email();
    const short = await post('/api/auth/signup', { email: address, password: '1234567' });
    expect(short.status).toBe(400);
    expect((await json(short)).error).toMatch(/8/);
    expect(short.headers.getSetCookie()).toEqual([]);
    const ok = await post('/api/auth/signup', { email: address, password: '12345678' });
    expect(ok.status).toBe(201);
  });

  it('refuses missing or malformed input with 400 {error}', async () => {
    for (const body of [
      {},
      { email: email() },
      { password: 'long enough' },
      { email: 'not-an-email', password: 'long enough' },
      { email: 42, password: 'long enough' },
      { email: email(), password: 12345678 },
      '{not json',
      '[1,2]',
    ]) {
      const response = await post('/api/auth/signup', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(typeof (await json(response)).error).toBe('string');
    }
  });
});

describe('login', () => {
  it('answers 200 {data: {user, token}} with a fresh session cookie', async () => {
    const user = await signUp(server.url);
    const response = await post('/api/auth/login', { email: user.email, password: user.password });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(Object.keys(body.data).sort()).toEqual(['token', 'user']);
    expect(Object.keys(body.data.user).sort()).toEqual(USER_FIELDS);
    expect(body.data.user).toMatchObject({ id: user.id, email: user.email, plan: 'free' });
    expect(body.data.token).not.toBe(user.token); // a new session
    const cookie = sessionCookie(response);
    expect(cookie?.value).toBeTruthy();
    expect((await me({ authorization: `Bearer ${body.data.token}` })).status).toBe(200);
    expect((await me({ cookie: `pail_session=${cookie!.value}` })).status).toBe(200);
  });

  it('accepts the email in any case', async () => {
    const user = await signUp(server.url);
    const response = await post('/api/auth/login', { email: user.email.toUpperCase(), password: user.password });
    expect(response.status).toBe(200);
  });

  it('answers a wrong password and an unknown email alike: 401 Invalid email or password', async () => {
    const user = await signUp(server.url);
    const wrongPassword = await post('/api/auth/login', { email: user.email, password: 'not the password' });
    const unknownEmail = await post('/api/auth/login', { email: email(), password: user.password });
    expect(wrongPassword.status).toBe(401);
    expect(unknownEmail.status).toBe(401);
    const [a, b] = [await json(wrongPassword), await json(unknownEmail)];
    expect(a.error).toBe('Invalid email or password');
    expect(b).toEqual(a);
    expect(wrongPassword.headers.getSetCookie()).toEqual([]);
    expect(unknownEmail.headers.getSetCookie()).toEqual([]);
  });

  it('refuses malformed input with 400 {error}', async () => {
    for (const body of [{}, { email: email() }, { password: 'x' }, '{not json']) {
      const response = await post('/api/auth/login', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(typeof (await json(response)).error).toBe('string');
    }
  });
});

describe('me', () => {
  it('answers 200 {data: user} by cookie or by token, the same user as signup', async () => {
    const address = email();
    const signup = await post('/api/auth/signup', { email: address, password: 'long enough' });
    const { user, token } = (await json(signup)).data;
    const cookie = sessionCookie(signup)!;
    for (const headers of [{ authorization: `Bearer ${token}` }, { cookie: `pail_session=${cookie.value}` }] as Array<Record<string, string>>) {
      const response = await me(headers);
      expect(response.status).toBe(200);
      const body = await json(response);
      expect(Object.keys(body)).toEqual(['data']);
      expect(body.data).toEqual(user);
    }
  });

  it('shows the storage used', async () => {
    const user = await signUp(server.url);
    const dev = devApi(server.url, user);
    const bucket = (await json(await dev('', { method: 'POST', body: JSON.stringify({ name: 'usage' }) }))).data;
    expect(
      (await dev(`/${bucket.id}/files/a.bin`, { method: 'PUT', body: new Uint8Array(1234), headers: { 'content-type': 'application/octet-stream' } })).status,
    ).toBe(201);
    const body = await json(await me({ authorization: `Bearer ${user.token}` }));
    expect(body.data.storage_used_bytes).toBe(1234);
  });

  it('is 401 Unauthorized without a session, or with an API key', async () => {
    const user = await signUp(server.url);
    for (const headers of [
      {},
      { 'x-api-key': user.apiKey },
      { authorization: `Bearer ${user.apiKey}` },
      { authorization: 'Bearer nonsense' },
      { cookie: 'pail_session=nonsense' },
    ] as Array<Record<string, string>>) {
      const response = await me(headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect((await json(response)).error).toBe('Unauthorized');
    }
  });
});

describe('logout', () => {
  it('by token: 200 {message: Logged out}, clears the cookie, and the token and cookie of that session give 401', async () => {
    const user = await signUp(server.url);
    const response = await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${user.token}` } });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ message: 'Logged out' });
    const cleared = sessionCookie(response);
    expect(cleared).toBeDefined();
    expect(cleared!.value).toBe('');
    expect(cleared!.attributes.some((a) => a === 'max-age=0' || a.startsWith('expires=thu, 01 jan 1970'))).toBe(true);

    for (const headers of [{ authorization: `Bearer ${user.token}` }, { cookie: user.cookie }] as Array<Record<string, string>>) {
      expect((await me(headers)).status).toBe(401);
      expect((await fetch(`${server.url}/api/buckets`, { headers })).status).toBe(401);
      expect((await fetch(`${server.url}/api/keys`, { headers })).status).toBe(401);
    }
    // Logging out again with the dead token is just another 401.
    const again = await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${user.token}` } });
    expect(again.status).toBe(401);
  });

  it('by cookie (from the own origin) revokes the session, so its token gives 401 too', async () => {
    const user = await signUp(server.url);
    const response = await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers: { cookie: user.cookie, origin: server.url } });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ message: 'Logged out' });
    expect((await me({ authorization: `Bearer ${user.token}` })).status).toBe(401);
    expect((await me({ cookie: user.cookie })).status).toBe(401);
  });

  it('ends only its own session: other logins and the API keys keep working', async () => {
    const user = await signUp(server.url);
    const second = (await json(await post('/api/auth/login', { email: user.email, password: user.password }))).data.token;
    await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${user.token}` } });
    expect((await me({ authorization: `Bearer ${user.token}` })).status).toBe(401);
    expect((await me({ authorization: `Bearer ${second}` })).status).toBe(200);
    expect((await devApi(server.url, user)('')).status).toBe(200);
  });

  it('without a session is 401', async () => {
    const response = await fetch(`${server.url}/api/auth/logout`, { method: 'POST' });
    expect(response.status).toBe(401);
  });

  it('a session past its expiry is dead even though its token is still well signed', async () => {
    const user = await signUp(server.url);
    const { sid } = JSON.parse(Buffer.from(user.token.split('.')[1]!, 'base64url').toString('utf8')) as { sid: string };
    expect(typeof sid).toBe('string');
    await server.app.pail.db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', sid)
      .execute();
    for (const headers of [{ authorization: `Bearer ${user.token}` }, { cookie: user.cookie }] as Array<Record<string, string>>) {
      expect((await me(headers)).status).toBe(401);
      expect((await fetch(`${server.url}/api/buckets`, { headers })).status).toBe(401);
    }
    // API keys do not depend on the session.
    expect((await devApi(server.url, user)('')).status).toBe(200);
  });
});

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Lax, Path=/ and not Secure on an http public URL', async () => {
    for (const response of [
      await post('/api/auth/signup', { email: email(), password: 'long enough' }),
      await (async () => {
        const user = await signUp(server.url);
        return post('/api/auth/login', { email: user.email, password: user.password });
      })(),
    ]) {
      const cookie = sessionCookie(response)!;
      expect(cookie.attributes).toContain('httponly');
      expect(cookie.attributes).toContain('samesite=lax');
      expect(cookie.attributes).toContain('path=/');
      expect(cookie.attributes).not.toContain('secure');
    }
  });

  describe('behind https (PUBLIC_URL=https://…)', () => {
    let app: FastifyInstance;
    let dataDir: string;
    let url: string;

    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-test-https-'));
      const port = await freePort();
      // The TLS is a proxy's job; the server itself listens on plain http.
      const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: 'https://pail.example.com' });
      app = await buildApp(config, { logger: false });
      await app.listen({ port, host: '127.0.0.1' });
      url = `http://127.0.0.1:${port}`;
    });

    afterAll(async () => {
      await app?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it('is Secure, HttpOnly and SameSite=Lax on signup and on login', async () => {
      const address = email();
      const signup = await fetch(`${url}/api/auth/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: address, password: 'long enough' }),
      });
      expect(signup.status).toBe(201);
      const login = await fetch(`${url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: address, password: 'long enough' }),
      });
      expect(login.status).toBe(200);
      for (const response of [signup, login]) {
        const cookie = sessionCookie(response)!;
        expect(cookie.attributes).toContain('secure');
        expect(cookie.attributes).toContain('httponly');
        expect(cookie.attributes).toContain('samesite=lax');
      }
    });

    it('accepts cookie writes whose Origin is the public URL, and refuses others', async () => {
      const signup = await fetch(`${url}/api/auth/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: email(), password: 'long enough' }),
      });
      const cookie = `pail_session=${sessionCookie(signup)!.value}`;
      const create = (origin: string) =>
        fetch(`${url}/api/buckets`, {
          method: 'POST',
          headers: { cookie, origin, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `b-${randomUUID().slice(0, 8)}` }),
        });
      expect((await create('https://pail.example.com')).status).toBe(201);
      const refused = await create('http://pail.example.com');
      expect(refused.status).toBe(403);
      expect((await json(refused)).error).toBe('Cross-site request refused');
      expect((await create('https://evil.example.com')).status).toBe(403);
    });
  });
});

describe('closed signup (SIGNUP=closed)', () => {
  let closed: TestServer;

  beforeAll(async () => {
    closed = await startTestServer({ env: { SIGNUP: 'closed' } });
  });

  afterAll(async () => {
    await closed?.close();
  });

  it('refuses signup with 403 {error} and sets no cookie', async () => {
    const response = await fetch(`${closed.url}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: email(), password: 'long enough' }),
    });
    expect(response.status).toBe(403);
    expect(typeof (await json(response)).error).toBe('string');
    expect(response.headers.getSetCookie()).toEqual([]);
  });

  it('still lets an operator-made user log in', async () => {
    const address = email();
    await createUser(closed.app.pail.db, { email: address, password: 'made by operator' });
    const response = await fetch(`${closed.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: address, password: 'made by operator' }),
    });
    expect(response.status).toBe(200);
    expect((await json(response)).data.user.email).toBe(address);
  });
});

describe('API keys (/api/keys)', () => {
  const keys = (token: string, pathname = '', init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${server.url}/api/keys${pathname}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, ...(typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}), ...init.headers },
    });

  it('POST creates a key: 201 {data: {id, name, prefix, key, access_key_id, secret_access_key, created_at}}, and the key opens the Developer API', async () => {
    const user = await signUp(server.url);
    const response = await keys(user.token, '', { method: 'POST', body: JSON.stringify({ name: 'ci deploy' }) });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(Object.keys(body)).toEqual(['data']);
    expect(Object.keys(body.data).sort()).toEqual([
      'access_key_id',
      'buckets',
      'created_at',
      'expires_at',
      'id',
      'key',
      'name',
      'permissions',
      'prefix',
      'secret_access_key',
    ]);
    expect(body.data).toMatchObject({ buckets: null, permissions: ['read', 'write', 'delete', 'manage'], expires_at: null });
    // The S3 credential made with it (s3-api.test.ts uses it): an AWS-shaped access key id and a 40-character secret.
    expect(body.data.access_key_id).toMatch(/^[A-Z2-7]{20}$/);
    expect(body.data.secret_access_key).toMatch(/^[A-Za-z0-9_-]{40}$/);
    const { id, name, prefix, key, created_at } = body.data;
    expect(Number.isInteger(id)).toBe(true);
    expect(name).toBe('ci deploy');
    expect(created_at).toMatch(ISO);
    expect(key.startsWith(prefix)).toBe(true);
    expect(prefix.length).toBeGreaterThan(0);
    expect(prefix.length).toBeLessThan(16);
    expect(key.length).toBeGreaterThanOrEqual(32);
    const dev = await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': key } });
    expect(dev.status).toBe(200);
    const bearer = await fetch(`${server.url}/api/v1/buckets`, { headers: { authorization: `Bearer ${key}` } });
    expect(bearer.status).toBe(200);
  });

  it('POST without a name gives a default name; a bad name is 400', async () => {
    const user = await signUp(server.url);
    const unnamed = await keys(user.token, '', { method: 'POST', body: JSON.stringify({}) });
    expect(unnamed.status).toBe(201);
    expect(typeof (await json(unnamed)).data.name).toBe('string');
    for (const name of [42, '   ', 'x'.repeat(101)]) {
      const bad = await keys(user.token, '', { method: 'POST', body: JSON.stringify({ name }) });
      expect(bad.status, JSON.stringify(name)).toBe(400);
      expect(typeof (await json(bad)).error).toBe('string');
    }
  });

  it('every key is different', async () => {
    const user = await signUp(server.url);
    const made = await Promise.all([1, 2, 3].map(() => keys(user.token, '', { method: 'POST', body: JSON.stringify({ name: 'k' }) }).then(json)));
    const secrets = new Set(made.map((m) => m.data.key));
    expect(secrets.size).toBe(3);
  });

  it('GET lists {id, name, prefix, access_key_id, created_at, last_used_at}, never the key, its hash or the S3 secret', async () => {
    const user = await signUp(server.url);
    const created = (await json(await keys(user.token, '', { method: 'POST', body: JSON.stringify({ name: 'second' }) }))).data;
    const response = await keys(user.token);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain(user.apiKey);
    expect(text).not.toContain(created.key);
    expect(text).not.toContain(created.key.slice(created.prefix.length));
    expect(text).not.toMatch(/hash/i);
    expect(text).not.toContain(created.secret_access_key);
    expect(text).not.toMatch(/secret|sealed/i);
    const body = JSON.parse(text);
    expect(Object.keys(body)).toEqual(['data']);
    expect(body.data).toHaveLength(2);
    for (const item of body.data) {
      expect(Object.keys(item).sort()).toEqual(['access_key_id', 'buckets', 'created_at', 'expires_at', 'id', 'last_used_at', 'name', 'permissions', 'prefix']);
    }
    expect(body.data.map((k: { name: string }) => k.name)).toEqual(['test', 'second']);
    const listed = body.data[1];
    expect(listed).toEqual({
      id: created.id,
      name: 'second',
      prefix: created.prefix,
      access_key_id: created.access_key_id,
      created_at: created.created_at,
      last_used_at: null,
      buckets: null,
      permissions: ['read', 'write', 'delete', 'manage'],
      expires_at: null,
    });
    expect(user.apiKey.startsWith(body.data[0].prefix)).toBe(true);
  });

  it('GET shows last_used_at once a key has been used', async () => {
    const user = await signUp(server.url);
    expect((await devApi(server.url, user)('')).status).toBe(200);
    let lastUsed: string | null = null;
    // Recorded after the request is answered, without holding it up.
    for (const deadline = Date.now() + 10_000; lastUsed === null && Date.now() < deadline;) {
      lastUsed = (await json(await keys(user.token))).data[0].last_used_at;
      if (lastUsed === null) await new Promise((r) => setTimeout(r, 50));
    }
    expect(lastUsed).toMatch(ISO);
  });

  it('only other keys of the same user: each user sees only their own keys', async () => {
    const a = await signUp(server.url);
    const b = await signUp(server.url);
    const listA = (await json(await keys(a.token))).data;
    const listB = (await json(await keys(b.token))).data;
    const idsA = listA.map((k: { id: number }) => k.id);
    for (const k of listB) expect(idsA).not.toContain(k.id);
  });

  it('DELETE revokes: 200 {message: API key revoked}, then the key gives 401 and is no longer listed', async () => {
    const user = await signUp(server.url);
    const created = (await json(await keys(user.token, '', { method: 'POST', body: JSON.stringify({ name: 'short-lived' }) }))).data;
    expect((await fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': created.key } })).status).toBe(200);

    const response = await keys(user.token, `/${created.id}`, { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ message: 'API key revoked' });

    for (const headers of [{ 'x-api-key': created.key }, { authorization: `Bearer ${created.key}` }] as Array<Record<string, string>>) {
      const after = await fetch(`${server.url}/api/v1/buckets`, { headers });
      expect(after.status).toBe(401);
      expect((await json(after)).error).toBe('Unauthorized');
    }
    const list = (await json(await keys(user.token))).data;
    expect(list.map((k: { id: number }) => k.id)).not.toContain(created.id);
    // The user's other key is untouched.
    expect((await devApi(server.url, user)('')).status).toBe(200);
    // Revoking again: the key is gone.
    const again = await keys(user.token, `/${created.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
  });

  it("another user's key id is 404, and that key keeps working", async () => {
    const owner = await signUp(server.url);
    const other = await signUp(server.url);
    const [ownerKey] = (await json(await keys(owner.token))).data;
    const response = await keys(other.token, `/${ownerKey.id}`, { method: 'DELETE' });
    expect(response.status).toBe(404);
    expect(typeof (await json(response)).error).toBe('string');
    expect((await devApi(server.url, owner)('')).status).toBe(200);
    expect((await json(await keys(owner.token))).data.map((k: { id: number }) => k.id)).toContain(ownerKey.id);
  });

  it('an unknown or malformed key id is 404', async () => {
    const user = await signUp(server.url);
    for (const id of ['999999', 'abc', '0', '-1', '1.5', '9999999999999999', '99999999999999999999']) {
      const response = await keys(user.token, `/${id}`, { method: 'DELETE' });
      expect(response.status, id).toBe(404);
      expect(typeof (await json(response)).error).toBe('string');
    }
  });

  it('needs a session: no credentials or an API key is 401 (a key cannot mint or revoke keys)', async () => {
    const user = await signUp(server.url);
    const [own] = (await json(await keys(user.token))).data;
    for (const headers of [{}, { 'x-api-key': user.apiKey }, { authorization: `Bearer ${user.apiKey}` }] as Array<Record<string, string>>) {
      expect((await fetch(`${server.url}/api/keys`, { headers })).status).toBe(401);
      expect((await fetch(`${server.url}/api/keys`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' })).status).toBe(
        401,
      );
      expect((await fetch(`${server.url}/api/keys/${own.id}`, { method: 'DELETE', headers })).status).toBe(401);
    }
    expect((await devApi(server.url, user)('')).status).toBe(200);
  });

  it('works by cookie too', async () => {
    const user = await signUp(server.url);
    const list = await fetch(`${server.url}/api/keys`, { headers: { cookie: user.cookie } });
    expect(list.status).toBe(200);
    const created = await fetch(`${server.url}/api/keys`, {
      method: 'POST',
      headers: { cookie: user.cookie, origin: server.url, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'from dashboard' }),
    });
    expect(created.status).toBe(201);
  });

  it("a key acts for its owner: it sees only the owner's buckets", async () => {
    const a = await signUp(server.url);
    const b = await signUp(server.url);
    const bucket = (await json(await devApi(server.url, a)('', { method: 'POST', body: JSON.stringify({ name: 'owned-by-a' }) }))).data;
    const fromB = await devApi(server.url, b)(`/${bucket.id}`);
    expect(fromB.status).toBe(404);
    expect((await json(fromB)).error).toBe('Bucket not found');
    const listB = (await json(await devApi(server.url, b)(''))).data;
    expect(listB.map((x: { id: number }) => x.id)).not.toContain(bucket.id);
  });
});
