/**
 * The `pail` binary (bin/pail.js): runCli over this process. The environment
 * is the server's (process.env plus the .env file, loaded by the server's own
 * module, as `npm start` does).
 */
import '@pail/server/environment';
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
