/**
 * `pail uploads list|cancel`: a user's unfinished uploads (resumable and S3
 * multipart) and the bytes each holds against the cap, through the server's
 * own functions, as GET /api/uploads and DELETE /api/uploads/:kind/:id do.
 */
import { formatBytes, UNFINISHED_UPLOAD_KINDS, type UnfinishedUploadKind } from '@pail/shared';
import { InvalidArgumentError, type Command } from 'commander';
import { positiveId } from '../arguments.js';
import { type Cli, requireUser, server, withDatabase } from '../context.js';
import { formatTime, plural } from '../output.js';

function uploadKind(value: string): UnfinishedUploadKind {
  if (!(UNFINISHED_UPLOAD_KINDS as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be ${UNFINISHED_UPLOAD_KINDS.join(' or ')}.`);
  return value as UnfinishedUploadKind;
}

export function registerUploadCommands(program: Command, { io, out }: Cli): void {
  const uploads = program
    .command('uploads')
    .description("list and cancel a user's unfinished uploads, which hold storage until they finish")
    .addHelpText('after', '\nRun "pail uploads <command> --help" for the options of each command.');

  uploads
    .command('list')
    .description("list a user's unfinished uploads (resumable and S3 multipart) with the bytes each holds")
    .argument('<email>', "the owner's email address")
    .option('--bucket <id>', "only this bucket's uploads", positiveId)
    .option('--json', 'print JSON (the same objects as GET /api/uploads)')
    .addHelpText('after', '\nExamples:\n  $ pail uploads list alice@example.com\n  $ pail uploads list alice@example.com --bucket 3 --json')
    .action(async (email: string, options: { bucket?: number; json?: boolean }) => {
      const { listUnfinishedUploads, operatorFor } = await server();
      const { user, list } = await withDatabase(io, async ({ db }) => {
        const owner = await requireUser(db, email);
        return { user: owner, list: await listUnfinishedUploads(db, operatorFor(owner), options.bucket) };
      });
      if (options.json) return out.printJson(list.uploads);
      if (list.uploads.length === 0) return out.print(`${user.email} has no unfinished uploads.`);
      out.printTable(
        ['KIND', 'ID', 'BUCKET', 'FILE', 'HELD', 'RECEIVED', 'CREATED', 'UPDATED'],
        list.uploads.map((upload) => [
          upload.kind,
          upload.id,
          `${upload.bucket_name} (${upload.bucket_id})`,
          upload.filename,
          formatBytes(upload.held_bytes),
          upload.length === null ? `${plural(upload.parts ?? 0, 'part')}` : `${formatBytes(upload.received_bytes)} of ${formatBytes(upload.length)}`,
          formatTime(upload.created_at),
          formatTime(upload.updated_at),
        ]),
      );
      out.print(`${plural(list.uploads.length, 'unfinished upload')} holding ${formatBytes(list.heldBytes)}.`);
    });

  uploads
    .command('cancel')
    .description('cancel an unfinished upload: its bytes are deleted and no longer held')
    .argument('<email>', "the owner's email address")
    .argument('<kind>', `${UNFINISHED_UPLOAD_KINDS.join(' or ')} (see "pail uploads list")`, uploadKind)
    .argument('<upload-id>', 'the upload\'s id (see "pail uploads list")')
    .addHelpText('after', '\nExample:\n  $ pail uploads cancel alice@example.com resumable 5f0c…')
    .action(async (email: string, kind: UnfinishedUploadKind, uploadId: string) => {
      const { cancelUnfinishedUpload, operatorFor } = await server();
      const { user, cancelled } = await withDatabase(io, async (ctx) => {
        const owner = await requireUser(ctx.db, email);
        return { user: owner, cancelled: await cancelUnfinishedUpload(await ctx.openStorage(), operatorFor(owner), kind, uploadId) };
      });
      out.print(
        `Cancelled ${kind} upload ${uploadId} of ${user.email} (${cancelled.filename} in ${cancelled.bucket_name}): ${formatBytes(cancelled.held_bytes)} no longer held.`,
      );
    });
}
