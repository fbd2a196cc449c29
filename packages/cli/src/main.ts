/**
 * `pail`: the operator's command line. One program, one file per command
 * group under commands/. Errors end as one line on stderr: `pail: <message>`,
 * exit 1; bad usage (unknown command, missing argument) exits 2.
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { registerGcCommand } from './commands/gc.js';
import { registerKeyCommands } from './commands/keys.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerServeCommand } from './commands/serve.js';
import { registerUploadCommands } from './commands/uploads.js';
import { registerUserCommands } from './commands/users.js';
import { CliError, server } from './context.js';

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

export function buildProgram(): Command {
  const program = new Command('pail')
    .description('Operate a Pail server: users, plans, API keys, unfinished uploads, migrations, garbage collection, and the server itself.')
    .version(version(), '-V, --version', 'print the version')
    .helpCommand('help [command]', 'show help for a command')
    // Settings made here are inherited by every subcommand created below.
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`pail: ${text.replace(/^error: /, '')}`) })
    .addHelpText(
      'after',
      [
        '',
        'Configuration comes from the environment (and an optional .env file), exactly as for the server:',
        'DATA_DIR, DATABASE_URL, S3_*, PLAN_* and the rest. Run "pail <command> --help" for details.',
      ].join('\n'),
    );
  registerServeCommand(program);
  registerMigrateCommand(program);
  registerUserCommands(program);
  registerKeyCommands(program);
  registerUploadCommands(program);
  registerGcCommand(program);
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

async function exitCodeFor(error: unknown): Promise<number> {
  if (error instanceof CommanderError) {
    // commander has printed help, the version, or the usage error already.
    return error.exitCode === 0 ? 0 : EXIT_USAGE;
  }
  const known = error instanceof CliError || (await isServerRefusal(error));
  process.stderr.write(`pail: ${describe(error)}\n`);
  if (!known && process.env.PAIL_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return EXIT_FAILURE;
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  process.exitCode = await exitCodeFor(error);
}
