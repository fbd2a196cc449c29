/**
 * `pail audit <email>`: the operator reads any user's audit log (issue 39),
 * newest first, a page at a time; a deleted account's by the name
 * `pail users delete` printed for it (`deleted-user-<id>`).
 */
import type { Command } from 'commander';
import { positiveId } from '../arguments.js';
import { type Cli, requireUser, server, withDatabase } from '../context.js';
import { formatTime } from '../output.js';

export function registerAuditCommand(program: Command, { io, out }: Cli): void {
  program
    .command('audit')
    .description("read a user's audit log: who changed keys, buckets, visibility, webhooks, … (newest first)")
    .argument('<email>', "the user's email address (a deleted account's: deleted-user-<id>)")
    .option('--limit <n>', 'entries per page (1 to 200, default 50)', positiveId)
    .option('--cursor <cursor>', 'continue after a page (the cursor it printed)')
    .option('--json', 'print JSON: {data: [{id, actor, action, target, details, at}], next_cursor}')
    .addHelpText('after', '\nExamples:\n  $ pail audit alice@example.com\n  $ pail audit alice@example.com --limit 20 --json')
    .action(async (email: string, options: { limit?: number; cursor?: string; json?: boolean }) => {
      const { findDeletedAccount, readAudit } = await server();
      const { user, page } = await withDatabase(io, async ({ db }) => {
        const owner = (await findDeletedAccount(db, email)) ?? (await requireUser(db, email));
        const query = {
          ...(options.limit !== undefined ? { limit: String(options.limit) } : {}),
          ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
        };
        return { user: owner, page: await readAudit(db, owner.id, query) };
      });
      if (options.json) return out.printJson({ data: page.entries, next_cursor: page.next_cursor });
      if (page.entries.length === 0) return out.print(`${user.email}'s audit log has no entries${options.cursor ? ' after this cursor' : ''}.`);
      out.printTable(
        ['ID', 'WHEN', 'WHO', 'ACTION', 'TARGET', 'DETAILS'],
        page.entries.map((entry) => [
          String(entry.id),
          formatTime(entry.at),
          entry.actor,
          entry.action,
          entry.target ?? '-',
          entry.details === null ? '-' : JSON.stringify(entry.details),
        ]),
      );
      if (page.next_cursor) out.print(`More: pail audit ${user.email} --cursor ${page.next_cursor}`);
    });
}
