/**
 * `pail`: the operator's command line. One program, one file per command
 * group under commands/. Errors end as one line on stderr: `pail: <message>`,
 * exit 1; bad usage (unknown command, missing argument) exits 2. runCli is the
 * whole program over a given process (arguments, environment, stdin, stdout,
 * stderr), so tests run it in theirs; main.ts runs it over the real one.
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { registerAuditCommand } from './commands/audit.js';
import { registerFileCommands } from './commands/files.js';
import { registerGcCommand } from './commands/gc.js';
import { registerKeyCommands } from './commands/keys.js';
import { registerLifecycleCommands } from './commands/lifecycle.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerServeCommand } from './commands/serve.js';
import { registerUploadCommands } from './commands/uploads.js';
import { registerUserCommands } from './commands/users.js';
import { registerVersionCommands } from './commands/versions.js';
import { CliError, server, type Cli, type CliIo, type Terminal } from './context.js';
import { outputTo } from './output.js';

export type { CliIo, Terminal } from './context.js';

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

function version(): string {
  try {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return manifest.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** commander's own width rule (a terminal's columns, else 80), for the run's streams. */
const helpWidth = (stream: Terminal) => (stream.isTTY && stream.columns ? stream.columns : 80);

export function buildProgram(io: CliIo): Command {
  const cli: Cli = { io, out: outputTo(io.stdout) };
  const program = new Command('pail')
    .description('Operate a Pail server: users, plans, API keys, unfinished uploads, files and folders, migrations, garbage collection, and the server itself.')
    .version(version(), '-V, --version', 'print the version')
    .helpCommand('help [command]', 'show help for a command')
    // Settings made here are inherited by every subcommand created below.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
      outputError: (text, write) => write(`pail: ${text.replace(/^error: /, '')}`),
    })
    .addHelpText(
      'after',
      [
        '',
        'Configuration comes from the environment (and an optional .env file), exactly as for the server:',
        'DATA_DIR, DATABASE_URL, S3_*, PLAN_* and the rest. Run "pail <command> --help" for details.',
      ].join('\n'),
    );
  registerServeCommand(program, cli);
  registerMigrateCommand(program, cli);
  registerUserCommands(program, cli);
  registerKeyCommands(program, cli);
  registerUploadCommands(program, cli);
  registerFileCommands(program, cli);
  registerVersionCommands(program, cli);
  registerLifecycleCommands(program, cli);
  registerGcCommand(program, cli);
  registerAuditCommand(program, cli);
  return program;
}

/** One line for any error, whatever shape it has. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.message === '' && error.errors.length > 0) return describe(error.errors[0]);
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = error.message || code || error.name;
    return message.split('\n')[0] ?? message;
  }
  return String(error);
}

/** A refusal the server's code words for people (an AppError or a ConfigError), not a crash. */
async function isServerRefusal(error: unknown): Promise<boolean> {
  try {
    const { AppError, ConfigError } = await server();
    return error instanceof AppError || error instanceof ConfigError;
  } catch {
    return false; // the server package itself failed to load
  }
}

async function exitCodeFor(error: unknown, io: CliIo): Promise<number> {
  if (error instanceof CommanderError) {
    // commander has printed help, the version, or the usage error already.
    return error.exitCode === 0 ? 0 : EXIT_USAGE;
  }
  const known = error instanceof CliError || (await isServerRefusal(error));
  io.stderr.write(`pail: ${describe(error)}\n`);
  if (!known && io.env.PAIL_DEBUG && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  return EXIT_FAILURE;
}

/** Runs `pail <args>` (the arguments after the program's name) and resolves to its exit code. */
export async function runCli(args: string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(args, { from: 'user' });
    return 0;
  } catch (error) {
    return exitCodeFor(error, io);
  }
}
