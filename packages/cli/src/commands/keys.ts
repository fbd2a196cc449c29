/** `pail keys create|list|revoke`: a user's API keys, through the server's own functions. */
import { DEFAULT_PERMISSIONS, PERMISSIONS, type ApiKey, type Permission } from '@pail/shared';
import type { Command } from 'commander';
import { collectIds, expirySeconds, permissionList, positiveId } from '../arguments.js';
import { type Cli, requireUser, server, withDatabase } from '../context.js';
import { formatTime } from '../output.js';

interface CreateOptions {
  name?: string;
  bucket?: number[];
  permissions?: Permission[];
  expiresIn?: number;
  expiresAt?: string;
  json?: boolean;
}

/** A key's limits in words, for the list and for the line after creation. */
function describeLimits(key: Pick<ApiKey, 'buckets' | 'permissions' | 'expires_at'>) {
  return {
    buckets: key.buckets === null ? 'all' : key.buckets.join(','),
    permissions:
      key.permissions.length === DEFAULT_PERMISSIONS.length && DEFAULT_PERMISSIONS.every((p) => key.permissions.includes(p))
        ? 'all'
        : key.permissions.join(','),
    expires: key.expires_at === null ? 'never' : `${formatTime(key.expires_at)}${Date.parse(key.expires_at) <= Date.now() ? ' (expired)' : ''}`,
  };
}

const CREATE_EXAMPLES = [
  '',
  'Examples:',
  '  $ pail keys create alice@example.com --name ci',
  '  $ pail keys create alice@example.com --name backup --bucket 3 --bucket 5 --permissions read,write --expires-in 86400',
  '  $ pail keys create alice@example.com --json',
].join('\n');

export function registerKeyCommands(program: Command, { io, out }: Cli): void {
  const keys = program
    .command('keys')
    .description("create, list and revoke a user's API keys")
    .addHelpText('after', '\nRun "pail keys <command> --help" for the options of each command.');

  keys
    .command('create')
    .description('create an API key for a user and print it (the only time it is shown)')
    .argument('<email>', "the owner's email address")
    .option('-n, --name <name>', 'a name to recognise the key by (default: "API key")')
    .option('--bucket <id>', "limit the key to this bucket of the user's (repeat for several; default: every bucket, also future ones)", collectIds)
    .option('--permissions <list>', `what the key may do, comma-separated: ${PERMISSIONS.join(',')} (default: all but bypass-governance)`, permissionList)
    .option('--expires-in <seconds>', 'the key stops working after this many seconds (default: never)', expirySeconds)
    .option('--expires-at <time>', 'the key stops working at this ISO 8601 time (instead of --expires-in)')
    .option('--json', 'print JSON: {id, name, prefix, key, access_key_id, secret_access_key, created_at, buckets, permissions, expires_at}')
    .addHelpText('after', CREATE_EXAMPLES)
    .action(async (email: string, options: CreateOptions) => {
      const { createApiKey, s3CredentialSealer } = await server();
      // The same checks as POST /api/keys (a bucket that is not the user's, both expiries, a time in the past).
      const input = {
        name: options.name,
        buckets: options.bucket,
        permissions: options.permissions,
        expires_in: options.expiresIn,
        expires_at: options.expiresAt,
      };
      const { user, created } = await withDatabase(io, async ({ db, config }) => {
        const owner = await requireUser(db, email);
        return { user: owner, created: await createApiKey(db, owner.id, input, config.maxKeysPerUser, await s3CredentialSealer(config)) };
      });
      if (options.json) return out.printJson(created);
      out.print(`Created API key ${created.id} "${created.name}" for ${user.email} (prefix ${created.prefix}).`);
      const limits = describeLimits(created);
      out.print(`Buckets: ${limits.buckets}; permissions: ${limits.permissions}; expires: ${limits.expires}.`);
      // The key stays the last line, for scripts that take it with `tail -n 1`.
      out.print(`For S3 tools: access key id ${created.access_key_id}, secret access key ${created.secret_access_key}`);
      out.print('Store them now; they are shown only this once. The API key:');
      out.print(created.key);
    });

  keys
    .command('list')
    .description("list a user's live API keys (never the secrets)")
    .argument('<email>', "the owner's email address")
    .option('--json', 'print JSON (the same objects as GET /api/keys)')
    .addHelpText('after', '\nExample:\n  $ pail keys list alice@example.com')
    .action(async (email: string, options: { json?: boolean }) => {
      const { listApiKeys } = await server();
      const { user, list } = await withDatabase(io, async ({ db }) => {
        const owner = await requireUser(db, email);
        return { user: owner, list: await listApiKeys(db, owner.id) };
      });
      if (options.json) return out.printJson(list);
      if (list.length === 0) return out.print(`${user.email} has no API keys. Create one with: pail keys create ${user.email}`);
      out.printTable(
        ['ID', 'NAME', 'PREFIX', 'S3 ACCESS KEY ID', 'BUCKETS', 'PERMISSIONS', 'CREATED', 'LAST USED', 'EXPIRES'],
        list.map((key) => {
          const limits = describeLimits(key);
          return [
            String(key.id),
            key.name,
            key.prefix,
            key.access_key_id ?? '-',
            limits.buckets,
            limits.permissions,
            formatTime(key.created_at),
            formatTime(key.last_used_at),
            limits.expires,
          ];
        }),
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
      const user = await withDatabase(io, async (ctx) => {
        const owner = await requireUser(ctx.db, email);
        await revokeApiKey(ctx, owner.id, keyId);
        return owner;
      });
      out.print(`Revoked API key ${keyId} of ${user.email}.`);
    });
}
