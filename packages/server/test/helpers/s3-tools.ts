/**
 * Running the real S3 tools (the AWS CLI, s3cmd, rclone, boto3) as child
 * processes, for s3-tools.test.ts, s3-tools-large.test.ts and
 * s3-upload-part-copy.test.ts: finding them, skipping their tests when one is
 * missing (never under CI, where they then fail), and running one with exactly
 * the environment a test gives it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

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

/** Exactly `env`, with PATH and a UTF-8 locale. */
const toolEnv = (env: Record<string, string>): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  PYTHONIOENCODING: 'utf-8',
  ...env,
});

/**
 * Runs a tool asynchronously (the server lives in the test's process: a
 * synchronous child would block it) with exactly `env` plus PATH, in UTF-8.
 */
export function run(command: string, args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: env.HOME,
      env: toolEnv(env),
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

// ---------------------------------------------------------------- s3cmd

/**
 * s3cmd for one user at `s3Url`, with its config in `home` (path style, no
 * TLS, SigV4 unless `signatureV2`); each call is one run with that config.
 */
export async function s3cmd(
  home: string,
  s3Url: string,
  credentials: { accessKeyId: string; secretAccessKey: string },
  options: { signatureV2?: boolean } = {},
): Promise<{ (args: string[]): Promise<Result>; home: string }> {
  const config = path.join(home, 's3cfg');
  const host = new URL(s3Url).host;
  await writeFile(
    config,
    [
      '[default]',
      `access_key = ${credentials.accessKeyId}`,
      `secret_key = ${credentials.secretAccessKey}`,
      `host_base = ${host}`,
      `host_bucket = ${host}`,
      'use_https = False',
      `signature_v2 = ${options.signatureV2 ? 'True' : 'False'}`,
      'bucket_location = us-east-1',
      '',
    ].join('\n'),
  );
  const runner = (args: string[]) => run(required('s3cmd', S3CMD), ['-c', config, '--no-progress', ...args], { HOME: home });
  return Object.assign(runner, { home });
}

// ---------------------------------------------------------------- the AWS CLI, kept warm

export interface AwsCli {
  (args: string[]): Promise<Result>;
  /** The CLI's HOME and config directory, where a test may put its local files too. */
  home: string;
}

/**
 * The AWS CLI for one user at `s3Url`: a config file (region, path-style
 * addressing, SigV4 presigning) and a credentials file of its own in `home`,
 * nothing from the user's ~/.aws, one attempt per request.
 */
export async function awsCli(home: string, s3Url: string, credentials: { accessKeyId: string; secretAccessKey: string }, timeoutMs = 60_000): Promise<AwsCli> {
  const config = path.join(home, 'config');
  const credentialsFile = path.join(home, 'credentials');
  // signature_version = s3v4: AWS CLI v1's `s3 presign` makes Signature Version 2 urls otherwise (v2's default is s3v4).
  await writeFile(config, '[default]\nregion = us-east-1\noutput = json\ns3 =\n    addressing_style = path\n    signature_version = s3v4\n');
  await writeFile(credentialsFile, `[default]\naws_access_key_id = ${credentials.accessKeyId}\naws_secret_access_key = ${credentials.secretAccessKey}\n`);
  const env = {
    HOME: home,
    AWS_CONFIG_FILE: config,
    AWS_SHARED_CREDENTIALS_FILE: credentialsFile,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_PAGER: '',
    AWS_MAX_ATTEMPTS: '1',
  };
  const cli = ((args: string[]) => runAws(['--endpoint-url', s3Url, ...args], env, timeoutMs)) as AwsCli;
  cli.home = home;
  // The CLI's imports start now, while the test prepares its first command.
  if (AWS !== null && AWS_PYTHON !== null) warmAws ??= startWarmAws(AWS_PYTHON, AWS);
  return cli;
}

/**
 * One AWS CLI command. Most of a short `aws` run is Python importing the CLI
 * before its first request. When the CLI is a Python script (Debian's and
 * pip's are), its commands run one after another in one Python process kept
 * per worker: each is a whole run of the same script, with its own arguments,
 * environment, working directory, stdout, stderr and exit code, only the
 * imports already done. Any other CLI (a frozen binary) runs as a process per
 * command.
 */
export function runAws(args: string[], env: Record<string, string>, timeoutMs: number): Promise<Result> {
  const aws = required('aws', AWS);
  const python = AWS_PYTHON;
  if (python === null) return run(aws, args, env, timeoutMs);
  const command = awsQueue.then(() => warmCommand(python, aws, args, env, timeoutMs));
  awsQueue = command.catch(() => undefined);
  return command;
}

/** Commands wait for the one before them: the warm process runs one at a time. */
let awsQueue: Promise<unknown> = Promise.resolve();

const AWS_PYTHON = AWS === null ? null : pythonOf(AWS);

/** The interpreter of a Python script (from its #! line, as the kernel would run it), or null for anything else. */
function pythonOf(tool: string): string | null {
  const file = tool.includes('/')
    ? tool
    : (process.env.PATH ?? '')
        .split(':')
        .map((dir) => path.join(dir, tool))
        .find((candidate) => existsSync(candidate));
  if (file === undefined) return null;
  const shebang = /^#!\s*(\S+)(?:[ \t]+(\S+))?/.exec(readFileSync(file, 'latin1').slice(0, 200));
  if (!shebang) return null;
  // `#!/usr/bin/env python3` names the interpreter as its argument.
  const interpreter = path.basename(shebang[1]!) === 'env' ? shebang[2] : shebang[1];
  return interpreter !== undefined && /python/.test(path.basename(interpreter)) ? interpreter : null;
}

/**
 * Reads one request a line from fd 3 ({args, env, cwd}), runs the script as
 * `python script args...` would (sys.argv, __main__, SystemExit for the exit
 * code) with fds 1 and 2 sent to files of its own, and answers one line on
 * fd 4. The process starts with no environment but PATH and the locale. The
 * clients a command leaves behind are collected before the next, so their
 * sockets close.
 */
const AWS_WARM_DRIVER = `
import gc, json, os, runpy, sys, tempfile, traceback
script = sys.argv[1]
requests = os.fdopen(3, 'r', encoding='utf-8')
answers = os.fdopen(4, 'w', encoding='utf-8')
stdout_fd, stderr_fd = os.dup(1), os.dup(2)
given = set()
for line in requests:
    request = json.loads(line)
    # The request's environment replaces the last one's; what the CLI's own imports set (AWS_DATA_PATH) stays.
    for name in given:
        os.environ.pop(name, None)
    given = set(request['env'])
    os.environ.update(request['env'])
    os.chdir(request['cwd'])
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.argv = [script, *request['args']]
        try:
            runpy.run_path(script, run_name='__main__')
            code = 0
        except SystemExit as end:
            if end.code is None or isinstance(end.code, int):
                code = end.code or 0
            else:
                print(end.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        gc.collect()
        out.seek(0)
        err.seek(0)
        answer = {'code': code, 'stdout': out.read().decode('utf-8', 'replace'), 'stderr': err.read().decode('utf-8', 'replace')}
    answers.write(json.dumps(answer) + '\\n')
    answers.flush()
`;

interface WarmAws {
  child: ChildProcess;
  requests: Writable;
  /** The answer the command in progress waits for. */
  answer: ((line: string | null) => void) | null;
  /** What the process itself wrote to stderr (not a command's): shown if it dies. */
  stderr: string;
}

let warmAws: WarmAws | null = null;

function startWarmAws(python: string, script: string): WarmAws {
  const child = spawn(python, ['-c', AWS_WARM_DRIVER, script], {
    env: toolEnv({}),
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
  });
  const warm: WarmAws = { child, requests: child.stdio[3] as Writable, answer: null, stderr: '' };
  // Neither the process nor its pipes keep a worker alive; when the worker ends, fd 3 closes and so does the loop.
  child.unref();
  for (const stream of [child.stdio[2], child.stdio[3], child.stdio[4]] as (Readable & { unref?: () => void })[]) stream.unref?.();
  child.stdio[2]!.on('data', (chunk: Buffer) => (warm.stderr = (warm.stderr + chunk.toString()).slice(-10_000)));
  warm.requests.on('error', () => undefined);
  createInterface({ input: child.stdio[4] as Readable }).on('line', (line) => warm.answer?.(line));
  const ended = () => {
    if (warmAws === warm) warmAws = null;
    warm.answer?.(null);
  };
  child.on('error', (error) => {
    warm.stderr += String(error);
    ended();
  });
  child.on('close', ended);
  return warm;
}

function warmCommand(python: string, script: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<Result> {
  warmAws ??= startWarmAws(python, script);
  const warm = warmAws;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      warm.answer = null;
      warm.child.kill('SIGKILL');
      if (warmAws === warm) warmAws = null;
      resolve({ code: null, stdout: '', stderr: `aws ${args.join(' ')}: no answer within ${timeoutMs} ms (killed)` });
    }, timeoutMs);
    warm.answer = (line) => {
      clearTimeout(timer);
      warm.answer = null;
      if (line === null) resolve({ code: null, stdout: '', stderr: `the Python process running the AWS CLI ended:\n${warm.stderr}` });
      else resolve(JSON.parse(line) as Result);
    };
    warm.requests.write(JSON.stringify({ args, env: toolEnv(env), cwd: env.HOME }) + '\n');
  });
}
