/**
 * `pail files tags`, `retention` and `legal-hold` (and, beside them, the commands on a file's versions and a
 * bucket's trash) against a running server on the same DATA_DIR: what the CLI
 * changes, the server's API shows at once, and the other way round.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devApi, json, signUp, type TestUser } from '../../server/test/helpers/client.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { recordsOf, startReceiver, type Receiver } from '../../server/test/helpers/webhook-receiver.js';
import { runCli } from '../src/run.js';

const DIST = fileURLToPath(new URL('../dist/main.js', import.meta.url));

let dataDir: string;
let server: TestServer;
let env: Record<string, string> = {};
let user: TestUser;
let api: ReturnType<typeof devApi>;
let bucketId: number;
let receiver: Receiver;

async function pail(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, LOG_LEVEL: 'silent', S3_API_PORT: 'off', ...env },
    cwd: path.dirname(dataDir),
    stdin: Readable.from([]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

async function ok(args: string[]): Promise<string> {
  const run = await pail(args);
  expect(run.stderr, `pail ${args.join(' ')}`).toBe('');
  expect(run.code, `pail ${args.join(' ')}`).toBe(0);
  return run.stdout;
}

async function fails(args: string[]): Promise<string> {
  const run = await pail(args);
  expect(run.code, `pail ${args.join(' ')}: ${run.stderr}`).toBe(1);
  return run.stderr.replace(/^pail: /, '').trimEnd();
}

beforeAll(async () => {
  if (!existsSync(DIST)) throw new Error('packages/cli is not built: run `npx tsc -b packages/cli`');
  dataDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'pail-cli-history-')), 'data');
  await mkdir(dataDir, { recursive: true });
  server = await startTestServer({ dataDir, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50' } });
  receiver = await startReceiver();
  const { database } = server.config;
  if (database.kind === 'postgres') env = { DATABASE_URL: database.url };
  user = await signUp(server.url);
  api = devApi(server.url, user);
  bucketId = (await json(await api('', { method: 'POST', body: JSON.stringify({ name: 'cli-history' }) }))).data.id;
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
  if (dataDir) await rm(path.dirname(dataDir), { recursive: true, force: true });
});

describe('pail files tags', { timeout: 120_000 }, () => {
  it('sets, gets and deletes a file’s tags; the server sees each change and the CLI sees the server’s', async () => {
    expect((await api(`/${bucketId}/files/docs/a.txt`, { method: 'PUT', body: 'a', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const tagsOnServer = async () => (await json(await api(`/${bucketId}/files/docs/a.txt/tags`))).data.tags;

    expect(await ok(['files', 'tags', 'get', user.email, 'cli-history', 'docs/a.txt'])).toBe('docs/a.txt has no tags.\n');
    expect(await ok(['files', 'tags', 'set', user.email, 'cli-history', 'docs/a.txt', 'stage=final', 'project=pail', 'empty='])).toBe(
      'empty    \nproject  pail\nstage    final\n',
    );
    expect(await tagsOnServer()).toEqual({ empty: '', project: 'pail', stage: 'final' });

    expect((await api(`/${bucketId}/files/docs/a.txt/tags`, { method: 'PUT', body: JSON.stringify({ tags: { owner: 'ada' } }) })).status).toBe(200);
    expect(JSON.parse(await ok(['files', 'tags', 'get', user.email, String(bucketId), 'docs/a.txt', '--json']))).toEqual({ tags: { owner: 'ada' } });
    expect(JSON.parse(await ok(['files', 'info', user.email, 'cli-history', 'docs/a.txt', '--json'])).tags).toEqual({ owner: 'ada' });

    expect(await ok(['files', 'tags', 'delete', user.email, 'cli-history', 'docs/a.txt'])).toBe('Removed the tags of docs/a.txt.\n');
    expect(await tagsOnServer()).toEqual({});
  });

  it('refuses what the server refuses: S3’s limits, a malformed tag, a missing file', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `k${i}=v`);
    expect(await fails(['files', 'tags', 'set', user.email, 'cli-history', 'docs/a.txt', ...eleven])).toMatch(/cannot be greater than 10/);
    expect(await fails(['files', 'tags', 'set', user.email, 'cli-history', 'docs/a.txt', `${'k'.repeat(129)}=v`])).toMatch(/too long/);
    expect(await fails(['files', 'tags', 'get', user.email, 'cli-history', 'missing.txt'])).toMatch(/not found/i);
    const malformed = await pail(['files', 'tags', 'set', user.email, 'cli-history', 'docs/a.txt', 'no-equals-sign']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/key=value/);
  });
});

describe('pail versions and pail trash', { timeout: 120_000 }, () => {
  it('turns versioning on, lists, downloads, restores and deletes versions, lists the trash; the server sees the same history', async () => {
    expect(await ok(['versions', 'enable', user.email, 'cli-history'])).toBe('Versioning of cli-history is enabled.\n');
    expect((await json(await api(`/${bucketId}`))).data.versioning).toBe('enabled');
    for (const body of ['first', 'second']) {
      expect((await api(`/${bucketId}/files/notes.txt`, { method: 'PUT', body, headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    }
    const listed = JSON.parse(await ok(['versions', 'list', user.email, 'cli-history', 'notes.txt', '--json'])) as {
      version_id: string;
      size: number;
      is_latest: boolean;
    }[];
    expect(listed.map((v) => [v.size, v.is_latest])).toEqual([
      [6, true],
      [5, false],
    ]);
    const older = listed[1]!.version_id;
    const table = await ok(['versions', 'list', user.email, 'cli-history', 'notes.txt']);
    expect(table.split('\n')[0]).toMatch(/^VERSION\s+WRITTEN\s+SIZE\s+STATE$/);
    expect(table).toContain(older);

    const out = path.join(path.dirname(dataDir), 'older.txt');
    expect(await ok(['versions', 'download', user.email, 'cli-history', 'notes.txt', older, '-o', out])).toMatch(/^Wrote .*older\.txt \(5 bytes\)\.\n$/);
    expect(await readFile(out, 'utf8')).toBe('first');

    expect(await ok(['versions', 'restore', user.email, 'cli-history', 'notes.txt', older])).toBe('Restored notes.txt (5 bytes).\n');
    expect(await (await api(`/${bucketId}/files/notes.txt`)).text()).toBe('first');
    expect((await json(await api(`/${bucketId}/files/notes.txt/versions`))).data).toHaveLength(3);

    expect(await ok(['versions', 'delete', user.email, 'cli-history', 'notes.txt', older])).toBe(`Deleted version ${older} of notes.txt for good.\n`);
    const left = (await json(await api(`/${bucketId}/files/notes.txt/versions`))).data as { version_id: string }[];
    expect(left.map((v) => v.version_id)).not.toContain(older);
    expect(await fails(['versions', 'restore', user.email, 'cli-history', 'notes.txt', older])).toMatch(/version/i);

    expect(await ok(['trash', user.email, 'cli-history'])).toBe('The trash is empty.\n');
    expect((await api(`/${bucketId}/files/notes.txt`, { method: 'DELETE' })).status).toBe(200);
    const [entry] = JSON.parse(await ok(['trash', user.email, 'cli-history', '--json'])) as {
      filename: string;
      deleted_by: string;
      restorable_version_id: string;
    }[];
    expect(entry).toMatchObject({ filename: 'notes.txt' });
    expect(entry!.deleted_by).toMatch(/^key:/);
    expect(await ok(['trash', user.email, 'cli-history'])).toMatch(/^FILE\s+DELETED\s+BY\s+SIZE\s+RESTORE VERSION\nnotes\.txt\s/);
    await ok(['versions', 'restore', user.email, 'cli-history', 'notes.txt', entry!.restorable_version_id]);
    expect(await (await api(`/${bucketId}/files/notes.txt`)).text()).toBe('first');

    expect(await ok(['versions', 'suspend', user.email, 'cli-history'])).toBe('Versioning of cli-history is suspended.\n');
    expect((await json(await api(`/${bucketId}`))).data.versioning).toBe('suspended');
  });

  it('announces a restore as object.restored and a version deleted for good as object.removed, as the server does', async () => {
    const made = await api('', { method: 'POST', body: JSON.stringify({ name: 'cli-hooked' }) });
    const hooked = (await json(made)).data.id as number;
    expect((await api(`/${hooked}`, { method: 'PATCH', body: JSON.stringify({ versioning: 'enabled' }) })).status).toBe(200);
    const events = ['object.created', 'object.removed', 'object.restored'];
    expect((await api(`/${hooked}/webhooks`, { method: 'POST', body: JSON.stringify({ url: receiver.url, events }) })).status).toBe(201);
    for (const body of ['first', 'second!']) expect((await api(`/${hooked}/files/notes.txt`, { method: 'PUT', body })).status).toBe(201);
    const [, older] = (await json(await api(`/${hooked}/files/notes.txt/versions`))).data as { version_id: string }[];

    await ok(['versions', 'restore', user.email, 'cli-hooked', 'notes.txt', older!.version_id]);
    await ok(['versions', 'delete', user.email, 'cli-hooked', 'notes.txt', older!.version_id]);
    const toBucket = () =>
      receiver
        .delivered()
        .flatMap(recordsOf)
        .filter((r) => r.s3.bucket.name === 'cli-hooked');
    await receiver.waitFor(() => toBucket().length >= 4, '4 events');
    expect(toBucket().map((r) => [r.pail.event, r.eventName, r.s3.object?.key])).toEqual([
      ['object.created', 's3:ObjectCreated:Put', 'notes.txt'],
      ['object.created', 's3:ObjectCreated:Put', 'notes.txt'],
      ['object.restored', 's3:ObjectRestore:Completed', 'notes.txt'],
      ['object.removed', 's3:ObjectRemoved:Delete', 'notes.txt'],
    ]);
  });
});

describe('pail files retention and pail files legal-hold', { timeout: 120_000 }, () => {
  it('shows, sets and extends a retention and puts on and lifts a legal hold; the server sees them, and a lock holds against the CLI too', async () => {
    const made = await api('', { method: 'POST', body: JSON.stringify({ name: 'cli-locked', object_lock: true }) });
    const locked = (await json(made)).data.id as number;
    for (const body of ['one', 'two']) expect((await api(`/${locked}/files/db.dump`, { method: 'PUT', body })).status).toBe(201);
    const [current, older] = (await json(await api(`/${locked}/files/db.dump/versions`))).data as { version_id: string }[];
    const details = async () => (await json(await api(`/${locked}/details/db.dump`))).data;

    expect(await ok(['files', 'retention', 'get', user.email, 'cli-locked', 'db.dump'])).toBe('db.dump has no retention.\n');
    const until = new Date(Date.now() + 2 * 86_400_000).toISOString();
    expect(await ok(['files', 'retention', 'set', user.email, 'cli-locked', 'db.dump', '--mode', 'compliance', '--until', until])).toBe(
      `db.dump: COMPLIANCE retention until ${until}.\n`,
    );
    expect((await details()).retention).toEqual({ mode: 'COMPLIANCE', retain_until: until });
    // COMPLIANCE only ever moves later; the operator is refused as anyone is, with until when.
    const earlier = new Date(Date.now() + 86_400_000).toISOString();
    const refused = await fails(['files', 'retention', 'set', user.email, 'cli-locked', 'db.dump', '--mode', 'COMPLIANCE', '--until', earlier]);
    expect(refused).toContain(`COMPLIANCE retention until ${until}`);
    expect(await fails(['versions', 'delete', user.email, 'cli-locked', 'db.dump', current!.version_id])).toContain(`until ${until}`);
    const later = new Date(Date.now() + 3 * 86_400_000).toISOString();
    await ok(['files', 'retention', 'set', user.email, String(locked), 'db.dump', '--mode', 'COMPLIANCE', '--until', later]);
    expect(JSON.parse(await ok(['files', 'retention', 'get', user.email, 'cli-locked', 'db.dump', '--json']))).toEqual({
      retention: { mode: 'COMPLIANCE', retain_until: later },
      legal_hold: false,
    });

    // An older version by --version: a legal hold on it, seen by the server, holding against the CLI's own delete.
    expect(await ok(['files', 'legal-hold', 'on', user.email, 'cli-locked', 'db.dump', '--version-id', older!.version_id])).toBe(
      'db.dump is under a legal hold.\n',
    );
    expect(await ok(['files', 'legal-hold', 'get', user.email, 'cli-locked', 'db.dump'])).toBe('db.dump has no legal hold.\n');
    expect((await api(`/${locked}/files/db.dump?version_id=${older!.version_id}`, { method: 'DELETE' })).status).toBe(403);
    expect(await fails(['versions', 'delete', user.email, 'cli-locked', 'db.dump', older!.version_id])).toContain('legal hold');
    expect(await ok(['files', 'legal-hold', 'off', user.email, 'cli-locked', 'db.dump', '--version-id', older!.version_id])).toBe(
      'db.dump has no legal hold.\n',
    );
    await ok(['versions', 'delete', user.email, 'cli-locked', 'db.dump', older!.version_id]);

    expect(await fails(['files', 'retention', 'set', user.email, 'cli-history', 'docs/a.txt', '--mode', 'GOVERNANCE', '--until', later])).toContain(
      'Object Lock',
    );
    const badMode = await pail(['files', 'retention', 'set', user.email, 'cli-locked', 'db.dump', '--mode', 'forever', '--until', later]);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toContain('must be GOVERNANCE or COMPLIANCE');
    expect(await fails(['files', 'legal-hold', 'on', user.email, 'cli-locked', 'db.dump', '--version-id', 'nope'])).toMatch(/version/i);
  });
});
