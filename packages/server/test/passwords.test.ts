/**
 * Passwords are hashed at production's scrypt cost (N=16384, r=8, p=1) unless
 * the app is built with another: test servers are (helpers/server.ts), so
 * their sign-ups cost nothing, and this suite shows that a server built
 * without one, as main.ts builds it, still pays production's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, PASSWORD_COST, verifyPassword } from '../src/domain/passwords.js';
import { signUp } from './helpers/client.js';
import { startTestServer, TEST_PASSWORD_COST, type TestServer } from './helpers/server.js';

const storedHash = async (server: TestServer, email: string) =>
  (await server.app.pail.db.selectFrom('users').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow()).password_hash;

describe('the password hash', () => {
  it("is production's scrypt cost unless told otherwise: N=16384, r=8, p=1", async () => {
    expect(PASSWORD_COST).toEqual({ N: 16384, r: 8, p: 1 });
    const stored = await hashPassword('correct horse');
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(await verifyPassword('correct horse', stored)).toBe(true);
    expect(await verifyPassword('wrong horse', stored)).toBe(false);
  });

  it('is checked at the cost it was made with, so a cheaper one verifies too', async () => {
    const stored = await hashPassword('correct horse', TEST_PASSWORD_COST);
    expect(stored).toMatch(/^scrypt\$2\$1\$1\$/);
    expect(await verifyPassword('correct horse', stored)).toBe(true);
    expect(await verifyPassword('wrong horse', stored)).toBe(false);
  });
});

describe('sign-ups', () => {
  let production: TestServer;
  let test: TestServer;

  beforeAll(async () => {
    [production, test] = await Promise.all([startTestServer({ productionPasswordCost: true }), startTestServer()]);
  });
  afterAll(async () => {
    await Promise.all([production?.close(), test?.close()]);
  });

  it("on a server built without a password cost are stored at production's, and log in", async () => {
    const user = await signUp(production.url);
    expect(await storedHash(production, user.email)).toMatch(/^scrypt\$16384\$8\$1\$/);
    const login = await fetch(`${production.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    expect(login.status).toBe(200);
  });

  it('on a test server are stored at the test cost, and log in the same way', async () => {
    const user = await signUp(test.url);
    expect(await storedHash(test, user.email)).toMatch(/^scrypt\$2\$1\$1\$/);
    const login = await fetch(`${test.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    expect(login.status).toBe(200);
  });
});
