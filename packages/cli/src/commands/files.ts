/**
 * `pail files info|set-metadata|zip|move|delete-folder` (and `tags`, file-tags.ts; `retention`, `legal-hold`, file-locks.ts): a user's file
 * details and their edit, zips of folders or selections, and files moved,
 * renamed or deleted a folder at a time, through the server's own functions,
 * as GET …/details/<file>, PATCH …/files/<file>, GET/POST …/zip, POST
 * /api/buckets/:id/move and DELETE /api/buckets/:id/folders/<folder>/ do (the
 * same checks, counts and crash safety; a running server hears of each
 * change). info, set-metadata and zip name a bucket by its id or its name.
 */
import { formatBytes, type EditFile } from '@pail/shared';
import { InvalidArgumentError, type Command } from 'commander';
import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { positiveId } from '../arguments.js';
import { type Cli, requireUser, server, withDatabase } from '../context.js';
import { registerLockCommands } from './file-locks.js';
import { registerTagCommands } from './file-tags.js';
import { ownBucket } from './own-bucket.js';
import { formatTime, plural } from '../output.js';

/** `--meta name=value`, repeated. */
function collectMeta(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at < 1) throw new InvalidArgumentError('must be name=value.');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

interface MetadataOptions {
  meta?: Record<string, string>;
  clearMeta?: boolean;
  contentType?: string;
  cacheControl?: string;
  contentDisposition?: string;
  contentEncoding?: string;
  contentLanguage?: string;
  expires?: string;
}

/** A header option: a value sets it, '' clears it, absent keeps it. */
const header = (value: string | undefined) => (value === undefined ? undefined : value === '' ? null : value);

function editOf(options: MetadataOptions): EditFile {
  const edit: EditFile = {};
  if (options.meta !== undefined || options.clearMeta) edit.metadata = options.meta ?? {};
  if (options.contentType !== undefined) edit.content_type = options.contentType;
  const headers = {
    cache_control: header(options.cacheControl),
    content_disposition: header(options.contentDisposition),
    content_encoding: header(options.contentEncoding),
    content_language: header(options.contentLanguage),
    expires: header(options.expires),
  };
  for (const [field, value] of Object.entries(headers)) if (value !== undefined) edit[field as keyof typeof headers] = value;
  return edit;
}

export function registerFileCommands(program: Command, { io, out }: Cli): void {
  const files = program
    .command('files')
    .description("a user's files: details, metadata and tags, zips of folders, moves, renames and folder deletion")
    .addHelpText('after', '\nRun "pail files <command> --help" for the options of each command.');

  files
    .command('info')
    .description("a file's size, type, ETag, times, url, stored headers and user metadata")
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .argument('<file>', 'the filename')
    .option('--json', 'print JSON (the same object as GET …/details/<file>)')
    .addHelpText('after', '\nExample:\n  $ pail files info alice@example.com photos 2024/cat.jpg')
    .action(async (email: string, bucketName: string, file: string, options: { json?: boolean }) => {
      const { fileDetailsOf, parseFilename, requireObject } = await server();
      const details = await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        const storage = await ctx.openStorage();
        return fileDetailsOf(storage, bucket, await requireObject(ctx, bucket, parseFilename(file)));
      });
      if (options.json) return out.printJson(details);
      const rows: [string, string][] = [
        ['File', details.filename],
        ['Size', `${formatBytes(details.size)} (${details.size} bytes)`],
        ['Type', details.content_type],
        ['ETag', details.etag],
        ['Created', formatTime(details.created_at)],
        ['Modified', formatTime(details.updated_at)],
        ['URL', details.url],
        ...(['cache_control', 'content_disposition', 'content_encoding', 'content_language', 'expires'] as const)
          .filter((field) => details[field] !== null)
          .map((field) => [field, details[field]!] as [string, string]),
        ...Object.entries(details.metadata).map(([name, value]) => [`meta ${name}`, value] as [string, string]),
      ];
      const width = Math.max(...rows.map(([name]) => name.length));
      for (const [name, value] of rows) out.print(`${name.padEnd(width)}  ${value}`);
    });

  files
    .command('set-metadata')
    .description("edit a file's user metadata (replaced whole by --meta), type and stored headers; the bytes stay")
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .argument('<file>', 'the filename')
    .option('--meta <name=value>', 'user metadata (x-amz-meta-<name>); repeat it; together they replace all there was', collectMeta)
    .option('--clear-meta', 'remove all user metadata')
    .option('--content-type <type>', 'the MIME type')
    .option('--cache-control <value>', "Cache-Control ('' clears it)")
    .option('--content-disposition <value>', "Content-Disposition ('' clears it)")
    .option('--content-encoding <value>', "Content-Encoding ('' clears it)")
    .option('--content-language <value>', "Content-Language ('' clears it)")
    .option('--expires <value>', "Expires ('' clears it)")
    .option('--json', 'print the details after the edit as JSON')
    .addHelpText('after', '\nExample:\n  $ pail files set-metadata alice@example.com photos cat.jpg --meta author=ada --cache-control "max-age=3600"')
    .action(async (email: string, bucketName: string, file: string, options: MetadataOptions & { json?: boolean }) => {
      const { editObjectMetadata, parseFilename } = await server();
      const details = await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        return editObjectMetadata(await ctx.openStorage(), bucket, parseFilename(file), editOf(options), 'cli');
      });
      if (options.json) return out.printJson(details);
      const count = Object.keys(details.metadata).length;
      out.print(`Updated ${details.filename}: ${details.content_type}, ${count === 1 ? '1 metadata entry' : `${count} metadata entries`}.`);
    });

  files
    .command('zip')
    .description('write a folder (or the whole bucket, or a selection) as one zip, streamed')
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .argument('[prefix]', 'the folder (entries are named relative to it); absent: the whole bucket')
    .requiredOption('-o, --output <path>', 'the zip file to write')
    .option('--file <name>', 'zip this file of the folder (repeat it); with --folder, a selection', collect)
    .option('--folder <name>', 'zip this folder of the folder (repeat it)', collect)
    .addHelpText('after', '\nExamples:\n  $ pail files zip alice@example.com photos 2024/ -o 2024.zip\n  $ pail files zip alice@example.com photos -o all.zip')
    .action(async (email: string, bucketName: string, prefix: string | undefined, options: { output: string; file?: string[]; folder?: string[] }) => {
      const { folderZip, selectionZip, startZip } = await server();
      const written = await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        const plan =
          options.file === undefined && options.folder === undefined
            ? folderZip(ctx.db, bucket, prefix)
            : selectionZip(ctx.db, bucket, { ...(prefix === undefined ? {} : { prefix }), filenames: options.file ?? [], folders: options.folder ?? [] });
        const archive = await startZip(await ctx.openStorage(), plan);
        try {
          await pipeline(archive.stream, createWriteStream(options.output));
        } catch (error) {
          await rm(options.output, { force: true });
          throw error;
        }
        return (await stat(options.output)).size;
      });
      out.print(`Wrote ${options.output} (${formatBytes(written)}).`);
    });

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

  registerTagCommands(files, { io, out });
  registerLockCommands(files, { io, out });
}
