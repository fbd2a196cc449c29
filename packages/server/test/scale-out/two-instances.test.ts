/**
 * Two Pail server processes sharing one PostgreSQL schema, one Redis prefix and
 * one S3 bucket behave as one service: they migrate a fresh schema together
 * without a race, either serves what the other made, racing uploads through
 * both never pass the storage cap, and a user's requests through both spend
 * one rate-limit budget. Needs PAIL_TEST_BACKEND=scaled (the scaled project).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3BlobStore } from '../../src/blob/s3-store.js';
import { migrateToLatest } from '../../src/db/database.js';
import type { Db } from '../../src/db/schema.js';
import { migrationProvider } from '../../src/db/migrations.js';
import { backendKind, createSchema, dropSchema, schemaUrl, scaledBackendEnv, type BackendEnv } from '../helpers/backends.js';
import { json, signUp, type TestUser } from '../helpers/client.js';
import { eventually, spawnServer, type ServerProcess } from './instances.js';

const STORAGE_CAP = 5000;
const UPLOAD_BYTES = 700; // 7 fit under the cap, 20 are tried
const RATE_LIMIT = 30;
const APP_NAME = `pail_two_instances_${randomBytes(4).toString('hex')}`;

let backend: BackendEnv;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  if (backendKind() !== 'scaled') throw new Error('two-instances.test.ts needs PAIL_TEST_BACKEND=scaled (run by the scaled project)');
  backend = await scaledBackendEnv();
  // Named connections, so a test can end exactly these instances' sessions.
  const databaseUrl = new URL(backend.env.DATABASE_URL!);
  databaseUrl.searchParams.set('application_name', APP_NAME);
  const shared = {
    ...backend.env,
    DATABASE_URL: databaseUrl.toString(),
    SESSION_SECRET: randomBytes(32).toString('hex'),
    PLAN_FREE_STORAGE_BYTES: String(STORAGE_CAP),
    PLAN_FREE_RATE_LIMIT: String(RATE_LIMIT),
    PUBLIC_RATE_LIMIT: '100000',
    CLIENT_RATE_LIMIT: '100000',
    SIGNUP_RATE_LIMIT: '100000',
  };
  // Started together on a schema nobody has migrated yet. If one fails, stop the other.
  const started = await Promise.allSettled([spawnServer(shared), spawnServer(shared)]);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    for (const s of started) if (s.status === 'fulfilled') await s.value.stop();
    throw failed.reason;
  }
  [a, b] = started.map((s) => (s as PromiseFulfilledResult<ServerProcess>).value) as [ServerProcess, ServerProcess];
}, 90_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await backend?.cleanup();
});

function pgClient(): pg.Client {
  const client = new pg.Client({ connectionString: backend.env.DATABASE_URL });
  client.on('error', () => {});
  return client;
}

async function query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = pgClient();
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

function dev(server: ServerProcess, user: TestUser, pathname: string, init: RequestInit = {}) {
  return fetch(`${server.url}/api/v1/buckets${pathname}`, {
    ...init,
    headers: {
      'x-api-key': user.apiKey,
      ...(typeof init.body === 'string' && !init.headers ? { 'content-type': 'application/json' } : {}),
      ...(init.headers as Record<string, string>),
    },
  });
}

async function createBucket(server: ServerProcess, user: TestUser, extra: Record<string, unknown> = {}): Promise<{ id: number; name: string }> {
  const response = await dev(server, user, '', { method: 'POST', body: JSON.stringify({ name: `b-${randomUUID().slice(0, 8)}`, ...extra }) });
  expect(response.status).toBe(201);
  return (await json(response)).data;
}

describe('two server processes on shared PostgreSQL, Redis and S3', () => {
  it('both migrated the fresh schema at once: one migration history, no errors', async () => {
    const applied = await query<{ name: string }>('select name from kysely_migration order by name');
    const known = Object.keys(await migrationProvider('postgres').getMigrations()).sort();
    expect(applied.map((row) => row.name)).toEqual(known);
    for (const server of [a, b]) {
      expect(server.output()).not.toMatch(/"level":(50|60)/);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    }
  });

  it('a bucket and file made through one instance are served by the other; sessions work on both', async () => {
    const user = await signUp(a.url);
    const bucket = await createBucket(a, user);
    const bytes = randomBytes(3000); // under the small test cap
    const put = await dev(a, user, `/${bucket.id}/files/data.bin`, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect(put.status).toBe(201);

    const listed = await json(await dev(b, user, `/${bucket.id}/files`));
    expect(listed.data.map((o: { filename: string }) => o.filename)).toEqual(['data.bin']);
    const got = await dev(b, user, `/${bucket.id}/files/data.bin`);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    expect((await json(await dev(b, user, `/${bucket.id}`))).data).toMatchObject({ object_count: 1, total_bytes: bytes.length });

    // The session made on A (shared SESSION_SECRET, shared sessions table) is good on B; so is a login on B.
    const clientList = await fetch(`${b.url}/api/buckets`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(clientList.status).toBe(200);
    expect((await json(clientList)).data.map((x: { id: number }) => x.id)).toContain(bucket.id);
    const login = await fetch(`${b.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    expect(login.status).toBe(200);

    // Made public through B, downloadable anonymously from A at the URL B reports.
    const visibility = await dev(b, user, `/${bucket.id}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'public' }) });
    expect(visibility.status).toBeLessThan(300);
    const url = new URL(listed.data[0].url as string);
    const anonymous = await fetch(`${a.url}${url.pathname}`);
    expect(anonymous.status).toBe(200);
    expect(Buffer.from(await anonymous.arrayBuffer()).equals(bytes)).toBe(true);

    // Deleted through A: gone on B.
    expect((await dev(a, user, `/${bucket.id}`, { method: 'DELETE' })).status).toBeLessThan(300);
    expect((await dev(b, user, `/${bucket.id}/files/data.bin`)).status).toBe(404);
  });

  it("a change made through one instance is seen at once through the other, however warm the other's caches", async () => {
    const user = await signUp(a.url);
    const bucket = await createBucket(a, user, { visibility: 'public' });
    const read = async (server: ServerProcess, anonymous = false) => {
      const response = anonymous
        ? await fetch(`${server.url}/api/v1/buckets/${bucket.id}/files/hot.bin`)
        : await dev(server, user, `/${bucket.id}/files/hot.bin`);
      return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
    };
    const v1 = randomBytes(500);
    const v2 = randomBytes(600);
    expect((await dev(a, user, `/${bucket.id}/files/hot.bin`, { method: 'PUT', body: v1 })).status).toBe(201);
    // Warm B: the key, the object lookup and the bytes are all cached there now.
    for (let i = 0; i < 3; i++) expect((await read(b)).bytes.equals(v1)).toBe(true);
    for (let i = 0; i < 2; i++) expect((await read(b, true)).bytes.equals(v1)).toBe(true);

    expect((await dev(a, user, `/${bucket.id}/files/hot.bin`, { method: 'PUT', body: v2 })).status).toBe(201);
    expect((await read(b)).bytes.equals(v2)).toBe(true);

    // Made private through A: B refuses an anonymous reader at once.
    expect((await dev(a, user, `/${bucket.id}/visibility`, { method: 'POST', body: JSON.stringify({ visibility: 'private' }) })).status).toBe(200);
    expect((await read(b, true)).status).toBe(401);

    expect((await dev(a, user, `/${bucket.id}/files/hot.bin`, { method: 'DELETE' })).status).toBe(200);
    expect(await read(b)).toMatchObject({ status: 404 });

    // The key, revoked through A, is refused by B, where it was just used.
    expect((await dev(b, user, '')).status).toBe(200);
    const keys = await json(await fetch(`${a.url}/api/keys`, { headers: { authorization: `Bearer ${user.token}` } }));
    const revoked = await fetch(`${a.url}/api/keys/${keys.data[0].id}`, { method: 'DELETE', headers: { authorization: `Bearer ${user.token}` } });
    expect(revoked.status).toBe(200);
    expect((await dev(b, user, '')).status).toBe(401);
  });

  it('a url signed on one instance works on the other; revoking its key on one ends it on the other at once', async () => {
    const user = await signUp(a.url);
    const bucket = await createBucket(a, user);
    const bytes = randomBytes(400);
    expect((await dev(a, user, `/${bucket.id}/files/shared/doc.bin`, { method: 'PUT', body: bytes })).status).toBe(201);
    const sign = async (server: ServerProcess, filename: string, body: Record<string, unknown>) => {
      const response = await dev(server, user, `/${bucket.id}/files/${filename}/signed-url`, { method: 'POST', body: JSON.stringify(body) });
      expect(response.status).toBe(201);
      return new URL((await json(response)).data.url as string);
    };
    const onB = (url: URL) => `${b.url}${url.pathname}${url.search}`;
    const onA = (url: URL) => `${a.url}${url.pathname}${url.search}`;

    // Signed on A (GET), fetched on B; signed on B (PUT), used on A.
    const getUrl = await sign(a, 'shared/doc.bin', { expires_in: 600 });
    const got = await fetch(onB(getUrl));
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    const putUrl = await sign(b, 'shared/up.bin', { method: 'PUT', expires_in: 600 });
    const put = await fetch(onA(putUrl), { method: 'PUT', body: randomBytes(300), headers: { 'content-type': 'application/octet-stream' } });
    expect(put.status).toBe(201);
    expect((await dev(b, user, `/${bucket.id}/files/shared/up.bin`, { method: 'HEAD' })).status).toBe(200);

    // Warm B on the url, then revoke the signing key through A: B refuses the url on the next request.
    expect((await fetch(onB(getUrl), { method: 'HEAD' })).status).toBe(200);
    const keys = await json(await fetch(`${a.url}/api/keys`, { headers: { authorization: `Bearer ${user.token}` } }));
    const revoked = await fetch(`${a.url}/api/keys/${keys.data[0].id}`, { method: 'DELETE', headers: { authorization: `Bearer ${user.token}` } });
    expect(revoked.status).toBe(200);
    const refused = await fetch(onB(getUrl));
    expect(refused.status).toBe(403);
    expect(typeof (await json(refused)).error).toBe('string');
    expect((await fetch(onA(putUrl), { method: 'PUT', body: 'late' })).status).toBe(403);
  });

  it('twenty racing uploads through both instances, into two buckets, never pass the storage cap', async () => {
    const user = await signUp(b.url);
    // Two buckets, so the per-bucket row lock does not serialise them: only the
    // conditional update of the owner's usage stands between them and the cap.
    const buckets = [await createBucket(b, user), await createBucket(a, user)];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const bucket = buckets[Math.floor(i / 2) % 2]!;
        return dev(i % 2 === 0 ? a : b, user, `/${bucket.id}/files/race-${String(i).padStart(2, '0')}.bin`, {
          method: 'PUT',
          body: randomBytes(UPLOAD_BYTES),
          headers: { 'content-type': 'application/octet-stream' },
        }).then(async (response) => ({ status: response.status, body: await response.text() }));
      }),
    );
    const accepted = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    for (const r of refused) {
      expect([409, 413], r.body).toContain(r.status);
      expect(typeof JSON.parse(r.body).error).toBe('string');
    }
    expect(accepted.length * UPLOAD_BYTES).toBeLessThanOrEqual(STORAGE_CAP);
    // Equal sizes: every refusal was a true "no room", so exactly as many as fit got in.
    expect(accepted.length).toBe(Math.floor(STORAGE_CAP / UPLOAD_BYTES));

    const me = await json(await fetch(`${a.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }));
    expect(me.data.storage_used_bytes).toBe(accepted.length * UPLOAD_BYTES);
    const store = new S3BlobStore({
      endpoint: backend.env.S3_ENDPOINT,
      bucket: backend.env.S3_BUCKET!,
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    });
    let listedTotal = 0;
    try {
      for (const bucket of buckets) {
        const info = (await json(await dev(a, user, `/${bucket.id}`))).data;
        const listing = (await json(await dev(b, user, `/${bucket.id}/files`))).data as { filename: string; storage_name: string }[];
        expect(info).toMatchObject({ object_count: listing.length, total_bytes: listing.length * UPLOAD_BYTES });
        listedTotal += listing.length;
        // The refused uploads left no bytes in S3 or in the database: only the accepted ones remain.
        const [row] = await query<{ storage_name: string }>('select storage_name from buckets where id = $1', [bucket.id]);
        const keys: string[] = [];
        for await (const blob of store.list(`${row!.storage_name}/`)) keys.push(blob.key);
        const inline = await query<{ storage_key: string }>('select storage_key from inline_blobs where storage_key like $1', [`${row!.storage_name}/%`]);
        keys.push(...inline.map((r) => r.storage_key));
        expect(keys.sort()).toEqual(listing.map((o) => o.storage_name).sort());
      }
    } finally {
      await store.close();
    }
    expect(listedTotal).toBe(accepted.length);
  });

  it("one user's requests through both instances share one rate-limit budget", async () => {
    const user = await signUp(a.url);
    const statuses: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 10; i++) {
      const response = await dev(i % 2 === 0 ? a : b, user, '');
      statuses.push(response.status);
      if (response.status === 200) remaining.push(Number(response.headers.get('ratelimit-remaining')));
      else await response.body?.cancel();
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(RATE_LIMIT);
    expect(statuses.slice(RATE_LIMIT).every((s) => s === 429)).toBe(true);
    // One counter: the remaining budget falls by one per request, whichever instance answered.
    expect(remaining).toEqual(Array.from({ length: RATE_LIMIT }, (_, i) => RATE_LIMIT - 1 - i));
    // Another user's budget is untouched.
    const other = await signUp(b.url);
    expect((await dev(a, other, '')).status).toBe(200);
  });
});

describe('PostgreSQL ending the connections (restart, failover)', () => {
  it('both instances stay up and serve again on new connections', async () => {
    const user = await signUp(a.url);
    const ended = await query<{ ended: boolean }>('select pg_terminate_backend(pid) as ended from pg_stat_activity where application_name = $1', [APP_NAME]);
    expect(ended.length).toBeGreaterThan(0);
    for (const server of [a, b]) {
      await eventually(async () => (await fetch(`${server.url}/readyz`)).status === 200, 10_000, `${server.url}/readyz`);
      expect((await dev(server, user, '')).status).toBe(200);
      expect(server.child.exitCode).toBeNull();
    }
  });
});

/** The one view of information_schema the migration test reads. */
interface InformationSchema {
  'information_schema.tables': { table_name: string; table_schema: string };
}

describe('migrations under the advisory lock', () => {
  it('several pools migrating one fresh schema at once all succeed, and the schema is migrated once', async () => {
    const schema = await createSchema(`pail_t_${Math.floor(Date.now() / 1000)}_m${randomBytes(4).toString('hex')}`);
    const dbs = Array.from(
      { length: 4 },
      () => new Kysely<InformationSchema>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: schemaUrl(schema), max: 2 }) }) }),
    );
    try {
      const applied = await Promise.all(dbs.map((db) => migrateToLatest(db as unknown as Db, 'postgres')));
      // Exactly one pool applied each migration; the others found it done.
      const all = applied.flat();
      expect(all.length).toBeGreaterThan(0);
      expect(new Set(all).size).toBe(all.length);
      const tables = await dbs[0]!.selectFrom('information_schema.tables').select('table_name').where('table_schema', '=', schema).execute();
      expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['users', 'buckets', 'objects', 'kysely_migration']));
    } finally {
      await Promise.all(dbs.map((db) => db.destroy()));
      await dropSchema(schema);
    }
  });
});
