/** `pail migrate`: bring the metadata schema up to date now, instead of at the next start. */
import type { Command } from 'commander';
import { type Cli, describeDatabase, withDatabase } from '../context.js';
import { plural } from '../output.js';

export function registerMigrateCommand(program: Command, { io, out }: Cli): void {
  program
    .command('migrate')
    .description('apply pending database migrations (the server also applies them at start-up)')
    .addHelpText('after', '\nExample:\n  $ DATABASE_URL=postgres://pail@db/pail pail migrate')
    .action(async () => {
      const { applied, where } = await withDatabase(io, async ({ applied, config }) => ({ applied, where: describeDatabase(config) }));
      if (applied.length === 0) return out.print(`${where} is up to date; no migrations to apply.`);
      out.print(`${where}: applied ${plural(applied.length, 'migration')}:`);
      for (const name of applied) out.print(`  ${name}`);
    });
}
