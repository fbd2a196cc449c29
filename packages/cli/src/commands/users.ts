/**
 * `pail users create|list|set-plan|delete` (delete: users-delete.ts). Every rule (email shape, password length,
 * duplicate emails, plan names) is the server's: these commands only call the
 * domain functions and print what they return or refuse.
 */
import { formatBytes, PLANS } from '@pail/shared';
import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { type Cli, type CliIo, server, withDatabase } from '../context.js';
import { formatTime } from '../output.js';
import { registerUserDeleteCommand } from './users-delete.js';

const PLAN_LIST = PLANS.join('|');

/** The password: the option, else stdin when it is piped, else a generated one. */
async function choosePassword(option: string | undefined, stdin: CliIo['stdin']): Promise<{ password: string; generated: boolean }> {
  if (option !== undefined) return { password: option, generated: false };
  if (!stdin.isTTY) {
    const piped = (await readStdin(stdin)).replace(/\r?\n$/, '');
    if (piped !== '') return { password: piped, generated: false };
  }
  // 24 characters from 18 random bytes: 144 bits, URL-safe, easy to paste.
  return { password: randomBytes(18).toString('base64url'), generated: true };
}

async function readStdin(stdin: CliIo['stdin']): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

export function registerUserCommands(program: Command, { io, out }: Cli): void {
  const users = program
    .command('users')
    .description('create user accounts, list them with plan and usage, change plans, delete them')
    .addHelpText('after', '\nRun "pail users <command> --help" for the options of each command.');

  users
    .command('create')
    .description('create a user account (for example when signup is closed)')
    .argument('<email>', "the new user's email address")
    .option('-p, --password <password>', 'the password (at least 8 characters); default: read from stdin when piped, else generated and printed once')
    .option('--plan <plan>', `the plan: ${PLAN_LIST} (default: free)`)
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  $ pail users create alice@example.com                  # prints a generated password once',
        '  $ printf "%s" "$PASSWORD" | pail users create bob@example.com --plan pro',
      ].join('\n'),
    )
    .action(async (email: string, options: { password?: string; plan?: string }) => {
      const { createUser } = await server();
      const { password, generated } = await choosePassword(options.password, io.stdin);
      // createUser checks the plan's name before it creates anything.
      const user = await withDatabase(io, ({ db }) => createUser(db, { email, password, plan: options.plan }));
      out.print(`Created user ${user.id} ${user.email} on the ${user.plan} plan.`);
      if (generated) out.print(`Generated password (shown only this once): ${password}`);
    });

  users
    .command('list')
    .description('list users with their plan, storage used and limit, bytes held by unfinished uploads, and rate limit')
    .option('--json', 'print JSON (the same user objects as the API returns)')
    .addHelpText('after', '\nExamples:\n  $ pail users list\n  $ pail users list --json')
    .action(async (options: { json?: boolean }) => {
      const { listUsers, userWithHoldings } = await server();
      const views = await withDatabase(io, async ({ db, config }) => {
        const rows = await listUsers(db);
        return Promise.all(rows.map((row) => userWithHoldings(db, row, config.plans)));
      });
      if (options.json) return out.printJson(views);
      if (views.length === 0) return out.print('No users yet. Create one with: pail users create <email>');
      out.printTable(
        ['ID', 'EMAIL', 'PLAN', 'USED / LIMIT', 'HELD', 'RATE LIMIT', 'CREATED'],
        views.map((user) => [
          String(user.id),
          user.email,
          user.plan,
          `${formatBytes(user.storage_used_bytes)} / ${formatBytes(user.storage_limit_bytes)}`,
          formatBytes(user.storage_held_bytes),
          `${user.rate_limit_per_minute}/min`,
          formatTime(user.created_at),
        ]),
      );
    });

  users
    .command('set-plan')
    .description(`change a user's plan (${PLAN_LIST})`)
    .argument('<email>', "the user's email address")
    .argument('<plan>', `the new plan: ${PLAN_LIST}`)
    .addHelpText('after', '\nExample:\n  $ pail users set-plan alice@example.com pro')
    .action(async (email: string, plan: string) => {
      const { setPlan, userWithHoldings } = await server();
      const view = await withDatabase(io, async (ctx) => userWithHoldings(ctx.db, await setPlan(ctx, email, plan), ctx.config.plans));
      out.print(
        `${view.email} is now on the ${view.plan} plan: ${formatBytes(view.storage_limit_bytes)} of storage ` +
          `(${formatBytes(view.storage_used_bytes)} used), ${view.rate_limit_per_minute} requests per minute.`,
      );
    });

  registerUserDeleteCommand(users, { io, out });
}
