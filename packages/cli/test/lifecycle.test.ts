/**
 * `pail lifecycle get|set|delete|run` over the test server's own database:
 * the rules the Pail API shows, set from a file or stdin, refused when wrong,
 * and one pass of the sweep applying them.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signUp, type TestUser } from '../../server/test/helpers/client.js';
import type { TestServer } from '../../server/test/helpers/server.js';
import { startCliServer, type CliServer } from './helpers/cli-server.js';

let cli: CliServer;
let server: TestServer;
let dataDir: string;
let user: TestUser;

beforeAll(async () => {
  cli = await startCliServer('pail-cli-lc-');
  ({ server, dataDir } = cli);
  user = await signUp(server.url);
}, 60_000);
afterAll(async () => {
  await cli?.close();
});

const pail = (args: string[], input = '') => cli.pail(args, Readable.from(input ? [Buffer.from(input)] : []));

const api = (pathname: string, init: RequestInit = {}) =>
  fetch(`${server.url}/api/v1/buckets${pathname}`, { ...init, headers: { 'x-api-key': user.apiKey, 'content-type': 'application/json' } });

it('sets rules from a file or stdin, shows and removes them, refuses wrong ones, and applies them with run', { timeout: 120_000 }, async () => {
  const bucket = (await (await api('', { method: 'POST', body: JSON.stringify({ name: 'cli-lifecycle' }) })).json()).data;
  const file = path.join(path.dirname(dataDir), 'rules.json');
  const rules = [{ id: 'all', status: 'enabled', filter: { prefix: 'old/' }, expiration: { date: '2020-01-01' } }];
  await writeFile(file, JSON.stringify({ rules }));
  expect(await pail(['lifecycle', 'set', user.email, 'cli-lifecycle', file])).toEqual({ code: 0, stdout: 'Set 1 lifecycle rule: all.\n', stderr: '' });
  const shown = await pail(['lifecycle', 'get', user.email, String(bucket.id)]);
  const kept = [{ ...rules[0], expiration: { date: '2020-01-01T00:00:00.000Z' } }];
  expect(JSON.parse(shown.stdout)).toEqual({ rules: kept });
  expect((await (await api(`/${bucket.id}/lifecycle`)).json()).data).toEqual({ rules: kept });

  const wrong = await pail(['lifecycle', 'set', user.email, 'cli-lifecycle', '-'], JSON.stringify([{ status: 'enabled', expiration: { days: 'soon' } }]));
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toMatch(/^pail: The lifecycle rules do not fit the schema/);

  await api(`/${bucket.id}/files/old/a.txt`, { method: 'PUT', body: 'aaa' });
  await api(`/${bucket.id}/files/new/b.txt`, { method: 'PUT', body: 'bbb' });
  expect(await pail(['lifecycle', 'run'])).toMatchObject({
    code: 0,
    stdout: expect.stringMatching(/^Expired 1 file and 0 old versions, removed 0 expired delete markers and aborted 0 multipart uploads\.\n$/),
  });
  const files = (await (await api(`/${bucket.id}/files`)).json()).data.map((item: { filename: string }) => item.filename);
  expect(files).toEqual(['new/b.txt']);

  expect(await pail(['lifecycle', 'delete', user.email, 'cli-lifecycle'])).toMatchObject({ code: 0 });
  expect((await pail(['lifecycle', 'get', user.email, 'cli-lifecycle'])).stdout).toBe('The bucket has no lifecycle rules.\n');
});
