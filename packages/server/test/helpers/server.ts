/**
 * Starts a real Pail server for a test: a temporary DATA_DIR, a real port on
 * 127.0.0.1, the backends chosen by PAIL_TEST_BACKEND (see backends.ts), and
 * logs off. Every test file gets its own server and its own data.
 *
 * Two things differ from production, both given to buildApp: passwords are
 * hashed at a trivial scrypt cost (TEST_PASSWORD_COST; passwords.test.ts
 * checks production's), and expiries follow a clock the test can move on
 * (`clock`, helpers/clock.ts).
 */
import type { FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { PasswordCost } from '../../src/domain/passwords.js';
import { backendEnv } from './backends.js';
import { TestClock } from './clock.js';

/** The cheapest scrypt cost there is: a sign-up in a test costs microseconds, not production's tenth of a second. */
export const TEST_PASSWORD_COST: PasswordCost = { N: 2, r: 1, p: 1 };

export interface TestServer {
  url: string;
  dataDir: string;
  config: Config;
  app: FastifyInstance;
  /** The S3-compatible API's url, when the test asked for it (`s3: true`). */
  s3Url: string | null;
  /** What the server's expiries are decided by: `clock.advance(ms)` moves it on. */
  clock: TestClock;
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  dataDir?: string;
  s3?: boolean;
  /** Hash passwords at production's cost, as a server started without a passwordCost does. */
  productionPasswordCost?: boolean;
}

/**
 * A port nothing listens on, for a server about to start. It is taken below
 * Linux's range for outgoing connections' local ports (32768–60999), where
 * a port chosen by the kernel (listen on 0) lies: there, any connection a
 * test opens meanwhile could take it before the server listens (EADDRINUSE).
 * Each vitest worker (up to SLICES of them; more share the whole range)
 * draws from its own slice of that range, so test files running side by
 * side never pick the same port, and a port is not handed out again by the
 * worker until half its slice has been (workers run many files, isolate:
 * false): a server restarted on its old port after a SIGKILL finds it still
 * its own. Checked by listening on it.
 */
export async function freePort(): Promise<number> {
  if (handedOut.size >= PORTS_PER_WORKER / 2) handedOut.clear();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = range.start + Math.floor(Math.random() * range.size);
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${range.start} and ${range.start + range.size - 1}`);
}

const LOWEST_PORT = 20_000;
const PORTS_PER_WORKER = 1_024;
const SLICES = 12; // 20000–32287, below 32768
const workerId = Number(process.env.VITEST_POOL_ID ?? 1);
const range =
  workerId >= 1 && workerId <= SLICES
    ? { start: LOWEST_PORT + (workerId - 1) * PORTS_PER_WORKER, size: PORTS_PER_WORKER }
    : { start: LOWEST_PORT, size: SLICES * PORTS_PER_WORKER };
const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `s3: true` also starts the S3-compatible API on a free port; otherwise it is off (S3_API_PORT=off), so suites never clash over its port. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'pail-test-')));
  const backend = await backendEnv();
  // Another test file may take the chosen port first: then again, with other ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await listening(dataDir, backend, options);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 3) throw error;
    }
  }
}

async function listening(dataDir: string, backend: Awaited<ReturnType<typeof backendEnv>>, options: TestServerOptions): Promise<TestServer> {
  const port = await freePort();
  const s3Port = options.s3 ? String(await freePort()) : 'off';
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    // Generous budgets so suites are not throttled; rate-limit tests set their own.
    PLAN_FREE_RATE_LIMIT: '100000',
    PUBLIC_RATE_LIMIT: '100000',
    CLIENT_RATE_LIMIT: '100000',
    SIGNED_URL_RATE_LIMIT: '100000',
    SIGNUP_RATE_LIMIT: '100000',
    S3_API_PORT: s3Port,
    ...backend.env,
    ...options.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
  });
  const clock = new TestClock();
  const app = await buildApp(config, { logger: false, clock, ...(options.productionPasswordCost ? {} : { passwordCost: TEST_PASSWORD_COST }) });
  try {
    await app.listen({ port, host: '127.0.0.1' });
    if (options.s3) await app.s3Api?.listen();
  } catch (error) {
    await app.close();
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    config,
    app,
    s3Url: app.s3Api?.url ?? null,
    clock,
    async close() {
      await app.close();
      await backend.cleanup();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
