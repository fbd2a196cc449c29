/**
 * `pail gc`: one garbage-collection pass, the same function the server runs
 * every 15 minutes: finish interrupted bucket deletions, remove blobs that no
 * file references and that are older than the grace period.
 */
import type { collectGarbage } from '@pail/server';
import type { Command } from 'commander';
import { wholeNumber } from '../arguments.js';
import { server, withDatabase } from '../context.js';
import { plural, print } from '../output.js';

type GcPorts = Parameters<typeof collectGarbage>[0];

/**
 * The server's object cache lives in the server's memory; this process serves
 * nothing and caches nothing, so there is nothing of its own to evict. (The
 * ObjectCache class is not exported by @pail/server, hence the cast.)
 */
const noCache = { delete: (_keys: string[]) => {} } as unknown as GcPorts['cache'];

export function registerGcCommand(program: Command): void {
  program
    .command('gc')
    .description('collect garbage once: remove orphaned blobs, finish interrupted bucket deletions')
    .option('--grace <seconds>', 'only remove orphans older than this (default: GC_GRACE_SECONDS, 3600)', wholeNumber)
    .addHelpText('after', '\nExamples:\n  $ pail gc\n  $ pail gc --grace 86400')
    .action(async (options: { grace?: number }) => {
      const { collectGarbage, openBlobStore } = await server();
      const report = await withDatabase(async ({ db, config }) => {
        const blobs = await openBlobStore(config.blob);
        try {
          return await collectGarbage({ db, blobs, cache: noCache }, options.grace ?? config.gcGraceSeconds);
        } finally {
          await blobs.close?.();
        }
      });
      print(
        `Removed ${plural(report.orphansRemoved, 'orphaned blob')}; ` +
          `finished ${plural(report.bucketsPurged, 'interrupted bucket deletion')}.`,
      );
    });
}
