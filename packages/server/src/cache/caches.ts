/**
 * Every in-memory cache of the server, and the one place that decides
 * whether what they hold is still true.
 *
 * - Small files' bytes (object-cache.ts) and buckets' identities are keyed by
 *   values that never change meaning (blob keys are never reused, a bucket's
 *   id and storage name are fixed), so they need no invalidation.
 * - API key -> owner, bucket + filename -> object, bucket -> its rules
 *   (limits) and owner + bucket name -> the bucket's identity and visibility
 *   are lookups that changes make stale (metadata-cache.ts). They are kept only where every change
 *   reaches every cache: one process on SQLite, or instances that share
 *   epochs in Redis (shared-epochs.ts). On PostgreSQL without Redis they are
 *   not kept at all.
 *
 * A change calls changed(kind) once, after it committed and before it is
 * answered; a change of files reaches it as an announcement
 * (domain/object-events.ts) that onObjectEvent hears. A request calls
 * refresh() before it consults any cache.
 */
import { LRUCache } from 'lru-cache';
import type { KeyOwner } from '../db/repositories/api-keys.js';
import { moveCacheEpoch } from '../db/repositories/cache-epochs.js';
import type { ReadableObject } from '../db/repositories/objects.js';
import type { BucketIdentity, Db, NamedBucket } from '../db/schema.js';
import type { BucketRules } from '../domain/bucket-rules.js';
import type { ObjectEvent } from '../domain/object-events.js';
import { MetadataCache } from './metadata-cache.js';
import { ObjectCache } from './object-cache.js';
import type { EpochKind, SharedEpochs } from './shared-epochs.js';

/** A bucket's enabled webhooks as the commit paths match them (an object, as MetadataCache keeps). */
export interface WebhookTargets {
  targets: { id: number; events: string[]; prefix: string | null; suffix: string | null; bucketName: string }[];
}

export type ChangeKind = EpochKind;

export interface CachesOptions {
  /** Where a change must also be announced to other processes; SQLite: the cache_epochs row. */
  db: Db | null;
  /** SQLite: did another process move the cache_epochs row since the last call? */
  committedElsewhere: (() => boolean) | null;
  /** Instances sharing a PostgreSQL database: their epochs in Redis. */
  shared: SharedEpochs | null;
  /** Keep stale-able lookups at all (false: PostgreSQL without Redis, or a process that serves nothing). */
  keepLookups: boolean;
  bytes: { maxObjectBytes: number; maxTotalBytes: number };
  onError: (error: unknown, what: string) => void;
}

export class Caches {
  readonly keyOwners: MetadataCache<KeyOwner> | null;
  readonly objects: MetadataCache<ReadableObject> | null;
  readonly bucketRules: MetadataCache<BucketRules> | null;
  /** Owner + name -> the live bucket (the S3 API names buckets so); forgotten with the rules, on a removal and on a visibility change. */
  readonly bucketsByName: MetadataCache<NamedBucket> | null;
  /** Bucket -> its enabled webhooks (domain/webhook-events.ts), so a commit into a bucket without one pays nothing; forgotten with the rules. */
  readonly webhookTargets: MetadataCache<WebhookTargets> | null;
  readonly bytes: ObjectCache;
  readonly bucketIdentities = new LRUCache<string, BucketIdentity>({ max: 10_000 });

  constructor(private readonly options: CachesOptions) {
    this.keyOwners = options.keepLookups ? new MetadataCache({ max: 10_000, ttlMs: 2_000 }) : null;
    this.objects = options.keepLookups ? new MetadataCache({ max: 10_000, ttlMs: 5_000 }) : null;
    this.bucketRules = options.keepLookups ? new MetadataCache({ max: 10_000, ttlMs: 5_000 }) : null;
    this.bucketsByName = options.keepLookups ? new MetadataCache({ max: 10_000, ttlMs: 5_000 }) : null;
    this.webhookTargets = options.keepLookups ? new MetadataCache({ max: 10_000, ttlMs: 5_000 }) : null;
    this.bytes = new ObjectCache(options.bytes.maxObjectBytes, options.bytes.maxTotalBytes);
  }

  /** Whether refresh() has anything to do; when false, requests need not call it. */
  get refreshes(): boolean {
    return this.options.committedElsewhere !== null || (this.options.shared !== null && this.keyOwners !== null);
  }

  /** Before a request consults any cache: learn what other processes and instances changed. */
  refresh(): Promise<void> | undefined {
    if (this.options.committedElsewhere?.()) this.distrust();
    const shared = this.options.shared;
    if (!shared || !this.keyOwners) return undefined;
    return shared.read().then(
      (epochs) => {
        this.keyOwners?.adopt(epochs.keys);
        this.objects?.adopt(epochs.objects);
        this.bucketRules?.adopt(epochs.buckets);
        this.bucketsByName?.adopt(epochs.buckets);
        this.webhookTargets?.adopt(epochs.buckets);
      },
      () => this.distrust(),
    );
  }

  /**
   * A change of this kind committed: nothing learnt before it is served
   * again, here, on other instances (Redis) or in a server that shares this
   * SQLite file with the calling process (the CLI). Undefined when there is
   * nothing to wait for (one process: its own caches forget at once).
   */
  changed(kind: ChangeKind): Promise<void> | undefined {
    const local = kind === 'keys' ? this.keyOwners : kind === 'objects' ? this.objects : this.bucketRules;
    local?.distrust();
    if (kind === 'buckets') this.bucketsByName?.distrust();
    if (kind === 'buckets') this.webhookTargets?.distrust();
    // Key and plan changes can come from the CLI, a process with no caches of its own; so can moves, deletions
    // and metadata edits of files (`pail files`): a process that keeps no lookups announces every change it makes.
    const announced = this.options.db && (kind === 'keys' || !this.options.keepLookups) ? moveCacheEpoch(this.options.db) : undefined;
    const shared = this.options.shared;
    return shared ? this.share(shared, kind, local, announced) : announced;
  }

  private async share(
    shared: SharedEpochs,
    kind: ChangeKind,
    local: { adopt(epoch: number): void } | null,
    announced: Promise<void> | undefined,
  ): Promise<void> {
    await announced;
    try {
      const epoch = await shared.bump(kind);
      local?.adopt(epoch);
      if (kind === 'buckets') this.bucketsByName?.adopt(epoch);
      if (kind === 'buckets') this.webhookTargets?.adopt(epoch);
    } catch (error) {
      // Other instances serve the old lookup at most until its time-to-live ends.
      this.options.onError(error, 'cache invalidation did not reach Redis');
    }
  }

  /**
   * A committed change of files (domain/object-events.ts; the answer waits
   * for this): lookups of files are stale wherever they are kept, and a
   * retired version's bytes leave memory (never served again anyway: blob keys
   * are never reused). The purge after a bucket's removal changes no lookup:
   * the removal already made every one of its files unfindable.
   */
  readonly onObjectEvent = (event: ObjectEvent): Promise<void> | undefined => {
    switch (event.type) {
      case 'object-created':
        if (event.replaced !== null) this.bytes.forget(event.replaced);
        return this.changed('objects');
      case 'object-removed':
        // A moved version's bytes are still served, under its new name.
        if (event.cause !== 'moved') this.bytes.forget(event.storageKey);
        return event.cause === 'bucket-deleted' ? undefined : this.changed('objects');
      case 'object-edited':
        // Its bytes stay (the same storage key): only the lookups hold its old row.
        return this.changed('objects');
      case 'bucket-removed':
        // Its name may now be another bucket's.
        return bothChanged(this.changed('objects'), this.changed('buckets'));
      case 'upload-ended':
        // No cached lookup holds an upload.
        return undefined;
    }
  };

  private distrust(): void {
    this.keyOwners?.distrust();
    this.objects?.distrust();
    this.bucketRules?.distrust();
    this.bucketsByName?.distrust();
    this.webhookTargets?.distrust();
  }
}

function bothChanged(a: Promise<void> | undefined, b: Promise<void> | undefined): Promise<void> | undefined {
  return a === undefined && b === undefined ? undefined : Promise.all([a, b]).then(() => undefined);
}
