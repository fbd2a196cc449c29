/**
 * Pail instances for the scale-out suites: in-process apps (buildApp, for
 * tests that also reach into the stores) and real server processes
 * (`node packages/server/dist/main.js`, for tests about several instances).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { freePort } from '../helpers/server.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const SERVER_MAIN = path.join(REPO_ROOT, 'packages/server/dist/main.js');

export interface InProcessApp {
  app: FastifyInstance;
  url: string;
  config: Config;
  close(): Promise<void>;
}

/** buildApp on a real port, logs off, with generous rate limits unless env says otherwise. */
export async function bootApp(env: Record<string, string>, dataDir: string): Promise<InProcessApp> {
  const port = await freePort();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    PLAN_FREE_RATE_LIMIT: '100000',
    PUBLIC_RATE_LIMIT: '100000',
    CLIENT_RATE_LIMIT: '100000',
    SIGNED_URL_RATE_LIMIT: '100000',
    SIGNUP_RATE_LIMIT: '100000',
    ...env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
  });
  const app = await buildApp(config, { logger: false });
  await app.listen({ port, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${port}`, config, close: () => app.close() };
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Spawns `node packages/server/dist/main.js` with exactly the given environment
 * (plus PATH), on a free port and its own DATA_DIR, and waits for /healthz.
 */
export async function spawnServer(env: Record<string, string>, options: { readyTimeoutMs?: number } = {}): Promise<ServerProcess> {
  if (!existsSync(SERVER_MAIN)) throw new Error(`${SERVER_MAIN} is missing: run \`npx tsc -b packages/server\` (npm test does) first`);
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-instance-'));
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [SERVER_MAIN], {
    // The data directory as working directory too, so no stray .env is read.
    cwd: dataDir,
    env: {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'warn',
      // Off unless a test asks for it: instances side by side would contend for port 9000.
      S3_API_PORT: 'off',
      ...env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Never outlive the test process, however it ends.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.removeListener('exit', reap));
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));

  const stop = async () => {
    if (exitCode === undefined && child.exitCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    await rm(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (exitCode !== undefined) {
      await stop();
      throw new Error(`server process exited with ${exitCode} before it was ready:\n${output}`);
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`server process not ready at ${url} after ${options.readyTimeoutMs ?? 30_000} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, child, output: () => output, stop };
}

export { eventually } from '../helpers/eventually.js';
