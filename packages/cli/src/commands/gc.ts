/**
 * `pail gc`: one pass of what the server does every 15 minutes: remove S3
 * multipart uploads begun more than MULTIPART_EXPIRY_SECONDS ago (with their
 * parts) and resumable uploads idle for 24 hours, then finish interrupted bucket deletions and remove blobs that
 * nothing references and that are older than the grace period.
 */
import type { Command } from 'commander';
import { wholeNumber } from '../arguments.js';
import { type Cli, server, withDatabase } from '../context.js';
import { plural } from '../output.js';

export function registerGcCommand(program: Command, { io, out }: Cli): void {
  program
    .command('gc')
    .description('collect garbage once: remove expired multipart and resumable uploads and orphaned blobs, finish interrupted bucket deletions')
    .option('--grace <seconds>', 'only remove orphans older than this (default: GC_GRACE_SECONDS, 3600)', wholeNumber)
    .addHelpText('after', '\nExamples:\n  $ pail gc\n  $ pail gc --grace 86400')
    .action(async (options: { grace?: number }) => {
      const { collectGarbage, expireMultipartUploads, expireResumableUploads, RESUMABLE_IDLE_SECONDS } = await server();
      const { expired, resumable, report } = await withDatabase(io, async (ctx) => {
        const storage = await ctx.openStorage();
        // Expired uploads first: blobs their removal leaves behind are then garbage, as in the server's own sweep.
        const expired = await expireMultipartUploads(storage, ctx.config.multipartExpirySeconds);
        const resumable = await expireResumableUploads(storage, RESUMABLE_IDLE_SECONDS);
        return { expired, resumable, report: await collectGarbage(storage, options.grace ?? ctx.config.gcGraceSeconds) };
      });
      out.print(
        `Removed ${plural(expired, 'expired multipart upload')}, ${plural(resumable, 'expired resumable upload')} and ` +
          `${plural(report.orphansRemoved, 'orphaned blob')}; finished ${plural(report.bucketsPurged, 'interrupted bucket deletion')}.`,
      );
    });
}
