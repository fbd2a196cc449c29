/**
 * Running the real S3 tools (the AWS CLI, s3cmd, rclone, boto3) as child
 * processes, for s3-tools.test.ts and s3-tools-large.test.ts: finding them,
 * skipping their tests when one is missing (never under CI, where they then
 * fail), and running one with exactly the environment a test gives it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CI = process.env.CI !== undefined && /^(1|true|yes)$/i.test(process.env.CI);

/** The first candidate that runs (`probe` exits 0), or null. Debian's own binaries first: they are what CI installs. */
function findTool(candidates: string[], probe: string[]): string | null {
  for (const candidate of candidates) {
    if (candidate.startsWith('/') && !existsSync(candidate)) continue;
    const result = spawnSync(candidate, probe, { stdio: 'ignore', timeout: 30_000 });
    if (result.status === 0) return candidate;
  }
  return null;
}

// PAIL_TEST_AWS_CLI picks another AWS CLI (a newer one, say) to run the same tests with.
export const AWS = findTool([...(process.env.PAIL_TEST_AWS_CLI ? [process.env.PAIL_TEST_AWS_CLI] : []), '/usr/bin/aws', 'aws'], ['--version']);
export const S3CMD = findTool(['/usr/bin/s3cmd', 's3cmd'], ['--version']);
export const RCLONE = findTool(['/usr/bin/rclone', 'rclone'], ['version']);
// Debian's python3-boto3 belongs to Debian's python3, not to whatever python3 is first on PATH.
export const PYTHON_BOTO3 = findTool(['/usr/bin/python3', 'python3'], ['-c', 'import boto3']);

/** Skip a tool's tests when it is missing, with a printed reason; never under CI, where its tests then fail. */
const announced = new Set<string>();
export function missing(name: string, tool: string | null): boolean {
  if (tool !== null || CI) return false;
  if (announced.has(name)) return true;
  announced.add(name);
  console.log(`[pail] S3 tools: ${name} tests skipped: ${name} is not installed (.ci/run installs it; with CI set this fails)`);
  return true;
}

export function required(name: string, tool: string | null): string {
  if (tool === null) throw new Error(`${name} is not installed, and CI is set (.ci/run installs it from Debian)`);
  return tool;
}

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a tool asynchronously (the server lives in the test's process: a
 * synchronous child would block it) with exactly `env` plus PATH, in UTF-8.
 */
export function run(command: string, args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: env.HOME,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', PYTHONIOENCODING: 'utf-8', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A successful run's stdout; a failed one fails the test with everything the tool said. */
export function ok(result: Result, what: string): string {
  if (result.code !== 0) throw new Error(`${what} exited with ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result.stdout;
}
