/**
 * `pail lifecycle get|set|delete|run`: a bucket's lifecycle rules, kept and
 * checked by the server's own functions as PUT/GET/DELETE
 * …/buckets/:id/lifecycle keep them (the same JSON), and one pass of the
 * sweep that applies them, as a running server makes every
 * LIFECYCLE_INTERVAL_SECONDS (it waits its turn behind one under way).
 */
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { type Cli, type CliIo, type Context, requireUser, server, withDatabase } from '../context.js';
import { plural } from '../output.js';

/** The owner's bucket, by id or by name. */
async function ownBucket(ctx: Context, email: string, bucket: string) {
  const { getOwnBucket, getOwnBucketByName, operatorFor } = await server();
  const owner = await requireUser(ctx.db, email);
  return /^\d+$/.test(bucket) ? getOwnBucket(ctx.db, owner.id, bucket) : getOwnBucketByName(ctx.db, operatorFor(owner), bucket, 'manageBucket');
}

async function readRules(file: string, stdin: CliIo['stdin']): Promise<string> {
  if (file !== '-') return readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

export function registerLifecycleCommands(program: Command, { io, out }: Cli): void {
  const lifecycle = program
    .command('lifecycle')
    .description("a bucket's lifecycle rules (S3's, as the Pail API's JSON): show, set, remove, or apply them now")
    .addHelpText('after', '\nRun "pail lifecycle <command> --help" for the options of each command.');

  lifecycle
    .command('get')
    .description('print a bucket\'s lifecycle rules as JSON ({"rules": […]}, as GET …/lifecycle answers)')
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .action(async (email: string, bucketName: string) => {
      const { getBucketLifecycle } = await server();
      const rules = await withDatabase(io, async (ctx) => getBucketLifecycle(ctx.db, (await ownBucket(ctx, email, bucketName)).id));
      if (rules === null) return out.print('The bucket has no lifecycle rules.');
      out.printJson({ rules });
    });

  lifecycle
    .command('set')
    .description('replace a bucket\'s lifecycle rules with those of a JSON file ({"rules": […]} or the list alone; - reads stdin)')
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .argument('<file>', 'the rules, as PUT …/lifecycle takes them')
    .addHelpText(
      'after',
      '\nExample:\n  $ echo \'{"rules":[{"id":"logs","status":"enabled","filter":{"prefix":"logs/"},"expiration":{"days":30}}]}\' \\\n' +
        '      | pail lifecycle set alice@example.com photos -',
    )
    .action(async (email: string, bucketName: string, file: string) => {
      const { lifecycleRulesFromJson, putBucketLifecycle } = await server();
      const rules = lifecycleRulesFromJson(await readRules(file, io.stdin));
      const kept = await withDatabase(io, async (ctx) => putBucketLifecycle(ctx, await ownBucket(ctx, email, bucketName), rules));
      out.print(`Set ${plural(kept.length, 'lifecycle rule')}: ${kept.map((rule) => rule.id).join(', ')}.`);
    });

  lifecycle
    .command('delete')
    .description("remove a bucket's lifecycle rules")
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .action(async (email: string, bucketName: string) => {
      const { deleteBucketLifecycle } = await server();
      await withDatabase(io, async (ctx) => deleteBucketLifecycle(ctx, await ownBucket(ctx, email, bucketName)));
      out.print('Removed the lifecycle rules.');
    });

  lifecycle
    .command('run')
    .description("apply every bucket's lifecycle rules once (a running server does it every LIFECYCLE_INTERVAL_SECONDS)")
    .action(async () => {
      const { leaseHolderName, runLifecycleSweep } = await server();
      const tally = await withDatabase(io, async (ctx) =>
        runLifecycleSweep(await ctx.openStorage(), leaseHolderName(), {
          daySeconds: ctx.config.lifecycleDaySeconds,
          pauseMs: 0,
          restFactor: 0,
          closing: () => false,
        }),
      );
      if (tally === null) return out.print('Another instance is applying the lifecycle rules now; nothing was done.');
      out.print(
        `Expired ${plural(tally.expired, 'file')} and ${plural(tally.noncurrentExpired, 'old version')}, removed ` +
          `${plural(tally.markersRemoved, 'expired delete marker')} and aborted ${plural(tally.aborted, 'multipart upload')}.`,
      );
    });
}
