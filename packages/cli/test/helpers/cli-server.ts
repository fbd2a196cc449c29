/**
 * A test server on a data directory of its own, and `pail` run in-process
 * against the same database and blobs (the environment an operator's CLI on
 * that host would have: DATA_DIR, and DATABASE_URL on PostgreSQL).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startTestServer, type TestServer } from '../../../server/test/helpers/server.js';
import { runCli } from '../../src/run.js';

export interface CliServer {
  server: TestServer;
  dataDir: string;
  /** `pail <args>` with `stdin` (a Readable; none: empty), as the operator would run it. */
  pail(args: string[], stdin?: Readable): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Stops the server and removes its data directory. */
  close(): Promise<void>;
}

export async function startCliServer(prefix: string): Promise<CliServer> {
  const dataDir = path.join(await mkdtemp(path.join(os.tmpdir(), prefix)), 'data');
  await mkdir(dataDir, { recursive: true });
  const server = await startTestServer({ dataDir });
  const { database } = server.config;
  const env = {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    S3_API_PORT: 'off',
    ...(database.kind === 'postgres' ? { DATABASE_URL: database.url } : {}),
  };
  return {
    server,
    dataDir,
    async pail(args, stdin = Readable.from([])) {
      let stdout = '';
      let stderr = '';
      const code = await runCli(args, {
        env,
        cwd: path.dirname(dataDir),
        stdin,
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
      });
      return { code, stdout, stderr };
    },
    async close() {
      await server.close();
      await rm(path.dirname(dataDir), { recursive: true, force: true });
    },
  };
}
