// An s3rver in its own process, for the scaled test backends (helpers/backends.ts).
// A process of its own because s3rver can throw uncaught errors when objects are
// deleted while being written or read; in a test worker that would fail whatever
// test happens to be running. Here such an error is logged and the server
// keeps serving. Usage: node s3rver-child.mjs <directory>. Prints one line of
// JSON ({"port": n}) when listening; when its stdin closes (the parent test
// process ended, however it ended) it removes its directory and exits.
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const S3rver = createRequire(import.meta.url)('s3rver');
const directory = process.argv[2];
if (!directory) {
  console.error('usage: node s3rver-child.mjs <directory>');
  process.exit(2);
}

process.on('uncaughtException', (error) => {
  console.error(`s3rver: ${error?.stack ?? error}`);
});

const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
const address = await server.run();
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);

const stop = () => {
  server.close().finally(() => {
    rmSync(directory, { recursive: true, force: true });
    process.exit(0);
  });
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
