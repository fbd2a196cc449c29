/**
 * `pail users delete <email>`: the server's deleteUser (every bucket through
 * the bucket deletion, uploads aborted, keys revoked, sessions ended, then the
 * account). It cannot be undone, so it asks first: on a terminal, for the
 * email typed again; elsewhere (a script, a pipe) it needs `--yes`.
 */
import { formatBytes } from '@pail/shared';
import type { Command } from 'commander';
import { type Cli, type CliIo, CliError, requireUser, server, withDatabase } from '../context.js';
import { plural } from '../output.js';

interface Holdings {
  buckets: number;
  files: number;
  bytes: number;
  keys: number;
  sessions: number;
  uploads: number;
}

const describeHoldings = (held: Holdings): string =>
  [
    `${plural(held.buckets, 'bucket')} (${plural(held.files, 'file')}, ${formatBytes(held.bytes)})`,
    plural(held.keys, 'API key'),
    plural(held.sessions, 'session'),
    plural(held.uploads, 'unfinished upload'),
  ].join(', ');

/** The first line typed on stdin (a terminal), without its line end. */
async function readLine(stdin: CliIo['stdin']): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
    if (text.includes('\n')) break;
  }
  return (text.split('\n')[0] ?? '').replace(/\r$/, '');
}

export function registerUserDeleteCommand(users: Command, { io, out }: Cli): void {
  users
    .command('delete')
    .description("delete a user's account and everything in it, for good (refused while they hold locked versions)")
    .argument('<email>', "the user's email address")
    .option('-y, --yes', 'delete without asking (needed where stdin is not a terminal)')
    .addHelpText(
      'after',
      [
        '',
        'Every bucket is deleted as DELETE /api/v1/buckets/:id deletes it (its files and versions, a',
        'bucket.deleted event, an audit entry), unfinished uploads are aborted, API keys revoked and',
        'sessions ended; then the account goes and its email may sign up again. A version under a',
        'retention (COMPLIANCE or GOVERNANCE) or a legal hold refuses it, saying until when.',
        '',
        'Examples:',
        '  $ pail users delete alice@example.com          # shows what goes, asks for the email again',
        '  $ pail users delete alice@example.com --yes',
      ].join('\n'),
    )
    .action(async (email: string, options: { yes?: boolean }) => {
      const { deleteUser, deletedEmail, userDeletionPreview } = await server();
      const deleted = await withDatabase(io, async (ctx) => {
        const user = await requireUser(ctx.db, email);
        const storage = await ctx.openStorage();
        if (!options.yes) {
          // Refused here already when locked versions would refuse the deletion.
          const held = describeHoldings(await userDeletionPreview(storage, user));
          if (!io.stdin.isTTY) throw new CliError(`not deleted: pass --yes to delete ${user.email} and its ${held}`);
          out.print(`${user.email} has ${held}. All of it is deleted for good.`);
          io.stdout.write(`Type the email again to delete the account: `);
          if ((await readLine(io.stdin)).trim().toLowerCase() !== user.email) throw new CliError('not deleted: the email typed did not match');
        }
        return deleteUser(storage, user);
      });
      out.print(
        `Deleted user ${deleted.user.id} ${deleted.user.email}: ${plural(deleted.buckets, 'bucket')}, ${plural(deleted.keys, 'API key')} revoked, ` +
          `${plural(deleted.sessions, 'session')} ended, ${plural(deleted.uploads, 'unfinished upload')} aborted.`,
      );
      out.print(`Its audit log stays: pail audit ${deletedEmail(deleted.user.id)}`);
    });
}
