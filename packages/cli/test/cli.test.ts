/**
 * The `pail` command against a temporary DATA_DIR: mostly its whole program
 * (runCli) in this process, over the environment and streams the binary
 * would get; a few tests run the real binary as a child process (node
 * packages/cli/bin/pail.js, built by `tsc -b`) for what only the process
 * shows: its exit codes, stderr, stdin, the .env file, `serve`. Where a
 * running server is needed, an in-process test server shares that DATA_DIR
 * and so the same SQLite file.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beginUpload, storePart } from '../../server/src/domain/multipart.js';
import { createResumableUpload, newResumableId } from '../../server/src/domain/resumable-uploads.js';
import { freePort, startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { unzip } from '../../server/test/helpers/unzip.js';
import { runCli } from '../src/run.js';

const BIN = fileURLToPath(new URL('../bin/pail.js', import.meta.url));
const DIST = fileURLToPath(new URL('../dist/main.js', import.meta.url));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Settings the commands must share with the test server beyond DATA_DIR (its
 * database, when a test backend other than the embedded SQLite is chosen).
 */
let sharedEnv: Record<string, string> = {};

/** A minimal environment: nothing of the caller's PORT, DATABASE_URL, … leaks in. */
function cliEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, LOG_LEVEL: 'silent', S3_API_PORT: 'off', ...sharedEnv, ...extra };
}

interface RunOptions {
  env?: Record<string, string>;
  /** What stdin carries (a pipe, closed after it), as `printf … | pail …`. */
  input?: string;
  /** Run the real binary as a child process instead of runCli in this process. */
  binary?: boolean;
}

/**
 * runCli in this process, as the binary runs it: the same arguments, the
 * environment the child would get, its working directory (for the
 * configuration; no .env file is read, there is none there), stdin a pipe.
 */
async function pail(dataDir: string, args: string[], options: RunOptions = {}): Promise<Run> {
  if (options.binary) return pailBinary(dataDir, args, options);
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env: cliEnv(dataDir, options.env),
    cwd: path.dirname(dataDir),
    stdin: Readable.from(options.input ? [Buffer.from(options.input)] : []),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, signal: null, stdout, stderr };
}

/** The real binary: node packages/cli/bin/pail.js as a child process. */
function pailBinary(dataDir: string, args: string[], options: RunOptions = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    // cwd is the data directory's parent: no stray .env file is picked up.
    const child = spawn(process.execPath, [BIN, ...args], { cwd: path.dirname(dataDir), env: cliEnv(dataDir, options.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Exit 0, nothing on stderr. */
async function ok(dataDir: string, args: string[], options?: RunOptions): Promise<string> {
  const run = await pail(dataDir, args, options);
  expect(run.stderr, `pail ${args.join(' ')}`).toBe('');
  expect(run.code, `pail ${args.join(' ')}`).toBe(0);
  return run.stdout;
}

/** Exit 1 with exactly one line on stderr, `pail: <message>`; returns the message. */
async function fails(dataDir: string, args: string[], options?: RunOptions): Promise<string> {
  const run = await pail(dataDir, args, options);
  expect(run.code, `pail ${args.join(' ')}: ${run.stderr}`).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^pail: [^\n]+\n$/);
  return run.stderr.slice('pail: '.length).trimEnd();
}

async function tempDataDir(): Promise<string> {
  const parent = await mkdtemp(path.join(os.tmpdir(), 'pail-cli-'));
  return path.join(parent, 'data');
}

beforeAll(() => {
  if (!existsSync(DIST)) throw new Error('packages/cli is not built: run `npx tsc -b packages/cli` (npm test does it first)');
});

// A test with several commands, or a child process, takes a while on a busy machine.
const SLOW = { timeout: 120_000 };

describe('pail with a running server on the same DATA_DIR', SLOW, () => {
  let dataDir: string;
  let server: TestServer;

  const login = (email: string, password: string) =>
    fetch(`${server.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
  const tokenOf = async (email: string, password: string) => ((await (await login(email, password)).json()) as { data: { token: string } }).data.token;
  const listBuckets = (key: string) => fetch(`${server.url}/api/v1/buckets`, { headers: { 'x-api-key': key } });

  beforeAll(async () => {
    dataDir = await tempDataDir();
    await mkdir(dataDir, { recursive: true });
    server = await startTestServer({ dataDir });
    const { database } = server.config;
    if (database.kind === 'postgres') sharedEnv = { DATABASE_URL: database.url };
  });
  afterAll(async () => {
    sharedEnv = {};
    await server?.close();
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  it('creates a user with --password, and the server accepts the password', async () => {
    const out = await ok(dataDir, ['users', 'create', 'Alice@Example.com', '--password', 'correct horse']);
    expect(out).toMatch(/^Created user \d+ alice@example\.com on the free plan\.\n$/);
    expect(out).not.toContain('correct horse');
    expect((await login('alice@example.com', 'correct horse')).status).toBe(200);
  });

  it('reads the password from stdin when it is piped', async () => {
    // The binary: its own stdin, a pipe.
    const out = await ok(dataDir, ['users', 'create', 'piped@example.com'], { input: 'from-stdin-123\n', binary: true });
    expect(out).not.toContain('from-stdin-123');
    expect((await login('piped@example.com', 'from-stdin-123')).status).toBe(200);
  });

  it('generates a strong password and prints it once when none is given', async () => {
    const out = await ok(dataDir, ['users', 'create', 'generated@example.com']);
    const match = /Generated password \(shown only this once\): (\S+)\n$/.exec(out);
    expect(match).not.toBeNull();
    const password = match![1]!;
    expect(password.length).toBeGreaterThanOrEqual(20);
    expect((await login('generated@example.com', password)).status).toBe(200);
  });

  it('creates a user on a chosen plan', async () => {
    const out = await ok(dataDir, ['users', 'create', 'pro@example.com', '--password', 'password-pro', '--plan', 'pro']);
    expect(out).toContain('on the pro plan');
  });

  it('lists users as a table with plan, usage, limit, rate limit and creation time', async () => {
    const out = await ok(dataDir, ['users', 'list']);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+EMAIL\s+PLAN\s+USED \/ LIMIT\s+HELD\s+RATE LIMIT\s+CREATED$/);
    const alice = lines.find((line) => line.includes('alice@example.com'));
    expect(alice).toMatch(/^\d+\s+alice@example\.com\s+free\s+0 bytes \/ 1 GiB\s+0 bytes\s+100\/min\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(lines.find((line) => line.includes('pro@example.com'))).toMatch(/\bpro\s+0 bytes \/ 100 GiB\s+0 bytes\s+500\/min/);
  });

  it('lists users as JSON, the same user objects as the API', async () => {
    const users = JSON.parse(await ok(dataDir, ['users', 'list', '--json'])) as Array<Record<string, unknown>>;
    expect(users.map((user) => user.email)).toEqual(['alice@example.com', 'piped@example.com', 'generated@example.com', 'pro@example.com']);
    expect(users[0]).toEqual({
      id: expect.any(Number),
      email: 'alice@example.com',
      plan: 'free',
      storage_used_bytes: 0,
      storage_held_bytes: 0,
      storage_limit_bytes: 1024 ** 3,
      rate_limit_per_minute: 100,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('changes a plan, and the server sees the new limits', async () => {
    const out = await ok(dataDir, ['users', 'set-plan', 'alice@example.com', 'plus']);
    expect(out).toBe('alice@example.com is now on the plus plan: 10 GiB of storage (0 bytes used), 200 requests per minute.\n');
    const response = await login('alice@example.com', 'correct horse');
    const body = (await response.json()) as { data: { user: { plan: string; storage_limit_bytes: number } } };
    expect(body.data.user.plan).toBe('plus');
    expect(body.data.user.storage_limit_bytes).toBe(10 * 1024 ** 3);
  });

  it('a plan changed from the command line applies to the next API request, even for a key the server has just used', async () => {
    await ok(dataDir, ['users', 'create', 'planwatch@example.com', '--password', 'password-plan']);
    const out = await ok(dataDir, ['keys', 'create', 'planwatch@example.com', '--name', 'plan-watch']);
    const key = out.trimEnd().split('\n').at(-1)!;
    const before = await listBuckets(key);
    expect(before.status).toBe(200);
    const limitBefore = before.headers.get('ratelimit-limit');
    await ok(dataDir, ['users', 'set-plan', 'planwatch@example.com', 'max']);
    const after = await listBuckets(key);
    expect(after.status).toBe(200);
    expect(after.headers.get('ratelimit-limit')).toBe('1500');
    expect(limitBefore).not.toBe('1500');
    await ok(dataDir, ['users', 'set-plan', 'planwatch@example.com', 'plus']);
    expect((await listBuckets(key)).headers.get('ratelimit-limit')).toBe('200');
  });

  it('refuses a bad plan name with one line and exit 1, changing nothing', async () => {
    expect(await fails(dataDir, ['users', 'set-plan', 'alice@example.com', 'gold'])).toBe('plan must be one of free, plus, pro, max; got "gold"');
    expect(await fails(dataDir, ['users', 'create', 'gold@example.com', '--password', 'password-1', '--plan', 'gold'])).toContain(
      'plan must be one of free, plus, pro, max',
    );
    const users = JSON.parse(await ok(dataDir, ['users', 'list', '--json'])) as Array<{ email: string; plan: string }>;
    expect(users.find((user) => user.email === 'gold@example.com')).toBeUndefined();
    expect(users.find((user) => user.email === 'alice@example.com')?.plan).toBe('plus');
  });

  it('refuses a duplicate email, a short password, a bad email and an unknown user', async () => {
    expect(await fails(dataDir, ['users', 'create', 'ALICE@example.com', '--password', 'another-password'])).toBe('An account with this email already exists');
    expect(await fails(dataDir, ['users', 'create', 'short@example.com', '--password', 'short'])).toBe('password must be at least 8 characters');
    expect(await fails(dataDir, ['users', 'create', 'not-an-email', '--password', 'password-1'])).toBe('email is not a valid address');
    expect(await fails(dataDir, ['users', 'set-plan', 'nobody@example.com', 'pro'])).toBe('no user with email nobody@example.com');
    expect(await fails(dataDir, ['keys', 'create', 'nobody@example.com'])).toBe('no user with email nobody@example.com');
  });

  it('creates an API key that works against the server, lists it, revokes it (then 401)', async () => {
    const out = await ok(dataDir, ['keys', 'create', 'alice@example.com', '--name', 'ci']);
    const key = out.trimEnd().split('\n').at(-1)!;
    expect(key).toMatch(/^pail_\S{40,}$/);
    const id = Number(/Created API key (\d+) "ci"/.exec(out)?.[1]);
    expect(id).toBeGreaterThan(0);

    const allowed = await listBuckets(key);
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toMatchObject({ data: [] });

    const listed = await ok(dataDir, ['keys', 'list', 'alice@example.com']);
    expect(listed).toMatch(/^ID\s+NAME\s+PREFIX\s+S3 ACCESS KEY ID\s+BUCKETS\s+PERMISSIONS\s+CREATED\s+LAST USED\s+EXPIRES\n/);
    const accessKeyId = /access key id ([A-Z2-7]{20})/.exec(out)?.[1] ?? 'missing';
    expect(listed).toMatch(new RegExp(`\\n${id}\\s+ci\\s+${key.slice(0, 13)}\\s+${accessKeyId}\\s+all\\s+all\\s+.*UTC\\s+never\\n`));
    expect(listed).toContain(key.slice(0, 13));
    expect(listed).not.toContain(key);
    const json = JSON.parse(await ok(dataDir, ['keys', 'list', 'alice@example.com', '--json'])) as Array<{ id: number; name: string }>;
    expect(json).toEqual([expect.objectContaining({ id, name: 'ci', prefix: key.slice(0, 13) })]);

    expect(await ok(dataDir, ['keys', 'revoke', 'alice@example.com', String(id)])).toBe(`Revoked API key ${id} of alice@example.com.\n`);
    expect((await listBuckets(key)).status).toBe(401);
    expect(await ok(dataDir, ['keys', 'list', 'alice@example.com'])).toContain('has no API keys');
    expect(await fails(dataDir, ['keys', 'revoke', 'alice@example.com', String(id)])).toBe('API key not found');
  });

  it("reads a user's audit log as the operator: the key made and revoked, by the operator", async () => {
    const listed = await ok(dataDir, ['audit', 'alice@example.com']);
    expect(listed).toMatch(/^ID\s+WHEN\s+WHO\s+ACTION\s+TARGET\s+DETAILS\n/);
    const json = JSON.parse(await ok(dataDir, ['audit', 'alice@example.com', '--json', '--limit', '2'])) as {
      data: { actor: string; action: string }[];
      next_cursor: string | null;
    };
    expect(json.data.map((entry) => [entry.action, entry.actor])).toEqual([
      ['key.revoked', 'operator'],
      ['key.created', 'operator'],
    ]);
    expect(await fails(dataDir, ['audit', 'nobody@example.com'])).toBe('no user with email nobody@example.com');
  });

  it('prints a created key as JSON on request', async () => {
    const created = JSON.parse(await ok(dataDir, ['keys', 'create', 'pro@example.com', '--json'])) as Record<string, unknown>;
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'API key',
      prefix: expect.stringMatching(/^pail_/),
      key: expect.stringMatching(/^pail_/),
      access_key_id: expect.stringMatching(/^[A-Z2-7]{20}$/),
      secret_access_key: expect.stringMatching(/^[A-Za-z0-9_-]{40}$/),
      created_at: expect.any(String),
      buckets: null,
      permissions: ['read', 'write', 'delete', 'manage'],
      expires_at: null,
    });
    expect((await listBuckets(created.key as string)).status).toBe(200);
  });

  it('creates a key limited to some buckets, some permissions and a lifetime, which the server holds to', async () => {
    await ok(dataDir, ['users', 'create', 'limits@example.com', '--password', 'password-limits']);
    const full = (JSON.parse(await ok(dataDir, ['keys', 'create', 'limits@example.com', '--json'])) as { key: string }).key;
    const makeBucket = async (name: string) => {
      const response = await fetch(`${server.url}/api/v1/buckets`, {
        method: 'POST',
        headers: { 'x-api-key': full, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
      return ((await response.json()) as { data: { id: number } }).data.id;
    };
    const [a, b, c] = [await makeBucket('limits-a'), await makeBucket('limits-b'), await makeBucket('limits-c')];

    const args = ['keys', 'create', 'limits@example.com', '--name', 'reader', '--bucket', String(a), '--bucket', String(c), '--permissions', 'read'];
    const before = Date.now();
    const created = JSON.parse(await ok(dataDir, [...args, '--expires-in', '3600', '--json'])) as {
      id: number;
      key: string;
      buckets: number[];
      permissions: string[];
      expires_at: string;
    };
    expect(created).toMatchObject({ name: 'reader', buckets: [a, c], permissions: ['read'] });
    expect(Date.parse(created.expires_at)).toBeGreaterThanOrEqual(before + 3600_000 - 5000);

    const key = { 'x-api-key': created.key };
    const listed = (await (await fetch(`${server.url}/api/v1/buckets`, { headers: key })).json()) as { data: { id: number }[] };
    expect(listed.data.map((bucket) => bucket.id)).toEqual([a, c]);
    expect((await fetch(`${server.url}/api/v1/buckets/${b}`, { headers: key })).status).toBe(404);
    const upload = await fetch(`${server.url}/api/v1/buckets/${a}/files/x.txt`, { method: 'PUT', headers: key, body: 'x' });
    expect(upload.status).toBe(403);
    expect(await upload.json()).toMatchObject({ error: 'This API key does not allow write' });

    // The human output says the limits; the list shows them.
    const out = await ok(dataDir, [...args.map((arg) => (arg === 'reader' ? 'writer' : arg === 'read' ? 'read,write' : arg))]);
    expect(out).toContain(`Buckets: ${a},${c}; permissions: read,write; expires: never.\n`);
    const table = await ok(dataDir, ['keys', 'list', 'limits@example.com']);
    expect(table).toMatch(
      new RegExp(`\\n${created.id}\\s+reader\\s+\\S+\\s+[A-Z2-7]{20}\\s+${a},${c}\\s+read\\s+.*UTC\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\n`),
    );
    expect(table).toMatch(/\s+writer\s+\S+\s+[A-Z2-7]{20}\s+\d+,\d+\s+read,write\s+.*\s+never\n/);
    expect(table).toMatch(/\s+API key\s+\S+\s+[A-Z2-7]{20}\s+all\s+all\s+.*\s+never\n/);
  });

  it('a key made with --expires-in stops working when it expires', async () => {
    const created = JSON.parse(await ok(dataDir, ['keys', 'create', 'limits@example.com', '--expires-in', '1', '--json'])) as {
      key: string;
      expires_at: string;
    };
    // The server decides expiry by its clock: moved past the key's end instead of waiting for it.
    server.clock.advance(Math.max(0, Date.parse(created.expires_at) - server.clock.now()) + 300);
    expect((await listBuckets(created.key)).status).toBe(401);
  });

  it("refuses bad key limits: usage errors exit 2, the server's refusals exit 1, creating nothing", async () => {
    for (const extra of [
      ['--permissions', 'read,fly'],
      ['--permissions', ''],
      ['--permissions', 'read,read'],
      ['--expires-in', '0'],
      ['--bucket', 'abc'],
    ]) {
      const run = await pail(dataDir, ['keys', 'create', 'limits@example.com', ...extra]);
      expect(run.code, extra.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^pail: [^\n]+\n$/);
    }
    const keysBefore = JSON.parse(await ok(dataDir, ['keys', 'list', 'limits@example.com', '--json'])) as unknown[];
    expect(await fails(dataDir, ['keys', 'create', 'limits@example.com', '--bucket', '987654'])).toContain('987654');
    expect(await fails(dataDir, ['keys', 'create', 'limits@example.com', '--expires-in', '60', '--expires-at', '2099-01-01T00:00:00Z'])).toMatch(/not both/);
    expect(await fails(dataDir, ['keys', 'create', 'limits@example.com', '--expires-at', '2001-01-01T00:00:00Z'])).toMatch(/future/);
    expect(JSON.parse(await ok(dataDir, ['keys', 'list', 'limits@example.com', '--json']))).toHaveLength(keysBefore.length);
  });

  it('gc removes a multipart upload older than MULTIPART_EXPIRY_SECONDS, with its part and its bytes', async () => {
    const { storage, db } = server.app.pail;
    await ok(dataDir, ['users', 'create', 'multipart@example.com', '--password', 'multipart-pass']);
    const owner = await db.selectFrom('users').selectAll().where('email', '=', 'multipart@example.com').executeTakeFirstOrThrow();
    const created = await fetch(`${server.url}/api/buckets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await tokenOf('multipart@example.com', 'multipart-pass')}` },
      body: JSON.stringify({ name: 'multipart-gc', public: false }),
    });
    expect(created.status).toBe(201);
    const bucket = await db.selectFrom('buckets').select(['id', 'owner_id', 'storage_name']).where('name', '=', 'multipart-gc').executeTakeFirstOrThrow();
    const uploadId = await beginUpload(storage, { owner, bucket, filename: 'left.bin', contentType: 'application/octet-stream' });
    const part = Buffer.from('a part nobody completed');
    await storePart(storage, {
      owner,
      bucket,
      uploadId,
      partNumber: 1,
      body: Readable.from([part]),
      declaredSize: part.length,
      rawRequestBody: false,
      md5Hex: () => createHash('md5').update(part).digest('hex'),
    });
    const { storage_key } = await db.selectFrom('multipart_parts').select('storage_key').where('upload_id', '=', uploadId).executeTakeFirstOrThrow();
    // head, not get: a stream nobody reads would hold its file open until garbage collection.
    expect(await storage.blobs.head(storage_key)).toMatchObject({ size: part.length });

    // Younger than the default 7 days: kept.
    expect(await ok(dataDir, ['gc'])).toMatch(/^Removed 0 expired multipart uploads, /);
    const twoSecondsAgo = new Date(Date.now() - 2000).toISOString();
    await db.updateTable('multipart_uploads').set({ created_at: twoSecondsAgo }).where('id', '=', uploadId).execute();
    expect(await ok(dataDir, ['gc'], { env: { MULTIPART_EXPIRY_SECONDS: '1' } })).toMatch(/^Removed 1 expired multipart upload, /);
    expect(await db.selectFrom('multipart_uploads').select('id').where('id', '=', uploadId).execute()).toEqual([]);
    expect(await storage.blobs.head(storage_key)).toBeNull();
  });

  it('gc removes a resumable upload idle for 24 hours, and its hold on the cap', async () => {
    const { storage, db } = server.app.pail;
    await ok(dataDir, ['users', 'create', 'resumable@example.com', '--password', 'resumable-pass']);
    const owner = await db.selectFrom('users').selectAll().where('email', '=', 'resumable@example.com').executeTakeFirstOrThrow();
    const created = await fetch(`${server.url}/api/buckets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await tokenOf('resumable@example.com', 'resumable-pass')}` },
      body: JSON.stringify({ name: 'resumable-gc', public: false }),
    });
    expect(created.status).toBe(201);
    const bucket = await db.selectFrom('buckets').select(['id', 'owner_id', 'storage_name']).where('name', '=', 'resumable-gc').executeTakeFirstOrThrow();
    const id = newResumableId();
    await createResumableUpload(storage, id, { owner, bucket, filename: 'idle.bin', contentType: 'application/octet-stream', length: 1000 });

    expect(await ok(dataDir, ['gc'])).toMatch(/, 0 expired resumable uploads and /);
    const twoDaysAgo = new Date(Date.now() - 48 * 3600 * 1000).toISOString();
    await db.updateTable('resumable_uploads').set({ updated_at: twoDaysAgo }).where('id', '=', id).execute();
    expect(await ok(dataDir, ['gc'])).toMatch(/, 1 expired resumable upload and /);
    expect(await db.selectFrom('resumable_uploads').select('id').where('id', '=', id).execute()).toEqual([]);
  });

  it("uploads list shows a user's unfinished uploads with what each holds; uploads cancel ends one and frees it", async () => {
    const { storage, db } = server.app.pail;
    await ok(dataDir, ['users', 'create', 'held@example.com', '--password', 'held-pass']);
    const owner = await db.selectFrom('users').selectAll().where('email', '=', 'held@example.com').executeTakeFirstOrThrow();
    const created = await fetch(`${server.url}/api/buckets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await tokenOf('held@example.com', 'held-pass')}` },
      body: JSON.stringify({ name: 'held-bucket', public: false }),
    });
    expect(created.status).toBe(201);
    const bucket = await db.selectFrom('buckets').select(['id', 'owner_id', 'storage_name']).where('name', '=', 'held-bucket').executeTakeFirstOrThrow();
    const id = newResumableId();
    await createResumableUpload(storage, id, { owner, bucket, filename: 'held.bin', contentType: 'application/octet-stream', length: 2048 });
    const uploadId = await beginUpload(storage, { owner, bucket, filename: 'parts.bin', contentType: 'application/octet-stream' });
    const part = Buffer.alloc(1024, 1);
    await storePart(storage, {
      owner,
      bucket,
      uploadId,
      partNumber: 1,
      body: Readable.from([part]),
      declaredSize: part.length,
      rawRequestBody: false,
      md5Hex: () => createHash('md5').update(part).digest('hex'),
    });

    const table = await ok(dataDir, ['uploads', 'list', 'held@example.com']);
    expect(table).toMatch(/^KIND\s+ID\s+BUCKET\s+FILE\s+HELD\s+RECEIVED\s+CREATED\s+UPDATED\n/);
    expect(table).toMatch(new RegExp(`\\nresumable\\s+${id}\\s+held-bucket \\(${bucket.id}\\)\\s+held\\.bin\\s+2 KiB\\s+0 bytes of 2 KiB\\s`));
    expect(table).toMatch(new RegExp(`\\nmultipart\\s+${uploadId}\\s+held-bucket \\(${bucket.id}\\)\\s+parts\\.bin\\s+1 KiB\\s+1 part\\s`));
    expect(table).toMatch(/\n2 unfinished uploads holding 3 KiB\.\n$/);
    const listed = JSON.parse(await ok(dataDir, ['uploads', 'list', 'held@example.com', '--json'])) as Array<{ id: string; held_bytes: number }>;
    expect(listed.map((upload) => [upload.id, upload.held_bytes]).sort()).toEqual(
      [
        [id, 2048],
        [uploadId, 1024],
      ].sort(),
    );
    expect(await ok(dataDir, ['users', 'list'])).toMatch(/held@example\.com\s+free\s+0 bytes \/ 1 GiB\s+3 KiB\s/);

    expect(await ok(dataDir, ['uploads', 'cancel', 'held@example.com', 'multipart', uploadId])).toBe(
      `Cancelled multipart upload ${uploadId} of held@example.com (parts.bin in held-bucket): 1 KiB no longer held.\n`,
    );
    expect(await fails(dataDir, ['uploads', 'cancel', 'held@example.com', 'multipart', uploadId])).toMatch(/^Upload not found/);
    expect(await fails(dataDir, ['uploads', 'cancel', 'pro@example.com', 'resumable', id])).toMatch(/^Upload not found/);
    await ok(dataDir, ['uploads', 'cancel', 'held@example.com', 'resumable', id]);
    expect(await ok(dataDir, ['uploads', 'list', 'held@example.com'])).toBe('held@example.com has no unfinished uploads.\n');
    const me = await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${await tokenOf('held@example.com', 'held-pass')}` } });
    expect(((await me.json()) as { data: { storage_held_bytes: number } }).data.storage_held_bytes).toBe(0);
    expect((await pail(dataDir, ['uploads', 'cancel', 'held@example.com', 'other', id])).code).toBe(2);
  });

  it('files info shows details, set-metadata edits them (the running server sees it at once), files zip writes a folder', async () => {
    await ok(dataDir, ['users', 'create', 'files@example.com', '--password', 'files-pass']);
    const auth = { authorization: `Bearer ${await tokenOf('files@example.com', 'files-pass')}` };
    const created = await fetch(`${server.url}/api/buckets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ name: 'cli-files' }),
    });
    const bucketId = ((await created.json()) as { data: { id: number } }).data.id;
    for (const name of ['docs/a.txt', 'docs/deep/b.txt', 'top.txt']) {
      const put = await fetch(`${server.url}/api/buckets/${bucketId}/files/${name}`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'text/plain' },
        body: `bytes of ${name}`,
      });
      expect(put.status).toBe(201);
    }
    const download = () => fetch(`${server.url}/api/buckets/${bucketId}/files/docs/a.txt`, { headers: auth });
    expect((await download()).headers.get('content-type')).toBe('text/plain');

    const info = await ok(dataDir, ['files', 'info', 'files@example.com', 'cli-files', 'docs/a.txt']);
    expect(info).toMatch(/^File\s+docs\/a\.txt\nSize\s+19 bytes \(19 bytes\)\nType\s+text\/plain\nETag\s+\S+\n/);
    expect(
      await ok(dataDir, [
        'files',
        'set-metadata',
        'files@example.com',
        String(bucketId),
        'docs/a.txt',
        '--meta',
        'author=ada',
        '--meta',
        'stage=draft',
        '--content-type',
        'text/markdown',
        '--cache-control',
        'max-age=5',
      ]),
    ).toBe('Updated docs/a.txt: text/markdown, 2 metadata entries.\n');
    // The server had the file's row cached: the CLI's edit reaches it through the cache epoch.
    const after = await download();
    expect(after.headers.get('content-type')).toBe('text/markdown');
    expect(await after.text()).toBe('bytes of docs/a.txt');
    const details = JSON.parse(await ok(dataDir, ['files', 'info', 'files@example.com', 'cli-files', 'docs/a.txt', '--json'])) as Record<string, unknown>;
    expect(details).toMatchObject({ metadata: { author: 'ada', stage: 'draft' }, cache_control: 'max-age=5', content_type: 'text/markdown' });
    expect(await ok(dataDir, ['files', 'set-metadata', 'files@example.com', 'cli-files', 'docs/a.txt', '--clear-meta', '--cache-control', ''])).toBe(
      'Updated docs/a.txt: text/markdown, 0 metadata entries.\n',
    );
    expect(await fails(dataDir, ['files', 'set-metadata', 'files@example.com', 'cli-files', 'docs/a.txt', '--meta', `big=${'x'.repeat(3000)}`])).toMatch(
      /^Metadata too large/,
    );

    const zip = path.join(path.dirname(dataDir), 'docs.zip');
    expect(await ok(dataDir, ['files', 'zip', 'files@example.com', 'cli-files', 'docs/', '-o', zip])).toMatch(/^Wrote .*docs\.zip \(\d+ bytes\)\.\n$/);
    const entries = await unzip(zip, true);
    expect(entries.map((entry) => [entry.name, entry.bytes!.toString()])).toEqual([
      ['a.txt', 'bytes of docs/a.txt'],
      ['deep/b.txt', 'bytes of docs/deep/b.txt'],
    ]);
    await ok(dataDir, ['files', 'zip', 'files@example.com', 'cli-files', '--file', 'top.txt', '-o', zip]);
    expect((await unzip(zip)).map((entry) => entry.name)).toEqual(['top.txt']);
    expect(await fails(dataDir, ['files', 'zip', 'files@example.com', 'cli-files', 'nothing/', '-o', zip])).toMatch(/^Nothing to zip/);
    expect(await fails(dataDir, ['files', 'info', 'files@example.com', 'no-such-bucket', 'a.txt'])).toBe('Bucket not found');
    expect(await fails(dataDir, ['files', 'info', 'files@example.com', 'cli-files', 'missing.txt'])).toBe('File not found');
  });

  it('files move renames and moves files and folders, and files delete-folder deletes one, as the running server then serves', async () => {
    await ok(dataDir, ['users', 'create', 'mover@example.com', '--password', 'mover-pass']);
    const auth = { authorization: `Bearer ${await tokenOf('mover@example.com', 'mover-pass')}` };
    const bucketNamed = async (name: string) => {
      const created = await fetch(`${server.url}/api/buckets`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
      return ((await created.json()) as { data: { id: number } }).data.id;
    };
    const a = await bucketNamed('mover-a');
    const b = await bucketNamed('mover-b');
    for (const name of ['draft.txt', 'docs/one.txt', 'docs/sub/two.txt', 'tmp/x.txt', 'tmp/y.txt']) {
      expect((await fetch(`${server.url}/api/buckets/${a}/files/${name}`, { method: 'PUT', headers: auth, body: name })).status).toBe(201);
    }
    const read = (bucket: number, name: string) => fetch(`${server.url}/api/buckets/${bucket}/files/${name}`, { headers: auth });
    // Read once, so the running server holds the file in its cache before the CLI moves it.
    expect(await (await read(a, 'draft.txt')).text()).toBe('draft.txt');

    expect(await ok(dataDir, ['files', 'move', 'mover@example.com', String(a), 'draft.txt', 'final.txt'])).toBe('Moved 1 file from draft.txt to final.txt.\n');
    expect((await read(a, 'draft.txt')).status).toBe(404);
    expect(await (await read(a, 'final.txt')).text()).toBe('draft.txt');
    expect(await ok(dataDir, ['files', 'move', 'mover@example.com', String(a), 'docs/', 'archive/docs/', '--to-bucket', String(b)])).toBe(
      `Moved 2 files from docs/ to archive/docs/ in bucket ${b}.\n`,
    );
    expect(await (await read(b, 'archive/docs/sub/two.txt')).text()).toBe('docs/sub/two.txt');
    expect(
      JSON.parse(await ok(dataDir, ['files', 'move', 'mover@example.com', String(a), 'docs/', 'archive/docs/', '--to-bucket', String(b), '--json'])),
    ).toEqual({
      moved: 0,
      bucket_id: a,
      from: 'docs/',
      to_bucket_id: b,
      to: 'archive/docs/',
    });

    await ok(dataDir, ['files', 'move', 'mover@example.com', String(b), 'archive/docs/one.txt', 'taken.txt']);
    expect(await fails(dataDir, ['files', 'move', 'mover@example.com', String(a), 'final.txt', 'taken.txt', '--to-bucket', String(b)])).toBe(
      'A file named taken.txt is there already; move with overwrite: true to replace it',
    );
    await ok(dataDir, ['files', 'move', 'mover@example.com', String(a), 'final.txt', 'taken.txt', '--to-bucket', String(b), '--overwrite']);
    expect(await (await read(b, 'taken.txt')).text()).toBe('draft.txt');
    expect(await fails(dataDir, ['files', 'move', 'mover@example.com', String(a), 'nothing.txt', 'x.txt'])).toBe('File not found');
    await ok(dataDir, ['users', 'create', 'not-the-owner@example.com', '--password', 'other-pass']);
    expect(await fails(dataDir, ['files', 'move', 'not-the-owner@example.com', String(a), 'tmp/x.txt', 'x.txt'])).toBe('Bucket not found');

    expect(await ok(dataDir, ['files', 'delete-folder', 'mover@example.com', String(a), 'tmp'])).toBe('Deleted 2 files in tmp/.\n');
    expect(JSON.parse(await ok(dataDir, ['files', 'delete-folder', 'mover@example.com', String(a), 'tmp/', '--json']))).toEqual({ deleted: 0, prefix: 'tmp/' });
    const bucketA = await fetch(`${server.url}/api/buckets/${a}`, { headers: auth });
    expect(((await bucketA.json()) as { data: { object_count: number; total_bytes: number } }).data).toMatchObject({ object_count: 0, total_bytes: 0 });
    const bucketB = await fetch(`${server.url}/api/buckets/${b}`, { headers: auth });
    expect(((await bucketB.json()) as { data: { object_count: number; total_bytes: number } }).data).toMatchObject({
      object_count: 2,
      total_bytes: 'docs/sub/two.txt'.length + 'draft.txt'.length,
    });
  });

  it("does not revoke another user's key", async () => {
    const out = await ok(dataDir, ['keys', 'create', 'pro@example.com', '--json']);
    const created = JSON.parse(out) as { id: number; key: string };
    expect(await fails(dataDir, ['keys', 'revoke', 'alice@example.com', String(created.id)])).toBe('API key not found');
    expect((await listBuckets(created.key)).status).toBe(200);
  });
});

describe('pail without a server', SLOW, () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await tempDataDir();
  });
  afterAll(async () => {
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  const commands = [
    [],
    ['serve'],
    ['migrate'],
    ['gc'],
    ['users'],
    ['users', 'create'],
    ['users', 'list'],
    ['users', 'set-plan'],
    ['keys'],
    ['keys', 'create'],
    ['keys', 'list'],
    ['keys', 'revoke'],
    ['uploads'],
    ['uploads', 'list'],
    ['uploads', 'cancel'],
  ];
  it.concurrent.each(commands.map((command) => [command.join(' ') || '(none)', command]))('--help on %s', async (_label, command) => {
    // The binary for `pail --help`, runCli for the rest.
    const run = await pail(dataDir, [...command, '--help'], { binary: command.length === 0 });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`Usage: ${['pail', ...command].join(' ')}`);
  });

  it('--help touches no data', () => {
    expect(existsSync(dataDir)).toBe(false);
  });

  it('migrate applies the migrations once, then has nothing to do', async () => {
    const first = await ok(dataDir, ['migrate']);
    expect(first).toContain(`SQLite database ${path.join(dataDir, 'pail.db')}: applied`);
    expect(first).toMatch(/\n {2}\S+/);
    expect(await ok(dataDir, ['migrate'])).toContain('is up to date; no migrations to apply.');
  });

  it('gc removes orphaned blobs older than the grace period and keeps young ones', async () => {
    const blobs = path.join(dataDir, 'blobs');
    await mkdir(path.join(blobs, 'ab'), { recursive: true });
    const old = path.join(blobs, 'ab', 'orphan-old');
    const young = path.join(blobs, 'ab', 'orphan-young');
    await writeFile(old, 'left behind by a crash');
    await writeFile(young, 'an upload in flight');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
    await utimes(old, twoHoursAgo, twoHoursAgo);

    expect(await ok(dataDir, ['gc'])).toBe(
      'Removed 0 expired multipart uploads, 0 expired resumable uploads and 1 orphaned blob; finished 0 interrupted bucket deletions.\n',
    );
    expect(existsSync(old)).toBe(false);
    expect(existsSync(young)).toBe(true);

    expect(await ok(dataDir, ['gc', '--grace', '0'])).toBe(
      'Removed 0 expired multipart uploads, 0 expired resumable uploads and 1 orphaned blob; finished 0 interrupted bucket deletions.\n',
    );
    expect(existsSync(young)).toBe(false);
    expect(await ok(dataDir, ['gc'])).toBe(
      'Removed 0 expired multipart uploads, 0 expired resumable uploads and 0 orphaned blobs; finished 0 interrupted bucket deletions.\n',
    );
  });

  it('users list on an empty database says so', async () => {
    expect(await ok(dataDir, ['users', 'list'])).toContain('No users yet');
    expect(JSON.parse(await ok(dataDir, ['users', 'list', '--json']))).toEqual([]);
  });

  it('reads a .env file in the working directory, as the server does', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-cli-dotenv-'));
    try {
      await writeFile(path.join(dir, '.env'), `DATA_DIR=${path.join(dir, 'from-dotenv')}\nLOG_LEVEL=silent\n`);
      const run = await new Promise<Run>((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, 'migrate'], { cwd: dir, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(path.join(dir, 'from-dotenv', 'pail.db'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a bad configuration value is one line naming the variable, exit 1', async () => {
    const message = await fails(dataDir, ['users', 'list'], { env: { PORT: 'abc' }, binary: true });
    expect(message).toBe('Invalid configuration: PORT must be a whole number, got "abc"');
    expect(await fails(dataDir, ['migrate'], { env: { SIGNUP: 'maybe' } })).toContain('SIGNUP');
  });

  it('serve with a bad configuration value stops with a line naming the variable', async () => {
    // The binary: configOrExit ends the process.
    const run = await pail(dataDir, ['serve'], { env: { PORT: 'abc' }, binary: true });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/^[^\n]*PORT[^\n]*\n$/);
  });

  it('bad usage is one line and exit 2', async () => {
    const cases = [['frobnicate'], ['users', 'create'], ['users', 'list', '--bogus'], ['keys', 'revoke', 'a@example.com', 'abc'], ['gc', '--grace', '-1']];
    // The binary for the first, runCli for the rest.
    const runs = await Promise.all(cases.map((args, index) => pail(dataDir, args, { binary: index === 0 })));
    runs.forEach((run, index) => {
      const label = cases[index]!.join(' ');
      expect(run.code, label).toBe(2);
      expect(run.stdout, label).toBe('');
      expect(run.stderr, label).toMatch(/^pail: [^\n]+\n$/);
    });
  });

  it('serve starts the server like npm start and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: path.dirname(dataDir),
      env: cliEnv(dataDir, { PORT: String(port), HOST: '127.0.0.1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.resume();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      const deadline = Date.now() + 20_000;
      let healthy = false;
      while (!healthy && Date.now() < deadline && child.exitCode === null) {
        healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          async (response) => response.status === 200 && ((await response.json()) as { status?: string }).status === 'ok',
          () => false,
        );
        if (!healthy) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(healthy, stderr).toBe(true);
      child.kill('SIGTERM');
      expect(await exited).toEqual({ code: 0, signal: null });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
