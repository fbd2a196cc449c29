/**
 * `pail files tags get|set|delete`: a file's tags (S3's object tagging), through
 * the server's own functions, as `GET/PUT/DELETE …/files/<file>/tags` do: the
 * same limits (10 tags, keys up to 128 characters, values up to 256), and a
 * running server hears of each change.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { type Cli, server, withDatabase } from '../context.js';
import { ownBucket } from './own-bucket.js';

/** `key=value`, repeated; a value may be empty, a key may not. */
function collectTag(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at < 1) throw new InvalidArgumentError('must be key=value.');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

export function registerTagCommands(files: Command, { io, out }: Cli): void {
  const tags = files
    .command('tags')
    .description("a file's tags: get, set (replacing them all) or delete")
    .addHelpText('after', '\nRun "pail files tags <command> --help" for the options of each command.');

  const printTags = (filename: string, kept: Record<string, string>) => {
    const entries = Object.entries(kept);
    if (entries.length === 0) return out.print(`${filename} has no tags.`);
    const width = Math.max(...entries.map(([key]) => key.length));
    for (const [key, value] of entries) out.print(`${key.padEnd(width)}  ${value}`);
  };

  tags
    .command('get')
    .description("print a file's tags, one key and value a line")
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .argument('<file>', 'the filename')
    .option('--json', 'print JSON (the same object as GET …/files/<file>/tags answers in data)')
    .addHelpText('after', '\nExample:\n  $ pail files tags get alice@example.com photos 2024/cat.jpg')
    .action(async (email: string, bucketName: string, file: string, options: { json?: boolean }) => {
      const { decodeTags, parseFilename, requireObject, tagMap } = await server();
      const kept = await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        return tagMap(decodeTags((await requireObject(ctx, bucket, parseFilename(file))).tags));
      });
      if (options.json) return out.printJson({ tags: kept });
      printTags(file, kept);
    });

  tags
    .command('set')
    .description("replace a file's tags with these (at most 10); its bytes stay")
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .argument('<file>', 'the filename')
    .argument('<key=value...>', 'the tags', (value: string, previous?: Record<string, string>) => collectTag(value, previous))
    .option('--json', 'print the tags as kept as JSON')
    .addHelpText('after', '\nExample:\n  $ pail files tags set alice@example.com photos 2024/cat.jpg project=pail stage=final')
    .action(async (email: string, bucketName: string, file: string, wanted: Record<string, string>, options: { json?: boolean }) => {
      const { parseFilename, setObjectTags, tagMap, tagsOfMap } = await server();
      const kept = await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        return tagMap((await setObjectTags(await ctx.openStorage(), bucket, parseFilename(file), tagsOfMap(wanted), 'cli')).tags);
      });
      if (options.json) return out.printJson({ tags: kept });
      printTags(file, kept);
    });

  tags
    .command('delete')
    .description("remove a file's tags; the file stays")
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .argument('<file>', 'the filename')
    .addHelpText('after', '\nExample:\n  $ pail files tags delete alice@example.com photos 2024/cat.jpg')
    .action(async (email: string, bucketName: string, file: string) => {
      const { parseFilename, setObjectTags } = await server();
      await withDatabase(io, async (ctx) => {
        const { bucket } = await ownBucket(ctx, email, bucketName);
        await setObjectTags(await ctx.openStorage(), bucket, parseFilename(file), [], 'cli');
      });
      out.print(`Removed the tags of ${file}.`);
    });
}
