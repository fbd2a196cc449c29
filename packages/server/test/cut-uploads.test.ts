/**
 * Nothing a client does can crash Pail (issue 33): the real server process
 * (dist/main.js, as `npm start` runs it) takes 1,000 uploads through every
 * door, each cut at a random byte by a proxy, then 50 uploads through every
 * door racing into a small cap. At the end it is the same process, it logged
 * no error, and the books close: usage equals the listings, every blob is a
 * file's or a kept part's, nothing is still held.
 */
import { Kysely, SqliteDialect } from 'kysely';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../src/blob/fs-store.js';
import SQLite from '../src/db/sqlite-driver.js';
import type { Database } from '../src/db/schema.js';
import { json, signUp, type TestUser } from './helpers/client.js';
import { cuttingProxy, type CuttingProxy } from './helpers/cutting-proxy.js';
import { DOORS, placeSource, type Answer, type DoorWorld, type Target } from './helpers/doors.js';
import { expectBooksClose, type BookSource } from './helpers/ledger.js';
import { spawnServer, type ServerProcess } from './helpers/process.js';
import { freePort } from './helpers/server.js';

const CUT_UPLOADS = 1000;
const RACERS = 50;
const RACE_CAP = 2_000_000;
/** Uploads in flight at once during the cuts. */
const LANES = 4;

interface Running {
  server: ServerProcess;
  s3Url: string;
  dataDir: string;
  books: BookSource;
  close(): Promise<void>;
}

async function start(env: Record<string, string>): Promise<Running> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-cuts-'));
  const s3Port = await freePort();
  const server = await spawnServer({ DATA_DIR: dataDir, S3_API_PORT: String(s3Port), MAX_UPLOADS_PER_USER: '1000', ...env });
  // Read beside the server, as an operator's tool would: the database read-only, the blob directory as it is.
  const sqlite = new SQLite(path.join(dataDir, 'pail.db'), { readonly: true });
  const books: BookSource = {
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }),
    blobs: await FsBlobStore.open(path.join(dataDir, 'blobs')),
  };
  return {
    server,
    s3Url: `http://127.0.0.1:${s3Port}`,
    dataDir,
    books,
    async close() {
      await books.db.destroy();
      server.child.kill('SIGKILL');
      await server.exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function newBucket(url: string, owner: TestUser): Promise<Target> {
  const name = `cut-${randomBytes(5).toString('hex')}`;
  const response = await fetch(`${url}/api/v1/buckets`, {
    method: 'POST',
    headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  return { id: (await json(response)).data.id, name };
}

/** The server is the process it was, and it logged nothing at error level or above (pino: 50 and 60). */
function expectSameAndQuiet(running: Running) {
  expect(running.server.child.exitCode).toBeNull();
  expect(() => process.kill(running.server.child.pid!, 0)).not.toThrow();
  const errors = running.server
    .output()
    .split('\n')
    .filter((line) => /"level":(50|60)|Unhandled|uncaught/i.test(line));
  expect(errors.slice(0, 3), `${errors.length} lines at error level`).toEqual([]);
}

let cuts: Running;
let pailProxy: CuttingProxy;
let s3Proxy: CuttingProxy;

beforeAll(async () => {
  cuts = await start({ PLAN_FREE_STORAGE_BYTES: String(4 * 1024 ** 3) });
  pailProxy = await cuttingProxy({ host: '127.0.0.1', port: Number(new URL(cuts.server.url).port) });
  s3Proxy = await cuttingProxy({ host: '127.0.0.1', port: Number(new URL(cuts.s3Url).port) });
});
afterAll(async () => {
  await Promise.all([pailProxy?.close(), s3Proxy?.close()]);
  await cuts?.close();
});

describe('uploads cut at random bytes, through every door', () => {
  it(`${CUT_UPLOADS} cut uploads: the same process, no error logged, the books close`, { timeout: 600_000 }, async () => {
    const owner = await signUp(cuts.server.url);
    const direct = { url: cuts.server.url, s3Url: cuts.s3Url };
    const world: DoorWorld = { direct, via: { url: pailProxy.url, s3Url: s3Proxy.url }, user: owner, owner: owner };
    const [bucket, sources] = [await newBucket(direct.url, owner), await newBucket(direct.url, owner)];
    // Copy doors copy one of a few sources, inline-sized and blob-sized.
    const sourceKeys: string[] = [];
    for (const size of [1_000, 50_000, 300_000]) {
      const key = `source-${size}`;
      await placeSource(world, sources, key, randomBytes(size));
      sourceKeys.push(key);
    }
    const seen = new Map<string, number>();
    let next = 0;
    const lane = async () => {
      while (next < CUT_UPLOADS) {
        const i = next++;
        const door = DOORS[i % DOORS.length]!;
        const size = randomInt(0, 2) === 0 ? randomInt(1, 64_000) : randomInt(64_000, 400_000);
        // A cut anywhere in the request: its headers, its body, or (past the end) not at all.
        (door.name.startsWith('S3') ? s3Proxy : pailProxy).cutNextAfter(randomInt(0, size + 1_500));
        const answer: Answer = await door.upload(world, bucket, `file-${i % 25}.bin`, randomBytes(size), {
          source: { bucket: sources, key: sourceKeys[i % sourceKeys.length]! },
        });
        expect(['stored', 'cut'], `${door.name}: ${answer.detail}`).toContain(answer.outcome);
        seen.set(answer.outcome, (seen.get(answer.outcome) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: LANES }, lane)).catch((error: unknown) => {
      // A request that failed on the server's side: say what the server said.
      throw new Error(`${String(error)}; the server (exit code ${cuts.server.child.exitCode}) said: ${cuts.server.output().slice(-2000)}`);
    });
    // Both kinds happened: the test cut uploads, and some still went through.
    expect(seen.get('cut') ?? 0).toBeGreaterThan(CUT_UPLOADS / 4);
    expect(seen.get('stored') ?? 0).toBeGreaterThan(0);
    pailProxy.clear();
    s3Proxy.clear();
    expectSameAndQuiet(cuts);
    await expectBooksClose(cuts.books, owner.id, { held: 0 });
    // And the doors still work, each of them.
    for (const door of DOORS) {
      const answer = await door.upload({ ...world, via: direct }, bucket, `after-${door.name}.bin`, randomBytes(100_000), {
        source: { bucket: sources, key: sourceKeys[2]! },
      });
      expect(answer.outcome, `${door.name}: ${answer.detail}`).toBe('stored');
    }
    await expectBooksClose(cuts.books, owner.id, { held: 0 });
  });
});

describe('uploads racing into a small cap, through every door', () => {
  it(`${RACERS} uploads at once under a ${RACE_CAP}-byte cap: none passes it together, the books close`, { timeout: 120_000 }, async () => {
    const racing = await start({ PLAN_FREE_STORAGE_BYTES: String(RACE_CAP) });
    try {
      const owner = await signUp(racing.server.url);
      const direct = { url: racing.server.url, s3Url: racing.s3Url };
      const world: DoorWorld = { direct, via: direct, user: owner, owner };
      const [bucket, sources] = [await newBucket(direct.url, owner), await newBucket(direct.url, owner)];
      await placeSource(world, sources, 'source', randomBytes(150_000));
      const sizes = Array.from({ length: RACERS }, (_, i) => (i % 3 === 0 ? 40_000 : 150_000));
      const answers = await Promise.all(
        sizes.map((size, i) =>
          DOORS[i % DOORS.length]!.upload(world, bucket, `race-${i}.bin`, randomBytes(size), { source: { bucket: sources, key: 'source' } }),
        ),
      );
      for (const [i, answer] of answers.entries()) expect(['stored', 'cap'], `${DOORS[i % DOORS.length]!.name}: ${answer.detail}`).toContain(answer.outcome);
      expect(answers.some((answer) => answer.outcome === 'cap')).toBe(true);
      const books = await expectBooksClose(racing.books, owner.id, { held: 0 });
      expect(books.usedBytes).toBeLessThanOrEqual(RACE_CAP);
      expectSameAndQuiet(racing);
    } finally {
      await racing.close();
    }
  });
});
