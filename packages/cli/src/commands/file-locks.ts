/**
 * `pail files retention get|set` and `pail files legal-hold get|on|off`: a
 * file version's object lock, through the server's own functions, as `PUT
 * …/retention/<file>` and `PUT …/legal-hold/<file>` do (decisions.md,
 * "Object lock"): a COMPLIANCE retention can only be extended, and the
 * operator never bypasses a GOVERNANCE one (only a key with
 * bypass-governance may), so these commands can set and extend, not shorten.
 */
import { RETENTION_MODES, type FileLock, type RetentionMode } from '@pail/shared';
import { InvalidArgumentError, type Command } from 'commander';
import { type Cli, type Context, server, withDatabase } from '../context.js';
import { ownBucket } from './own-bucket.js';

const fileArguments = (command: Command) =>
  command
    .argument('<email>', "the owner's email address")
    .argument('<bucket>', 'the bucket, by id or name')
    .argument('<file>', 'the filename')
    .option('--version-id <id>', 'one version of the file (from pail versions list); default: its current one');

function retentionMode(value: string): RetentionMode {
  const mode = value.toUpperCase();
  if (!(RETENTION_MODES as readonly string[]).includes(mode)) throw new InvalidArgumentError(`must be ${RETENTION_MODES.join(' or ')}.`);
  return mode as RetentionMode;
}

/** The version the command names, in the owner's bucket. */
async function versionOf(ctx: Context, email: string, bucketName: string, file: string, versionId: string | undefined) {
  const { lockedVersion, parseFilename } = await server();
  const { bucket } = await ownBucket(ctx, email, bucketName);
  const storage = await ctx.openStorage();
  return { storage, bucket, version: await lockedVersion(storage, bucket, parseFilename(file), versionId) };
}

/** The version's lock as the API shows it (FileDetails' retention and legal_hold). */
async function shownLock(io: Cli['io'], email: string, bucketName: string, file: string, versionId: string | undefined): Promise<FileLock> {
  const { fileLockView, lockOf } = await server();
  return withDatabase(io, async (ctx) => {
    const { storage, version } = await versionOf(ctx, email, bucketName, file, versionId);
    return fileLockView(await lockOf(storage.db, version.storageKey));
  });
}

export function registerLockCommands(files: Command, { io, out }: Cli): void {
  const describeRetention = (file: string, lock: FileLock) =>
    lock.retention === null ? `${file} has no retention.` : `${file}: ${lock.retention.mode} retention until ${lock.retention.retain_until}.`;
  const describeHold = (file: string, lock: FileLock) => (lock.legal_hold ? `${file} is under a legal hold.` : `${file} has no legal hold.`);

  const retention = files
    .command('retention')
    .description("a file version's retention (object lock): show it, set or extend it")
    .addHelpText('after', '\nRun "pail files retention <command> --help" for the options of each command.');

  fileArguments(retention.command('get').description("print a file version's retention: its mode and until when"))
    .option('--json', "print JSON ({retention, legal_hold}, as a file's details show them)")
    .addHelpText('after', '\nExample:\n  $ pail files retention get alice@example.com backups db.dump')
    .action(async (email: string, bucketName: string, file: string, options: { versionId?: string; json?: boolean }) => {
      const lock = await shownLock(io, email, bucketName, file, options.versionId);
      if (options.json) return out.printJson(lock);
      out.print(describeRetention(file, lock));
    });

  fileArguments(retention.command('set').description('set or extend a retention: a COMPLIANCE one only ever to a later date'))
    .requiredOption('--mode <mode>', `${RETENTION_MODES.join(' or ')}`, retentionMode)
    .requiredOption('--until <date>', 'ISO 8601 date and time, in the future (e.g. 2030-01-01T00:00:00Z)')
    .option('--json', 'print the lock after the change as JSON')
    .addHelpText('after', '\nExample:\n  $ pail files retention set alice@example.com backups db.dump --mode COMPLIANCE --until 2030-01-01T00:00:00Z')
    .action(async (email: string, bucketName: string, file: string, options: { versionId?: string; mode: RetentionMode; until: string; json?: boolean }) => {
      const { fileLockView, setRetention, OPERATOR } = await server();
      const lock = await withDatabase(io, async (ctx) => {
        const { storage, bucket, version } = await versionOf(ctx, email, bucketName, file, options.versionId);
        return fileLockView(await setRetention(storage, bucket, version, { mode: options.mode, retainUntil: options.until }, false, OPERATOR));
      });
      if (options.json) return out.printJson(lock);
      out.print(describeRetention(file, lock));
    });

  const hold = files
    .command('legal-hold')
    .description("a file version's legal hold (object lock): show it, put it on or lift it")
    .addHelpText('after', '\nRun "pail files legal-hold <command> --help" for the options of each command.');

  fileArguments(hold.command('get').description('print whether a file version is under a legal hold'))
    .option('--json', 'print JSON ({retention, legal_hold})')
    .action(async (email: string, bucketName: string, file: string, options: { versionId?: string; json?: boolean }) => {
      const lock = await shownLock(io, email, bucketName, file, options.versionId);
      if (options.json) return out.printJson(lock);
      out.print(describeHold(file, lock));
    });

  for (const [name, on, text] of [
    ['on', true, 'put a file version under a legal hold: it cannot be removed until the hold is lifted'],
    ['off', false, "lift a file version's legal hold"],
  ] as const) {
    fileArguments(hold.command(name).description(text))
      .addHelpText('after', `\nExample:\n  $ pail files legal-hold ${name} alice@example.com backups db.dump`)
      .action(async (email: string, bucketName: string, file: string, options: { versionId?: string }) => {
        const { fileLockView, setLegalHold, OPERATOR } = await server();
        const lock = await withDatabase(io, async (ctx) => {
          const { storage, bucket, version } = await versionOf(ctx, email, bucketName, file, options.versionId);
          return fileLockView(await setLegalHold(storage, bucket, version, on, OPERATOR));
        });
        out.print(describeHold(file, lock));
      });
  }
}
