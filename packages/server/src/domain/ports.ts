/**
 * What the storage rules need from the outside world, built once at start-up
 * (services.ts) and passed down. Each function takes the subset it uses.
 */
import type { BlobStore } from '../blob/blob-store.js';
import type { Caches } from '../cache/caches.js';
import type { Config } from '../config.js';
import type { Db } from '../db/schema.js';
import type { ObjectWrites } from '../db/object-writes/object-writes.js';
import type { Clock } from './clock.js';
import type { ObjectEvents } from './object-events.js';
import type { ResumableWriters } from './resumable-writers.js';

export type PlanLimits = Config['plans'];

export interface StorageLimits {
  plans: PlanLimits;
  maxFileBytes: number;
  /** Files up to this size keep their bytes in the database; 0: every file goes to the blob store. */
  inlineMaxBytes: number;
  /** Larger uploads one user may have in flight at once. */
  maxUploadsPerUser: number;
}

export interface StoragePorts {
  db: Db;
  writes: ObjectWrites;
  blobs: BlobStore;
  caches: Caches;
  /** Where every committed change of files is announced, and heard by the caches (object-events.ts). */
  events: ObjectEvents;
  limits: StorageLimits;
  /** `<public_url>/storage`: the host part of every object's `url`. */
  storageHost: string;
  /**
   * Resolves once every change made so far is on disk. Bytes whose row a
   * change removed are deleted only after it: a crash then leaves the row
   * with its bytes, or neither.
   */
  durable: () => Promise<void>;
  /** Who writes each resumable upload now: one request at a time (resumable-writers.ts). */
  resumableWriters: ResumableWriters;
  /** The time keys, signed urls and multipart uploads expire by (clock.ts). */
  clock: Clock;
}
