/**
 * What a CLI command opens: the database, migrated, and the caches its
 * changes are announced through, so they reach a running server; the blob
 * store on request. None of the HTTP side (sessions, rate budgets), which a
 * command never uses.
 */
import type { BlobStore } from './blob/blob-store.js';
import { openBlobStore } from './blob/open-blob-store.js';
import type { Caches } from './cache/caches.js';
import type { Config } from './config.js';
import { migrateToLatest, openDatabase } from './db/database.js';
import type { Dialect } from './db/migrations.js';
import type { Db } from './db/schema.js';
import { systemClock } from './domain/clock.js';
import type { StoragePorts } from './domain/ports.js';
import { S3CredentialSealer } from './domain/s3-credentials.js';
import { openRedis } from './redis.js';
import { sessionSecret } from './secrets.js';
import { cachesFor, storagePorts } from './storage-services.js';

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
  const redis = database.dialect === 'postgres' ? await openRedis(config.redisUrl) : undefined;
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
