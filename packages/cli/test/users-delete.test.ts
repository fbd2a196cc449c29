/**
 * `pail users delete` over the test server's own database and blobs: it asks
 * first (the email typed again on a terminal; elsewhere `--yes`), deletes the
 * account so the running server answers its key with 401 and its public url
 * with nothing, frees the email, and is refused, changing nothing, while the
 * user holds a locked version.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signUp, type TestUser } from '../../server/test/helpers/client.js';
import type { TestServer } from '../../server/test/helpers/server.js';
import { startCliServer, type CliServer } from './helpers/cli-server.js';

let cli: CliServer;
let server: TestServer;

beforeAll(async () => {
  cli = await startCliServer('pail-cli-userdel-');
  server = cli.server;
}, 60_000);
afterAll(async () => {
  await cli?.close();
});

/** `pail <args>`; `typed`: stdin is a terminal and this is what the operator types. */
const pail = (args: string[], typed?: string) =>
  cli.pail(args, typed === undefined ? Readable.from([]) : Object.assign(Readable.from([Buffer.from(typed)]), { isTTY: true }));

const api = (user: TestUser, pathname: string, init: RequestInit = {}) =>
  fetch(`${server.url}/api/v1/buckets${pathname}`, { ...init, headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' } });

/** A user with a public bucket holding one file; its public url. */
async function userWithFile(): Promise<{ user: TestUser; bucket: number; url: string }> {
  const user = await signUp(server.url);
  const bucket = (await (await api(user, '', { method: 'POST', body: JSON.stringify({ name: 'photos', public: true }) })).json()).data.id as number;
  expect((await api(user, `/${bucket}/files/a.txt`, { method: 'PUT', body: 'hello' })).status).toBe(201);
  const url = (await (await api(user, `/${bucket}/files`)).json()).data[0].url as string;
  expect(await (await fetch(url)).text()).toBe('hello');
  return { user, bucket, url };
}

it('asks first: without a terminal it needs --yes, on one the email typed again; a wrong answer deletes nothing', { timeout: 120_000 }, async () => {
  const { user, bucket } = await userWithFile();
  const held = '1 bucket (1 file, 5 bytes), 1 API key, 1 session, 0 unfinished uploads';
  expect(await pail(['users', 'delete', user.email])).toEqual({
    code: 1,
    stdout: '',
    stderr: `pail: not deleted: pass --yes to delete ${user.email} and its ${held}\n`,
  });

  const wrong = await pail(['users', 'delete', user.email], 'someone@example.com\n');
  expect(wrong).toEqual({
    code: 1,
    stdout: `${user.email} has ${held}. All of it is deleted for good.\nType the email again to delete the account: `,
    stderr: 'pail: not deleted: the email typed did not match\n',
  });
  expect((await api(user, `/${bucket}/files/a.txt`)).status).toBe(200);

  const typed = await pail(['users', 'delete', user.email], `${user.email.toUpperCase()}\n`);
  expect(typed.code).toBe(0);
  expect(typed.stdout).toMatch(
    new RegExp(
      `Deleted user ${user.id} ${user.email.replace(/\./g, '\\.')}: 1 bucket, 1 API key revoked, 1 session ended, 0 unfinished uploads aborted\\.\\nIts audit log stays: pail audit deleted-user-${user.id}\\n$`,
    ),
  );
  expect((await api(user, '')).status).toBe(401);
});

it(
  '--yes deletes at once: the running server refuses the key and serves nothing of the bucket, the list drops the user, the email is free',
  { timeout: 120_000 },
  async () => {
    const { user, url } = await userWithFile();
    const other = await userWithFile();
    const deleted = await pail(['users', 'delete', user.email, '--yes']);
    expect(deleted).toEqual({
      code: 0,
      stdout: `Deleted user ${user.id} ${user.email}: 1 bucket, 1 API key revoked, 1 session ended, 0 unfinished uploads aborted.\nIts audit log stays: pail audit deleted-user-${user.id}\n`,
      stderr: '',
    });
    expect((await api(user, '')).status).toBe(401);
    const anonymous = await fetch(url);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain('hello');
    expect((await fetch(url, { headers: { 'x-api-key': other.user.apiKey } })).status).toBe(404);
    expect(await (await fetch(other.url)).text()).toBe('hello');

    const listed = JSON.parse((await pail(['users', 'list', '--json'])).stdout) as { email: string }[];
    expect(listed.map((row) => row.email)).toContain(other.user.email);
    expect(listed.map((row) => row.email)).not.toContain(user.email);
    expect(await pail(['users', 'delete', user.email, '--yes'])).toEqual({ code: 1, stdout: '', stderr: `pail: no user with email ${user.email}\n` });
    // The old account's log stays for the operator, ending with the deletion.
    const log = JSON.parse((await pail(['audit', `deleted-user-${user.id}`, '--json'])).stdout) as {
      data: { actor: string; action: string; details: unknown }[];
    };
    expect(log.data[0]).toMatchObject({ actor: 'operator', action: 'user.deleted', details: { email: user.email, buckets: 1, keys: 1 } });
    expect(log.data.map((entry) => entry.action)).toContain('bucket.deleted');
    expect((await pail(['audit', `deleted-user-${other.user.id}`])).stderr).toBe(`pail: no user with email deleted-user-${other.user.id}\n`);
    const again = await pail(['users', 'create', user.email, '--password', 'a new password']);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain(`user ${user.id} `);
  },
);

it('is refused, with the date, while the user holds a COMPLIANCE-locked version, with or without --yes; nothing changes', { timeout: 120_000 }, async () => {
  const { user, bucket, url } = await userWithFile();
  const locked = (await (await api(user, '', { method: 'POST', body: JSON.stringify({ name: 'vault', object_lock: true }) })).json()).data.id as number;
  expect((await api(user, `/${locked}/files/deed.pdf`, { method: 'PUT', body: 'deed' })).status).toBe(201);
  const until = new Date(Date.now() + 7 * 86_400_000).toISOString();
  const set = await api(user, `/${locked}/retention/deed.pdf`, { method: 'PUT', body: JSON.stringify({ mode: 'COMPLIANCE', retain_until: until }) });
  expect(set.status).toBe(200);

  const message = `pail: This user holds versions under COMPLIANCE retention until ${until} (object lock); it can be deleted after ${until}\n`;
  expect(await pail(['users', 'delete', user.email, '--yes'])).toEqual({ code: 1, stdout: '', stderr: message });
  expect(await pail(['users', 'delete', user.email])).toEqual({ code: 1, stdout: '', stderr: message });
  expect((await api(user, `/${bucket}/files/a.txt`)).status).toBe(200);
  expect(await (await fetch(url)).text()).toBe('hello');
  expect((await api(user, `/${locked}/files/deed.pdf`)).status).toBe(200);
});
