/**
 * What every command that touches data shares: the configuration, read
 * exactly as the server reads it (the server's loadConfig, over the
 * environment runCli was given: in the binary, process.env with the .env file
 * loaded as `npm start` loads it), and the metadata database, opened and
 * migrated the way the server opens it, then closed when the command is done.
 */
import type { CommandServices, Config, Db } from '@pail/server/commands';
import type { Output } from './output.js';

/**
 * The server's command functions, loaded on first use: `--help` and usage
 * errors do not wait for them. Not the whole server package: the HTTP stack
 * is only for `pail serve`.
 */
export const server = () => import('@pail/server/commands');

/** The process around a run of `pail`: the binary passes its own; tests pass their own. */
export interface CliIo {
  /** The variables the configuration is read from. */
  env: NodeJS.ProcessEnv;
  /** Where a relative DATA_DIR starts. */
  cwd: string;
  /** Read for a piped password, unless it is a terminal. */
  stdin: AsyncIterable<unknown> & { isTTY?: boolean };
  stdout: Terminal;
  stderr: Terminal;
}

/** A writable end, and what commander asks of it for the width of its help. */
export interface Terminal {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** What a command is given: the run's process and its output. */
export interface Cli {
  io: CliIo;
  out: Output;
}

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
export async function cliConfig(io: CliIo): Promise<Config> {
  const { loadConfig } = await server();
  return loadConfig(io.env, io.cwd);
}

export async function withDatabase<T>(io: CliIo, run: (ctx: Context) => Promise<T>): Promise<T> {
  const { openCommandServices } = await server();
  const services = await openCommandServices(await cliConfig(io));
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
