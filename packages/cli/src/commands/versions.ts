/**
 * `pail versions enable|suspend|list|download|restore|delete` and `pail trash`:
 * a bucket's versioning, a file's versions and the files waiting in the
 * trash, through the server's own functions, as PATCH …/buckets/:id
 * {versioning}, GET …/files/<file>/versions, GET …/files/<file>?version_id=,
 * POST …/files/<file>/restore, DELETE …/files/<file>?version_id= and GET
 * …/buckets/:id/trash do (the same checks, counts and cap; a running server
 * hears of each change).
 */
import { formatBytes } from '@pail/shared';
import type { Command } from 'commander';
import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Cli, requireUser, server, withDatabase } from '../context.js';
import { formatTime } from '../output.js';
import { ownBucket } from './own-bucket.js';

const fileArguments = (command: Command) =>
  command.argument('<email>', "the owner's email address").argument('<bucket>', 'the bucket, by id or name').argument('<file>', 'the filename');

export function registerVersionCommands(program: Command, { io, out }: Cli): void {
  const versions = program
    .command('versions')
    .description("a bucket's versioning and a file's versions: list, download, restore, delete one for good")
    .addHelpText('after', '\nRun "pail versions <command> --help" for the options of each command.');

  for (const [name, state, text] of [
    ['enable', 'enabled', 'keep every version a write replaces, and deleted files restorable'],
    ['suspend', 'suspended', 'stop keeping new versions (those kept stay)'],
  ] as const) {
    versions
      .command(name)
      .description(`versioning on a bucket: ${text}`)
      .argument('<email>', "the owner's email address")
      .argument('<bucket>', 'the bucket, by id or name')
      .action(async (email: string, bucketName: string) => {
        const { setVersioning } = await server();
        const bucket = await withDatabase(io, async (ctx) => setVersioning(ctx, (await ownBucket(ctx, email, bucketName)).bucket, state));
        out.print(`Versioning of ${bucket.name} is ${state}.`);
      });
  }

  fileArguments(versions.command('list').description("a file's versions, newest first, delete markers too"))
    .option('--json', 'print JSON (the same list as GET …/files/<file>/versions answers in data)')
    .addHelpText('after', '\nExample:\n  $ pail versions list alice@example.com photos 2024/cat.jpg')
    .action(async (email: string, bucketName: string, file: string, options: { json?: boolean }) => {
      const { fileVersions, parseFilename, shownVersionId, versionView, VERSIONS_PAGE_MAX } = await server();
      const list = await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        // Every version, a page at a time.
        const filename = parseFilename(file);
        const all = [];
        for (let page = await fileVersions(ctx, bucket, filename); ;) {
          all.push(...page);
          if (page.length < VERSIONS_PAGE_MAX) return all.map(versionView);
          page = await fileVersions(ctx, bucket, filename, { after: shownVersionId(page.at(-1)!.version_id) });
        }
      });
      if (options.json) return out.printJson(list);
      if (list.length === 0) return out.print(`${file} has no versions.`);
      out.printTable(
        ['VERSION', 'WRITTEN', 'SIZE', 'STATE'],
        list.map((v) => [
          v.version_id,
          formatTime(v.created_at),
          v.is_delete_marker ? '-' : formatBytes(v.size),
          v.is_delete_marker ? 'deleted' : v.is_latest ? 'current' : '',
        ]),
      );
    });

  fileArguments(versions.command('download').description('write one version of a file to a path'))
    .argument('<version-id>', 'the version (from pail versions list)')
    .requiredOption('-o, --output <path>', 'the file to write')
    .action(async (email: string, bucketName: string, file: string, versionId: string, options: { output: string }) => {
      const { findReadableVersion, objectBody, operatorFor, parseFilename } = await server();
      const written = await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        const owner = await requireUser(ctx.db, email);
        const storage = await ctx.openStorage();
        const found = await findReadableVersion(storage, { id: bucket.id }, parseFilename(file), operatorFor(owner), versionId);
        if ('deleteMarker' in found) throw new Error(`That version of ${file} is a delete marker: it has no bytes`);
        const body = await objectBody(storage, found.object, null);
        try {
          await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, createWriteStream(options.output));
        } catch (error) {
          await rm(options.output, { force: true });
          throw error;
        }
        return (await stat(options.output)).size;
      });
      out.print(`Wrote ${options.output} (${formatBytes(written)}).`);
    });

  fileArguments(versions.command('restore').description('make a copy of a version the current one (a new version; nothing is lost)'))
    .argument('<version-id>', 'the version (from pail versions list or pail trash)')
    .action(async (email: string, bucketName: string, file: string, versionId: string) => {
      const { parseFilename, restoreVersion } = await server();
      const result = await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        return restoreVersion(await ctx.openStorage(), await requireUser(ctx.db, email), bucket, parseFilename(file), versionId, 'cli');
      });
      out.print(`Restored ${result.filename} (${formatBytes(result.size)}).`);
    });

  fileArguments(versions.command('delete').description('delete one version (or delete marker) of a file for good'))
    .argument('<version-id>', 'the version (from pail versions list)')
    .action(async (email: string, bucketName: string, file: string, versionId: string) => {
      const { deleteFileVersion, parseFilename } = await server();
      await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        await deleteFileVersion(await ctx.openStorage(), bucket, parseFilename(file), versionId, 'cli');
      });
      out.print(`Deleted version ${versionId} of ${file} for good.`);
    });

  program
    .command('trash')
    .description("a bucket's deleted files, kept while versioning keeps them: who deleted each, when, and the version a restore brings back")
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .option('--prefix <folder>', 'only names starting with this')
    .option('--json', 'print JSON (the same list as GET …/buckets/:id/trash answers in data)')
    .addHelpText('after', '\nExample:\n  $ pail trash alice@example.com photos\n  $ pail versions restore alice@example.com photos cat.jpg <version-id>')
    .action(async (email: string, bucketName: string, options: { prefix?: string; json?: boolean }) => {
      const { trash, trashView } = await server();
      const entries = await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        return (await trash(ctx, bucket, options.prefix === undefined ? {} : { prefix: options.prefix })).map(trashView);
      });
      if (options.json) return out.printJson(entries);
      if (entries.length === 0) return out.print('The trash is empty.');
      out.printTable(
        ['FILE', 'DELETED', 'BY', 'SIZE', 'RESTORE VERSION'],
        entries.map((e) => [e.filename, formatTime(e.deleted_at), e.deleted_by ?? '-', formatBytes(e.size), e.restorable_version_id ?? '-']),
      );
    });
}
