/** `pail keys create|list|revoke`: a user's API keys, through the server's own functions. */
import type { Command } from 'commander';
import { positiveId } from '../arguments.js';
import { requireUser, server, withDatabase } from '../context.js';
import { formatTime, print, printJson, printTable } from '../output.js';

export function registerKeyCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description("create, list and revoke a user's API keys")
    .addHelpText('after', '\nRun "pail keys <command> --help" for the options of each command.');

  keys
    .command('create')
    .description('create an API key for a user and print it (the only time it is shown)')
    .argument('<email>', "the owner's email address")
    .option('-n, --name <name>', 'a name to recognise the key by (default: "API key")')
    .option('--json', 'print JSON: {id, name, prefix, key, created_at}')
    .addHelpText('after', '\nExamples:\n  $ pail keys create alice@example.com --name ci\n  $ pail keys create alice@example.com --json')
    .action(async (email: string, options: { name?: string; json?: boolean }) => {
      const { createApiKey } = await server();
      const { user, created } = await withDatabase(async ({ db, config }) => {
        const owner = await requireUser(db, email);
        return { user: owner, created: await createApiKey(db, owner.id, options.name, config.maxKeysPerUser) };
      });
      if (options.json) return printJson(created);
      print(`Created API key ${created.id} "${created.name}" for ${user.email} (prefix ${created.prefix}).`);
      print('Store it now; it is shown only this once:');
      print(created.key);
    });

  keys
    .command('list')
    .description("list a user's live API keys (never the secrets)")
    .argument('<email>', "the owner's email address")
    .option('--json', 'print JSON (the same objects as GET /api/keys)')
    .addHelpText('after', '\nExample:\n  $ pail keys list alice@example.com')
    .action(async (email: string, options: { json?: boolean }) => {
      const { listApiKeys } = await server();
      const { user, list } = await withDatabase(async ({ db }) => {
        const owner = await requireUser(db, email);
        return { user: owner, list: await listApiKeys(db, owner.id) };
      });
      if (options.json) return printJson(list);
      if (list.length === 0) return print(`${user.email} has no API keys. Create one with: pail keys create ${user.email}`);
      printTable(
        ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED'],
        list.map((key) => [String(key.id), key.name, key.prefix, formatTime(key.created_at), formatTime(key.last_used_at)]),
      );
    });

  keys
    .command('revoke')
    .description('revoke an API key: from then on it gets 401')
    .argument('<email>', "the owner's email address")
    .argument('<key-id>', 'the key\'s id (see "pail keys list")', positiveId)
    .addHelpText('after', '\nExample:\n  $ pail keys revoke alice@example.com 3')
    .action(async (email: string, keyId: number) => {
      const { revokeApiKey } = await server();
      const user = await withDatabase(async (ctx) => {
        const owner = await requireUser(ctx.db, email);
        await revokeApiKey(ctx, owner.id, keyId);
        return owner;
      });
      print(`Revoked API key ${keyId} of ${user.email}.`);
    });
}
