/**
 * Everything the server talks to, opened once from configuration: the
 * metadata database, the blob store, Redis, the caches, the authenticators
 * and the rate budgets. The CLI opens the same database and caches through
 * openCommandServices(), so its changes reach a running server.
 */
import type { Redis } from 'ioredis';
import { chmod, mkdir } from 'node:fs/promises';
import type { BlobStore } from './blob/blob-store.js';
import { openBlobStore } from './blob/open-blob-store.js';
import { Caches } from './cache/caches.js';
import { SharedEpochs } from './cache/shared-epochs.js';
import type { Config } from './config.js';
import { migrateToLatest, openDatabase } from './db/database.js';
import type { Dialect } from './db/migrations.js';
import type { OpenDatabase } from './db/open-database.js';
import type { Db } from './db/schema.js';
import { ApiKeyAuthenticator } from './domain/api-keys.js';
import { systemClock, type Clock } from './domain/clock.js';
import { ObjectEvents } from './domain/object-events.js';
import { PASSWORD_COST, type PasswordCost } from './domain/passwords.js';
import type { StoragePorts } from './domain/ports.js';
import { ResumableWriters } from './domain/resumable-writers.js';
import { sessionTokens, type SessionTokens } from './domain/sessions.js';
import { RateLimits } from './http/rate-limits.js';
import { openRedis, redisReady } from './redis.js';
import { sessionSecret } from './secrets.js';
import { UrlSigner } from './domain/signed-urls.js';
import { S3CredentialSealer } from './domain/s3-credentials.js';

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
  const redis = openRedis(config.redisUrl);
  await redisReady(redis, REDIS_READY_WAIT_MS);
  const caches = cachesFor(config, database, redis, { serving: true, onError });
  const storage = storagePorts(config, database, blobs, caches, onError, overrides.clock ?? systemClock);
  const secret = await sessionSecret(config.sessionSecret, config.dataDir);
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
    close: async () => {
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

/**
 * A server keeps lookups in memory where every change reaches every cache:
 * one process on SQLite, or instances sharing epochs in Redis. A command
 * (the CLI) keeps none, but announces its changes the same way.
 */
function cachesFor(
  config: Config,
  database: OpenDatabase,
  redis: Redis | undefined,
  options: { serving: boolean; onError: (error: unknown, what: string) => void },
): Caches {
  const shared = database.dialect === 'postgres' && redis ? new SharedEpochs(redis, config.redisKeyPrefix) : null;
  return new Caches({
    db: database.dialect === 'sqlite' ? database.db : null,
    committedElsewhere: options.serving ? database.committedElsewhere : null,
    shared,
    keepLookups: options.serving && (database.dialect === 'sqlite' || shared !== null),
    bytes: options.serving ? { maxObjectBytes: config.cacheMaxObjectBytes, maxTotalBytes: config.cacheMaxBytes } : { maxObjectBytes: 0, maxTotalBytes: 0 },
    onError: options.onError,
  });
}

function storagePorts(
  config: Config,
  database: OpenDatabase,
  blobs: BlobStore,
  caches: Caches,
  onError: (error: unknown, what: string) => void,
  clock: Clock,
): StoragePorts {
  const events = new ObjectEvents(onError);
  // A change of files is answered once the caches have heard of it: no instance serves a lookup older than an answered change.
  events.listen(caches.onObjectEvent, { beforeAnswer: true });
  return {
    db: database.db,
    writes: database.writes,
    blobs,
    caches,
    events,
    limits: { plans: config.plans, maxFileBytes: config.maxFileBytes, inlineMaxBytes: config.inlineMaxBytes, maxUploadsPerUser: config.maxUploadsPerUser },
    storageHost: `${config.publicUrl}/storage`,
    durable: database.durable,
    // Instances share uploads only through PostgreSQL; SQLite's process is the only one.
    resumableWriters: new ResumableWriters(database.dialect === 'postgres' ? database.db : null),
    clock,
  };
}

/** What a CLI command needs: the database, migrated, and the caches its changes are announced through. */
export interface CommandServices {
  config: Config;
  db: Db;
  dialect: Dialect;
  /** Names of the migrations this run applied (usually none). */
  applied: string[];
  caches: Caches;
  /** Opens the blob store too (closed with the rest), for commands that touch bytes. */
  openStorage: () => Promise<StoragePorts>;
  close: () => Promise<void>;
}

/** For a command that makes API keys: the sealer of their S3 secrets, from the server secret (SESSION_SECRET or DATA_DIR's). */
export async function s3CredentialSealer(config: Config): Promise<S3CredentialSealer> {
  return new S3CredentialSealer(await sessionSecret(config.sessionSecret, config.dataDir));
}

export async function openCommandServices(config: Config): Promise<CommandServices> {
  const database = openDatabase(config.database);
  const redis = database.dialect === 'postgres' ? openRedis(config.redisUrl) : undefined;
  let blobs: BlobStore | null = null;
  const close = async () => {
    await blobs?.close?.();
    redis?.disconnect();
    await database.close();
  };
  try {
    const applied = await migrateToLatest(database.db, database.dialect);
    const onError = (error: unknown, what: string) => console.error(`warning: ${what}: ${error instanceof Error ? error.message : String(error)}`);
    const caches = cachesFor(config, database, redis, { serving: false, onError });
    return {
      config,
      db: database.db,
      dialect: database.dialect,
      applied,
      caches,
      openStorage: async () => {
        blobs ??= await openBlobStore(config.blob);
        return storagePorts(config, database, blobs, caches, onError, systemClock);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
