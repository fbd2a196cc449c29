/**
 * What every command that touches data shares: the configuration, read exactly
 * as the server reads it (environment plus an optional .env file; importing
 * @pail/server loads 'dotenv/config' just as `npm start` does), and the
 * metadata database, opened and migrated the way the server opens it, then
 * closed when the command is done.
 */
import type { CommandServices, Config, Db } from '@pail/server';

/**
 * The server package, loaded on first use: it pulls in the whole HTTP stack,
 * which `--help` and usage errors should not wait for.
 */
export const server = () => import('@pail/server');

/** A refusal by the CLI itself (an unknown email, for instance): printed as one line, exit 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** The database (migrated), the caches its changes are announced through, and the blob store on request. */
export type Context = CommandServices;

/** Same parse as the server: a bad value throws ConfigError naming the variable. */
export async function cliConfig(): Promise<Config> {
  const { loadConfig } = await server();
  return loadConfig();
}

export async function withDatabase<T>(run: (ctx: Context) => Promise<T>): Promise<T> {
  const { openCommandServices } = await server();
  const services = await openCommandServices(await cliConfig());
  try {
    return await run(services);
  } finally {
    await services.close();
  }
}

export async function requireUser(db: Db, email: string) {
  const { findUser } = await server();
  const user = await findUser(db, email);
  if (!user) throw new CliError(`no user with email ${email}`);
  return user;
}

/** Where the metadata lives, for messages; a PostgreSQL password is never shown. */
export function describeDatabase(config: Config): string {
  if (config.database.kind === 'sqlite') return `SQLite database ${config.database.file}`;
  try {
    const url = new URL(config.database.url);
    if (url.password) url.password = '***';
    return `PostgreSQL database ${url.toString()}`;
  } catch {
    return 'PostgreSQL database';
  }
}
