/**
 * `pail gc`: one garbage-collection pass, the same function the server runs
 * every 15 minutes: finish interrupted bucket deletions, remove blobs that no
 * file references and that are older than the grace period.
 */
import type { Command } from 'commander';
import { wholeNumber } from '../arguments.js';
import { server, withDatabase } from '../context.js';
import { plural, print } from '../output.js';

export function registerGcCommand(program: Command): void {
  program
    .command('gc')
    .description('collect garbage once: remove orphaned blobs, finish interrupted bucket deletions')
    .option('--grace <seconds>', 'only remove orphans older than this (default: GC_GRACE_SECONDS, 3600)', wholeNumber)
    .addHelpText('after', '\nExamples:\n  $ pail gc\n  $ pail gc --grace 86400')
    .action(async (options: { grace?: number }) => {
      const { collectGarbage } = await server();
      const report = await withDatabase(async (ctx) => collectGarbage(await ctx.openStorage(), options.grace ?? ctx.config.gcGraceSeconds));
      print(`Removed ${plural(report.orphansRemoved, 'orphaned blob')}; ` + `finished ${plural(report.bucketsPurged, 'interrupted bucket deletion')}.`);
    });
}
