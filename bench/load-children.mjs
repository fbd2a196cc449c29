/** The load generator, the stream client and the S3 client: child processes on the load core, each printing one JSON line. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BENCH_DIR, LOAD_CORE, pinnedNode, REPO_DIR } from './setup.mjs';

function runChildJson(script, spec, timeoutMs, nodeArgs = []) {
  return new Promise((resolve, reject) => {
    const [command, args] = pinnedNode(LOAD_CORE, path.join(BENCH_DIR, script), [JSON.stringify(spec)], nodeArgs);
    const child = spawn(command, args, { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) return reject(new Error(`${script} failed (exit ${code}): ${err.slice(-1000)}`));
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`${script} printed no JSON: ${out.slice(-500)} ${err.slice(-500)}`));
      }
    });
  });
}

/** One autocannon run (see load.mjs for the spec). */
export function runLoad(spec) {
  return runChildJson('load.mjs', spec, ((spec.duration ?? 600) + 60) * 1000);
}

/** One W5/W6 transfer (see stream-client.mjs for the spec). */
export function runStream(spec) {
  return runChildJson('stream-client.mjs', spec, 15 * 60 * 1000);
}

/** One S3 upload through the AWS SDK, or its check (see s3-client.mjs for the spec). */
export function runS3Client(spec, nodeArgs = []) {
  return runChildJson('s3-client.mjs', spec, 15 * 60 * 1000, nodeArgs);
}
