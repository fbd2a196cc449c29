/** `pail serve`: the server, started exactly as `npm start` starts it. */
import type { Command } from 'commander';
import { type Cli, server } from '../context.js';

export function registerServeCommand(program: Command, { io }: Cli): void {
  program
    .command('serve')
    .description('run the server (dashboard, both APIs) until SIGTERM or SIGINT; configured by the environment like npm start')
    .addHelpText('after', '\nExample:\n  $ PORT=9000 DATA_DIR=/var/lib/pail pail serve')
    .action(async () => {
      const { configOrExit } = await server();
      // configOrExit prints a bad configuration value (naming the variable) and exits 2, as npm start does.
      const config = configOrExit(io.env, io.cwd);
      // The whole server package: the HTTP stack the other commands leave unloaded.
      const { serve } = await import('@pail/server');
      await serve(config);
    });
}
