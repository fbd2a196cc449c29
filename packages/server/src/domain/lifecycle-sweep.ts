/**
 * The lifecycle sweep: applies every enabled rule of every bucket through
 * the same deletes the doors use (deleteObject, deleteFileVersion,
 * abortUpload), so counts, the
 * cap, events, caches and durability hold as for a client's delete. One
 * instance sweeps at a time (a lease in the database, lifecycle-lease.ts);
 * it works in small batches and yields between them, so requests never wait
 * behind it for long.
 */
import {
  bucketsWithRules,
  bucketUploadsBegunBefore,
  filesWrittenBefore,
  noncurrentVersionsBefore,
  soleDeleteMarkers,
} from '../db/repositories/bucket-lifecycle.js';
import type { BucketRow } from '../db/schema.js';
import { AppError } from './errors.js';
import { parseLifecycleRules } from './lifecycle.js';
import { expiringWrittenBefore } from './lifecycle-expiry.js';
import { passesFilter, rulePrefix, type LifecycleRule } from './lifecycle-rules.js';
import { abortUpload } from './multipart.js';
import { deleteObject } from './objects.js';
import type { StoragePorts } from './ports.js';
import { deleteFileVersion, shownVersionId } from './versions.js';
import { LIFECYCLE_OPERATION } from './webhook-events.js';

/** Rows read per query, and the most work done between two yields. */
export const SWEEP_BATCH = 25;
/** A date far after any write: an Expiration Date that has come reaches every file. */
const END_OF_TIME = '9999-12-31T23:59:59.999Z';

export interface SweepOptions {
  /** A day's length in seconds: 86400, shorter in tests (LIFECYCLE_DAY_SECONDS). */
  daySeconds: number;
  /** Awaited between batches: gives requests their turn, and says whether to go on (false: the lease was lost or the server closes). */
  between: () => Promise<boolean>;
  /** A bucket whose rules could not be applied this pass (a store error): the pass goes on with the next bucket. */
  bucketFailed?: (bucketId: number, error: unknown) => void;
}

export interface SweepTally {
  /** Current files deleted (a delete marker added in a versioned bucket). */
  expired: number;
  /** Noncurrent versions deleted for good. */
  noncurrentExpired: number;
  /** Expired delete markers (a name's only version left) removed. */
  markersRemoved: number;
  /** Unfinished multipart uploads aborted. */
  aborted: number;
}

class Stopped extends Error {}

/** One pass over every bucket with rules; returns what it removed. */
export async function sweepLifecycle(ports: StoragePorts, options: SweepOptions): Promise<SweepTally> {
  const tally: SweepTally = { expired: 0, noncurrentExpired: 0, markersRemoved: 0, aborted: 0 };
  const pause = async () => {
    if (!(await options.between())) throw new Stopped();
  };
  try {
    for (let afterId = 0; ;) {
      const buckets = await bucketsWithRules(ports.db, afterId, SWEEP_BATCH);
      for (const { rules, ...bucket } of buckets) {
        try {
          for (const rule of parseLifecycleRules(rules)) {
            if (rule.status !== 'enabled') continue;
            tally.expired += await expireCurrent(ports, bucket, rule, options.daySeconds, pause);
            if (bucket.versioning !== 'unversioned') {
              tally.noncurrentExpired += await expireNoncurrent(ports, bucket, rule, options.daySeconds, pause);
              tally.markersRemoved += await removeExpiredMarkers(ports, bucket, rule, options.daySeconds, pause);
            }
            tally.aborted += await abortOldUploads(ports, bucket, rule, options.daySeconds, pause);
          }
        } catch (error) {
          // One bucket's failure is its own: every pass starts from the first bucket, so stopping here would
          // leave each bucket after it unswept for good.
          if (error instanceof Stopped || options.bucketFailed === undefined) throw error;
          options.bucketFailed(bucket.id, error);
        }
      }
      if (buckets.length < SWEEP_BATCH) return tally;
      afterId = buckets[buckets.length - 1]!.id;
      await pause();
    }
  } catch (error) {
    if (error instanceof Stopped) return tally;
    throw error;
  }
}

/**
 * A time as an ISO string; null when it is outside what a date can name (a
 * rule may say Days 999999999999999): nothing was written that long ago.
 * Its RangeError stopped the whole pass, and every bucket after the rule's.
 */
function isoOrNull(ms: number): string | null {
  const time = new Date(ms);
  return Number.isNaN(time.getTime()) ? null : time.toISOString();
}

/** `days` days before `now`, as an ISO time (isoOrNull). */
const daysBefore = (now: number, days: number, daySeconds: number): string | null => isoOrNull(now - days * daySeconds * 1000);

/** Before when a current file must have been written for the rule's Expiration to reach it now; null: not yet, or no such action. */
function writtenBefore(rule: LifecycleRule, now: number, daySeconds: number): string | null {
  const expiration = rule.expiration;
  // As x-amz-expiration tells it (lifecycle-expiry.ts): the days, rounded up to a midnight UTC.
  if (expiration?.days !== undefined) return isoOrNull(expiringWrittenBefore(expiration.days, now, daySeconds));
  if (expiration?.date !== undefined) return now >= Date.parse(expiration.date) ? END_OF_TIME : null;
  return null;
}

/** Expiration by Days or Date: each current file the rule reaches is deleted, as its owner's delete would. */
async function expireCurrent(ports: StoragePorts, bucket: BucketRow, rule: LifecycleRule, daySeconds: number, pause: () => Promise<void>): Promise<number> {
  const before = writtenBefore(rule, ports.clock.now(), daySeconds);
  if (before === null) return 0;
  const filter = rule.filter;
  let expired = 0;
  for (let after: string | null = null; ;) {
    const files = await filesWrittenBefore(ports.db, bucket.id, {
      prefix: rulePrefix(rule),
      after,
      writtenBefore: before,
      sizeAbove: filter?.object_size_greater_than,
      sizeBelow: filter?.object_size_less_than,
      limit: SWEEP_BATCH,
    });
    for (const file of files) {
      if (!passesFilter(rule, file)) continue;
      // Only the version weighed here: a file written again meanwhile is younger, and stays.
      if (await refusedAsGone(() => deleteObject(ports, bucket, file.filename, LIFECYCLE_OPERATION, { onlyStorageKey: file.storage_key }))) continue;
      expired += 1;
    }
    if (files.length < SWEEP_BATCH) return expired;
    after = files[files.length - 1]!.filename;
    await pause();
  }
}

/**
 * NoncurrentVersionExpiration: each version that stopped being current
 * NoncurrentDays ago goes for good, unless NewerNoncurrentVersions newer
 * ones of its name are to be kept whatever their age.
 */
async function expireNoncurrent(ports: StoragePorts, bucket: BucketRow, rule: LifecycleRule, daySeconds: number, pause: () => Promise<void>): Promise<number> {
  const action = rule.noncurrent_version_expiration;
  if (action === undefined) return 0;
  const before = daysBefore(ports.clock.now(), action.noncurrent_days, daySeconds);
  if (before === null) return 0;
  const keep = action.newer_noncurrent_versions ?? 0;
  let expired = 0;
  for (let afterId = 0; ;) {
    const versions = await noncurrentVersionsBefore(ports.db, bucket.id, {
      prefix: rulePrefix(rule),
      afterId,
      before,
      sizeAbove: rule.filter?.object_size_greater_than,
      sizeBelow: rule.filter?.object_size_less_than,
      countNewer: keep > 0,
      limit: SWEEP_BATCH,
    });
    for (const version of versions) {
      if (version.newer < keep || !passesFilter(rule, version)) continue;
      // Only while it is noncurrent: its newer versions may have been deleted meanwhile, making it current again.
      const remove = () =>
        deleteFileVersion(ports, bucket, version.filename, shownVersionId(version.version_id), LIFECYCLE_OPERATION, { noncurrentOnly: true });
      if (await refusedAsGone(remove)) continue;
      expired += 1;
    }
    if (versions.length < SWEEP_BATCH) return expired;
    afterId = versions[versions.length - 1]!.id;
    await pause();
  }
}

/**
 * Expired delete markers (a name's only version left): removed with
 * ExpiredObjectDeleteMarker, and with Expiration Days once the marker is
 * that old, as S3 cleans them up. A tag or size filter never matches a marker.
 */
async function removeExpiredMarkers(
  ports: StoragePorts,
  bucket: BucketRow,
  rule: LifecycleRule,
  daySeconds: number,
  pause: () => Promise<void>,
): Promise<number> {
  const expiration = rule.expiration;
  const filter = rule.filter;
  if ((filter?.tags?.length ?? 0) > 0 || filter?.object_size_greater_than !== undefined) return 0;
  let madeBefore: string | null;
  if (expiration?.expired_object_delete_marker === true) madeBefore = END_OF_TIME;
  else if (expiration?.days !== undefined) madeBefore = daysBefore(ports.clock.now(), expiration.days, daySeconds);
  else return 0;
  if (madeBefore === null) return 0;
  let removed = 0;
  for (let afterId = 0; ;) {
    const markers = await soleDeleteMarkers(ports.db, bucket.id, { prefix: rulePrefix(rule), afterId, madeBefore, limit: SWEEP_BATCH });
    for (const marker of markers) {
      if (await refusedAsGone(() => deleteFileVersion(ports, bucket, marker.filename, shownVersionId(marker.version_id), LIFECYCLE_OPERATION))) continue;
      removed += 1;
    }
    if (markers.length < SWEEP_BATCH) return removed;
    afterId = markers[markers.length - 1]!.id;
    await pause();
  }
}

/** AbortIncompleteMultipartUpload: each upload begun long enough ago ends as S3's AbortMultipartUpload ends it. */
async function abortOldUploads(ports: StoragePorts, bucket: BucketRow, rule: LifecycleRule, daySeconds: number, pause: () => Promise<void>): Promise<number> {
  const days = rule.abort_incomplete_multipart_upload?.days_after_initiation;
  if (days === undefined) return 0;
  const cutoff = daysBefore(ports.clock.now(), days, daySeconds);
  if (cutoff === null) return 0;
  let aborted = 0;
  for (;;) {
    const ids = await bucketUploadsBegunBefore(ports.db, bucket.id, rulePrefix(rule), cutoff, SWEEP_BATCH);
    let ended = 0;
    for (const id of ids) {
      if (!(await refusedAsGone(() => abortUpload(ports, bucket, id, LIFECYCLE_OPERATION)))) ended += 1;
    }
    aborted += ended;
    // Each id read was ended (by this sweep or by someone else), so the next query reads new ones; a batch ending none would repeat.
    if (ids.length < SWEEP_BATCH || ended === 0) return aborted;
    await pause();
  }
}

/** Runs a removal; true when the domain refused it because its target is gone already (deleted, completed, its bucket deleted). */
async function refusedAsGone(remove: () => Promise<unknown>): Promise<boolean> {
  try {
    await remove();
    return false;
  } catch (error) {
    if (error instanceof AppError) return true;
    throw error;
  }
}
