/**
 * Starts a real Pail server for a test: a temporary DATA_DIR, a real port on
 * 127.0.0.1, the backends chosen by PAIL_TEST_BACKEND (see backends.ts), and
 * logs off. Every test file gets its own server and its own data.
 */
import type { FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { backendEnv } from './backends.js';

export interface TestServer {
  url: string;
  dataDir: string;
  config: Config;
  app: FastifyInstance;
  /** The S3-compatible API's url, when the test asked for it (`s3: true`). */
  s3Url: string | null;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** `s3: true` also starts the S3-compatible API on a free port; otherwise it is off (S3_API_PORT=off), so suites never clash over its port. */
export async function startTestServer(options: { env?: Record<string, string>; dataDir?: string; s3?: boolean } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'pail-test-')));
  const port = await freePort();
  const s3Port = options.s3 ? String(await freePort()) : 'off';
  const backend = await backendEnv();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    // Generous budgets so suites are not throttled; rate-limit tests set their own.
    PLAN_FREE_RATE_LIMIT: '100000',
    PUBLIC_RATE_LIMIT: '100000',
    CLIENT_RATE_LIMIT: '100000',
    SIGNUP_RATE_LIMIT: '100000',
    S3_API_PORT: s3Port,
    ...backend.env,
    ...options.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
  });
  const app = await buildApp(config, { logger: false });
  await app.listen({ port, host: '127.0.0.1' });
  if (options.s3) await app.s3Api?.listen();
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    config,
    app,
    s3Url: app.s3Api?.url ?? null,
    async close() {
      await app.close();
      await backend.cleanup();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
