/**
 * Everything the server talks to, opened once from configuration: the
 * metadata database, the blob store, Redis, the caches, the authenticators
 * and the rate budgets. The CLI opens the same database and caches through
 * openCommandServices() (command-services.ts), so its changes reach a running server.
 */
import { chmod, mkdir } from 'node:fs/promises';
import { openBlobStore } from './blob/open-blob-store.js';
import type { Config } from './config.js';
import { migrateToLatest, openDatabase } from './db/database.js';
import type { Dialect } from './db/migrations.js';
import type { Db } from './db/schema.js';
import { ApiKeyAuthenticator } from './domain/api-keys.js';
import { systemClock, type Clock } from './domain/clock.js';
import { PASSWORD_COST, type PasswordCost } from './domain/passwords.js';
import type { StoragePorts } from './domain/ports.js';
import { sessionTokens, type SessionTokens } from './domain/sessions.js';
import { RateLimits } from './http/rate-limits.js';
import { openRedis, redisReady } from './redis.js';
import { sessionSecret } from './secrets.js';
import { UrlSigner } from './domain/signed-urls.js';
import { S3CredentialSealer } from './domain/s3-credentials.js';
import { WebhookSecrets } from './domain/webhook-secrets.js';
import { cachesFor, storagePorts } from './storage-services.js';
import { WebhookDeliverer } from './domain/webhook-deliverer.js';
import type { WebhookSettings } from './domain/webhooks.js';
import { sendWebhook } from './webhooks/send.js';

/** How long start-up waits for Redis, whose budgets and epochs every request needs. */
const REDIS_READY_WAIT_MS = 3_000;

export interface Services {
  config: Config;
  db: Db;
  dialect: Dialect;
  /** What the storage rules use (domain/ports.ts). */
  storage: StoragePorts;
  tokens: SessionTokens;
  apiKeys: ApiKeyAuthenticator;
  /** Signs and checks signed urls, under a key derived from the session secret every instance shares. */
  urlSigner: UrlSigner;
  /** Seals and opens S3 secret access keys, under another key derived from that same secret. */
  s3Credentials: S3CredentialSealer;
  rateLimits: RateLimits;
  /** What new passwords are hashed at (domain/passwords.ts). */
  passwordCost: PasswordCost;
  /** Resolves once every change made so far is on disk. */
  durable: () => Promise<void>;
  /** What webhook changes need (domain/webhooks.ts). */
  webhooks: WebhookSettings;
  /** Delivers the webhook outbox in the background (started by http/plugins/background-work.ts). */
  deliverer: WebhookDeliverer;
  close: () => Promise<void>;
}

/** What a test may give the server in place of production's: a cheaper password hash, a clock it moves. */
export interface ServiceOverrides {
  passwordCost?: PasswordCost;
  clock?: Clock;
}

export async function openServices(config: Config, onError: (error: unknown, what: string) => void, overrides: ServiceOverrides = {}): Promise<Services> {
  await privateDataDir(config.dataDir);
  const database = openDatabase(config.database, { checkpointInBackground: true });
  await migrateToLatest(database.db, database.dialect);
  const blobs = await openBlobStore(config.blob);
  const redis = await openRedis(config.redisUrl);
  await redisReady(redis, REDIS_READY_WAIT_MS);
  const caches = cachesFor(config, database, redis, { serving: true, onError });
  const storage = storagePorts(config, database, blobs, caches, onError, overrides.clock ?? systemClock);
  const secret = await sessionSecret(config.sessionSecret, config.dataDir);
  const webhookSecrets = new WebhookSecrets(secret);
  const deliverer = new WebhookDeliverer({
    db: database.db,
    dialect: database.dialect,
    send: sendWebhook,
    allowPrivate: config.webhooks.allowPrivate,
    timeoutMs: config.webhooks.timeoutMs,
    retryBaseMs: config.webhooks.retryBaseMs,
    retryForMs: config.webhooks.retryForSeconds * 1000,
    pollMs: config.webhooks.pollMs,
    region: config.s3ApiRegion,
    concurrency: config.webhooks.concurrency,
    secrets: webhookSecrets,
    onError,
  });
  return {
    config,
    db: database.db,
    dialect: database.dialect,
    storage,
    tokens: sessionTokens(secret),
    apiKeys: new ApiKeyAuthenticator(storage),
    urlSigner: new UrlSigner(secret),
    s3Credentials: new S3CredentialSealer(secret),
    rateLimits: new RateLimits(config, redis),
    passwordCost: overrides.passwordCost ?? PASSWORD_COST,
    durable: database.durable,
    webhooks: {
      allowPrivate: config.webhooks.allowPrivate,
      secretOverlapSeconds: config.webhooks.secretOverlapSeconds,
      wake: () => deliverer.wake(),
      secrets: webhookSecrets,
    },
    deliverer,
    close: async () => {
      await deliverer.stop();
      await database.close();
      await blobs.close?.();
      redis?.disconnect();
    },
  };
}

/** The data directory holds the database, the blobs and the secrets: the server's user alone may enter it. */
async function privateDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
}
