/**
 * The process: read configuration (environment and an optional .env), build
 * the app, listen, and on SIGTERM/SIGINT stop taking new requests, let the
 * ones in flight finish, then close the stores.
 */
import './threadpool.js';
import './environment.js';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { buildApp } from './app.js';
import { contentHashEngine } from './blob/content-hash.js';
import { configOrExit, type Config } from './config.js';

const SHUTDOWN_TIMEOUT_MS = 30_000;

export async function serve(config: Config): Promise<void> {
  const app = await buildApp(config);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error('requests did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
  app.log.info(`Pail is serving ${config.publicUrl} (dashboard at /, API docs at /docs)`);
  if (app.s3Api) app.log.info(`S3-compatible API listening on ${await app.s3Api.listen()}`);
  if (contentHashEngine !== 'native') {
    app.log.warn(
      `no @napi-rs/blake-hash binary for ${process.platform}-${process.arch}: uploads are hashed by the WebAssembly BLAKE3, several times slower (see the README)`,
    );
  }
}

// Run when executed directly (node dist/main.js), not when imported by the CLI.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  serve(configOrExit()).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
