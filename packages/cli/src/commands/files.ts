/**
 * `pail files move|delete-folder`: a user's files moved, renamed or deleted a
 * folder at a time, through the server's own functions, as POST
 * /api/buckets/:id/move and DELETE /api/buckets/:id/folders/<folder>/ do (the
 * same checks, counts and crash safety; a running server hears of each change).
 */
import { type Command } from 'commander';
import { positiveId } from '../arguments.js';
import { type Cli, requireUser, server, withDatabase } from '../context.js';
import { plural } from '../output.js';

export function registerFileCommands(program: Command, { io, out }: Cli): void {
  const files = program
    .command('files')
    .description("move, rename and delete a user's files and folders")
    .addHelpText('after', '\nRun "pail files <command> --help" for the options of each command.');

  files
    .command('move')
    .description('move or rename a file, or a folder (a name ending in /) with everything in it')
    .argument('<email>', "the owner's email address")
    .argument('<bucket-id>', 'the bucket the file or folder is in', positiveId)
    .argument('<from>', 'the file, or the folder ending in /')
    .argument('<to>', 'its new name (a folder: ending in /)')
    .option('--to-bucket <id>', "another of the owner's buckets to move it into", positiveId)
    .option('--overwrite', 'replace files already at the new names (otherwise a name taken refuses the move)')
    .option('--json', 'print JSON (the same object as POST /api/buckets/:id/move answers in data)')
    .addHelpText(
      'after',
      [
        '',
        'A folder moves file by file after every file was checked; if it is cut off, the same command moves the rest.',
        '',
        'Examples:',
        '  $ pail files move alice@example.com 3 draft.txt notes/final.txt',
        '  $ pail files move alice@example.com 3 photos/ archive/photos/ --to-bucket 5',
      ].join('\n'),
    )
    .action(async (email: string, bucketId: number, from: string, to: string, options: { toBucket?: number; overwrite?: boolean; json?: boolean }) => {
      const { moveFiles, operatorFor } = await server();
      const result = await withDatabase(io, async (ctx) => {
        const owner = await requireUser(ctx.db, email);
        const request = { from, to, ...(options.toBucket !== undefined ? { to_bucket_id: options.toBucket } : {}), overwrite: options.overwrite === true };
        return moveFiles(await ctx.openStorage(), operatorFor(owner), String(bucketId), request);
      });
      if (options.json) return out.printJson(result);
      const where = result.to_bucket_id === result.bucket_id ? '' : ` in bucket ${result.to_bucket_id}`;
      out.print(`Moved ${plural(result.moved, 'file')} from ${result.from} to ${result.to}${where}.`);
    });

  files
    .command('delete-folder')
    .description('delete a folder and every file in it, its subfolders too')
    .argument('<email>', "the owner's email address")
    .argument('<bucket-id>', 'the bucket the folder is in', positiveId)
    .argument('<folder>', 'the folder (the trailing / may be left out)')
    .option('--json', 'print JSON (the same object as DELETE /api/buckets/:id/folders/<folder>/ answers in data)')
    .addHelpText('after', '\nExample:\n  $ pail files delete-folder alice@example.com 3 tmp/')
    .action(async (email: string, bucketId: number, folder: string, options: { json?: boolean }) => {
      const { deleteFolder, getOwnBucket } = await server();
      const result = await withDatabase(io, async (ctx) => {
        const owner = await requireUser(ctx.db, email);
        const bucket = await getOwnBucket(ctx.db, owner.id, String(bucketId));
        return deleteFolder(await ctx.openStorage(), bucket, folder);
      });
      if (options.json) return out.printJson(result);
      out.print(`Deleted ${plural(result.deleted, 'file')} in ${result.prefix}.`);
    });
}
