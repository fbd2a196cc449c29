/**
 * What the server (services.ts) and a command (command-services.ts) open
 * alike over the database and the blob store: the caches changes are
 * announced through, and the ports the storage rules use.
 */
import type { Redis } from 'ioredis';
import type { BlobStore } from './blob/blob-store.js';
import { Caches } from './cache/caches.js';
import { SharedEpochs } from './cache/shared-epochs.js';
import type { Config } from './config.js';
import type { OpenDatabase } from './db/open-database.js';
import type { Clock } from './domain/clock.js';
import { ObjectEvents } from './domain/object-events.js';
import type { StoragePorts } from './domain/ports.js';
import { ResumableWriters } from './domain/resumable-writers.js';

/**
 * A server keeps lookups in memory where every change reaches every cache:
 * one process on SQLite, or instances sharing epochs in Redis. A command
 * (the CLI) keeps none, but announces its changes the same way.
 */
export function cachesFor(
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

export function storagePorts(
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
