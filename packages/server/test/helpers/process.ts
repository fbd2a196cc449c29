/** Runs the real server entry point (dist/main.js) as a child process, as `npm start` does. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './server.js';

export const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/main.js');

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      PLAN_FREE_RATE_LIMIT: '100000',
      SIGNED_URL_RATE_LIMIT: '100000',
      // The S3 listener's default port would clash between processes; a test that wants it says so.
      S3_API_PORT: 'off',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}): ${output}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, child, output: () => output, exited };
}
