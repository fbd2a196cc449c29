/** `pail serve`: the server, started exactly as `npm start` starts it. */
import type { Command } from 'commander';
import { server } from '../context.js';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the server (dashboard, both APIs) until SIGTERM or SIGINT; configured by the environment like npm start')
    .addHelpText('after', '\nExample:\n  $ PORT=9000 DATA_DIR=/var/lib/pail pail serve')
    .action(async () => {
      const { configOrExit, serve } = await server();
      // configOrExit prints a bad configuration value (naming the variable) and exits 2, as npm start does.
      await serve(configOrExit());
    });
}
