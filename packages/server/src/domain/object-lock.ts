/**
 * Object lock (decisions.md, "Object lock"): the one rule for whether a
 * version may be removed, and the rules for a new version's lock and for
 * changing one. Every door that removes a version (S3 deletes, the Pail API's
 * deletes, folder deletion, moves, bucket and user deletion, the lifecycle
 * sweep) asks `removalBlocker` (or one of the helpers built on it below), so
 * the rule lives here once.
 */
import { RETENTION_MODES, type DefaultRetention, type FileLock, type RetentionMode } from '@pail/shared';
import { findLocks, heldInBuckets, liveBucketIdsOf, type HeldSummary, type LockRow, type LockValues } from '../db/repositories/version-locks.js';
import { findObjectRow } from '../db/repositories/objects.js';
import type { BucketRow, Db } from '../db/schema.js';
import type { Clock } from './clock.js';
import { AppError, errors } from './errors.js';

export type { LockValues };

/** A version's lock as the rule reads it. */
export interface VersionLock {
  mode: RetentionMode | null;
  /** ISO 8601; with mode. */
  retainUntil: string | null;
  legalHold: boolean;
}

export const NO_LOCK: VersionLock = { mode: null, retainUntil: null, legalHold: false };

/** Why a version may not be removed: what holds it and until when (null: until the legal hold is lifted). */
export interface RemovalBlocker {
  holds: 'legal-hold' | RetentionMode;
  until: string | null;
  message: string;
}

export const lockOfRow = (row: LockRow | undefined): VersionLock =>
  row === undefined ? NO_LOCK : { mode: row.mode as RetentionMode | null, retainUntil: row.retain_until, legalHold: row.legal_hold === 1 };

/** Whether a retention still runs at `now` (ms since the epoch). */
export const retentionRuns = (lock: VersionLock, now: number): boolean => lock.mode !== null && lock.retainUntil !== null && Date.parse(lock.retainUntil) > now;

/**
 * THE rule: why this version may not be removed (deleted, overwritten in
 * place, expired, purged with its bucket or its owner) at `now`, or null
 * when it may. A legal hold holds until lifted; COMPLIANCE until its date,
 * for everyone; GOVERNANCE until its date, unless the caller may and asks to
 * bypass it (`bypassGovernance`, see authorize.ts mayBypassGovernance).
 */
export function removalBlocker(lock: VersionLock, now: number, bypassGovernance = false): RemovalBlocker | null {
  if (lock.legalHold) {
    return { holds: 'legal-hold', until: null, message: 'This version is under a legal hold: it cannot be removed until the hold is lifted' };
  }
  if (!retentionRuns(lock, now) || (lock.mode === 'GOVERNANCE' && bypassGovernance)) return null;
  const until = lock.retainUntil!;
  const how = lock.mode === 'GOVERNANCE' ? ' (a key with the bypass-governance permission may bypass it)' : '';
  return { holds: lock.mode!, until, message: `This version is under ${lock.mode} retention until ${until}: it cannot be removed before then${how}` };
}

/** The locks of some versions, by storage key (no row: no lock). */
export async function locksOf(db: Db, storageKeys: readonly string[]): Promise<Map<string, VersionLock>> {
  const rows = await findLocks(db, storageKeys);
  return new Map(storageKeys.map((key) => [key, lockOfRow(rows.get(key))]));
}

/** One version's lock. */
export const lockOf = async (db: Db, storageKey: string): Promise<VersionLock> => (await locksOf(db, [storageKey])).get(storageKey)!;

/** A version's lock as the Pail API shows it (FileDetails). */
export const fileLockView = (lock: VersionLock): FileLock => ({
  retention: lock.mode !== null && lock.retainUntil !== null ? { mode: lock.mode, retain_until: lock.retainUntil } : null,
  legal_hold: lock.legalHold,
});

/** Why the version with this storage key may not be removed now, or null (removalBlocker on its stored lock). */
export async function versionRemovalBlocker(ports: { db: Db; clock: Clock }, storageKey: string, bypassGovernance = false): Promise<RemovalBlocker | null> {
  return removalBlocker(await lockOf(ports.db, storageKey), ports.clock.now(), bypassGovernance);
}

/** Throws the refusal (403 ObjectLocked, saying until when) when the version may not be removed. */
export async function refuseLockedRemoval(ports: { db: Db; clock: Clock }, storageKey: string, bypassGovernance = false): Promise<void> {
  const blocker = await versionRemovalBlocker(ports, storageKey, bypassGovernance);
  if (blocker) throw lockedError(blocker);
}

export const lockedError = (blocker: RemovalBlocker): AppError => new AppError('ObjectLocked', blocker.message);

/**
 * Refuses rewriting a locked version's type, headers and metadata in place
 * (a version under retention or a legal hold is never overwritten in place,
 * decisions.md); its tags may change, as on S3.
 */
export async function refuseLockedEdit(ports: { db: Db; clock: Clock }, storageKey: string): Promise<void> {
  const blocker = await versionRemovalBlocker(ports, storageKey);
  if (blocker === null) return;
  const held = blocker.until === null ? 'under a legal hold' : `under ${blocker.holds} retention until ${blocker.until}`;
  const when = blocker.until === null ? 'until the hold is lifted' : 'before then';
  throw new AppError('ObjectLocked', `This version is ${held}: its type, headers and metadata cannot be changed ${when}`);
}

/**
 * The removal rule for a delete to ask inside its own transaction
 * (db/object-writes, LockGuard), on the lock row it reads there: a lock set
 * between a check made beforehand and the delete could not slip past it.
 * Throws the refusal, as refuseLockedRemoval does.
 */
export const removalGuard =
  (clock: Clock, bypassGovernance = false) =>
  (row: LockRow | undefined): void => {
    const blocker = removalBlocker(lockOfRow(row), clock.now(), bypassGovernance);
    if (blocker) throw lockedError(blocker);
  };

/**
 * Why a bucket may not be deleted now (it holds versions under a running
 * retention, of either mode, or a legal hold), or null. Deleting a bucket
 * removes every version, so no bypass applies.
 */
export async function bucketDeletionBlocker(ports: { db: Db; clock: Clock }, bucketId: number): Promise<string | null> {
  return heldMessage('This bucket', await heldInBuckets(ports.db, [bucketId], new Date(ports.clock.now()).toISOString()));
}

/**
 * Why the operator may not delete a user now, or null: as for each of their
 * buckets (bucketDeletionBlocker), a running retention of either mode or a
 * legal hold. COMPLIANCE yields to no one; GOVERNANCE yields only to a key
 * with bypass-governance that asks, which the operator is not, and deleting
 * the account removes every version, as deleting a bucket does. The message
 * says the date the last COMPLIANCE lock ends, and when the account could go.
 */
export async function userDeletionBlocker(ports: { db: Db; clock: Clock }, userId: number): Promise<string | null> {
  const buckets = await liveBucketIdsOf(ports.db, userId);
  return heldMessage('This user', await heldInBuckets(ports.db, buckets, new Date(ports.clock.now()).toISOString()));
}

function heldMessage(who: string, held: HeldSummary): string | null {
  const parts: string[] = [];
  if (held.lastCompliance !== null) parts.push(`versions under COMPLIANCE retention until ${held.lastCompliance}`);
  if (held.lastGovernance !== null) parts.push(`versions under GOVERNANCE retention until ${held.lastGovernance}`);
  if (held.legalHolds > 0) parts.push(`${held.legalHolds} version${held.legalHolds === 1 ? '' : 's'} under a legal hold`);
  if (parts.length === 0) return null;
  const dates = [held.lastCompliance, held.lastGovernance].filter((date): date is string => date !== null).sort();
  const last = dates[dates.length - 1];
  const when =
    last !== undefined ? `; it can be deleted after ${last}${held.legalHolds > 0 ? ' once the legal holds are lifted' : ''}` : '; lift the legal holds first';
  return `${who} holds ${parts.slice(0, -1).join(', ')}${parts.length > 1 ? ' and ' : ''}${parts[parts.length - 1]} (object lock)${when}`;
}

export const isRetentionMode = (value: unknown): value is RetentionMode => (RETENTION_MODES as readonly unknown[]).includes(value);

/** A bucket's default retention, as its row keeps it; null: none. */
export function defaultRetentionOf(bucket: Pick<BucketRow, 'lock_default_mode' | 'lock_default_days' | 'lock_default_years'>): DefaultRetention | null {
  if (!isRetentionMode(bucket.lock_default_mode)) return null;
  return { mode: bucket.lock_default_mode, days: bucket.lock_default_days, years: bucket.lock_default_years };
}

/** A default retention as asked: days or years (not both), each at least 1. */
export function checkedDefaultRetention(retention: { mode: RetentionMode; days?: number | null; years?: number | null }): DefaultRetention {
  const days = retention.days ?? null;
  const years = retention.years ?? null;
  if ((days === null) === (years === null)) throw errors.validation('A default retention has days or years, not both and not neither');
  if ((days !== null && (!Number.isInteger(days) || days < 1)) || (years !== null && (!Number.isInteger(years) || years < 1))) {
    throw errors.validation('A default retention period must be a positive whole number of days or years');
  }
  return { mode: retention.mode, days, years };
}

/** `now` plus a default retention's days or years (years by the calendar, as S3 counts them). */
export function retainUntilFor(retention: DefaultRetention, now: number): string {
  const date = new Date(now);
  if (retention.years !== null) date.setUTCFullYear(date.getUTCFullYear() + retention.years);
  else date.setTime(now + (retention.days ?? 0) * 86_400_000);
  return date.toISOString();
}

/** What an upload asks of its version's lock (S3's x-amz-object-lock-* headers); absent fields: not asked. */
export interface RequestedLock {
  mode?: RetentionMode;
  retainUntil?: string;
  legalHold?: boolean;
}

/** The bucket's lock settings an upload needs (bucket-rules.ts carries them, cached). */
export interface BucketLockRule {
  enabled: boolean;
  defaultRetention: DefaultRetention | null;
}

/**
 * The lock a new version gets: what its upload asked for, else the bucket's
 * default retention (from now); undefined when it gets none. Asking for a
 * lock in a bucket made without one, half a retention, or a date not in the
 * future is refused.
 */
export function lockForNewVersion(rule: BucketLockRule, requested: RequestedLock | undefined, now: number): LockValues | undefined {
  const asked = requested !== undefined && (requested.mode !== undefined || requested.retainUntil !== undefined || requested.legalHold !== undefined);
  if (asked && !rule.enabled) throw errors.validation('Bucket is missing Object Lock Configuration');
  if (asked && (requested.mode === undefined) !== (requested.retainUntil === undefined)) {
    throw errors.validation('x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied');
  }
  let mode: RetentionMode | null = null;
  let retainUntil: string | null = null;
  if (requested?.mode !== undefined && requested.retainUntil !== undefined) {
    retainUntil = futureDate(requested.retainUntil, now);
    mode = requested.mode;
  } else if (rule.enabled && rule.defaultRetention !== null) {
    mode = rule.defaultRetention.mode;
    retainUntil = retainUntilFor(rule.defaultRetention, now);
  }
  const legalHold = requested?.legalHold === true;
  return mode === null && !legalHold ? undefined : { mode, retainUntil, legalHold };
}

/**
 * The lock a new version of the file gets (lockForNewVersion: asked for,
 * else the bucket's default). A bucket with object lock is versioned for
 * good, so a write keeps the version it displaces; should it not be (made
 * so before versions existed), a locked current version may not be replaced
 * in place (the removal rule above).
 */
export async function newVersionLock(
  ports: { db: Db; clock: Clock },
  rules: { lock: BucketLockRule; versioning: string },
  bucketId: number,
  filename: string,
  requested: RequestedLock | undefined,
): Promise<LockValues | undefined> {
  const lock = lockForNewVersion(rules.lock, requested, ports.clock.now());
  if (rules.lock.enabled && rules.versioning !== 'enabled') {
    const current = await findObjectRow(ports.db, bucketId, filename);
    if (current) await refuseLockedRemoval(ports, current.storage_key);
  }
  return lock;
}

/**
 * The latest retain-until date taken. Past the year 9999 an ISO 8601 date
 * gains a sign and two digits (`+010000-…`), and the stored dates, compared
 * as text (a bucket's or a user's locks, version-locks.ts), would sort it
 * before today's: such a lock would stop guarding a deletion.
 */
const LATEST_RETAIN_UNTIL = Date.parse('9999-12-31T23:59:59.999Z');

/** A retain-until date, read and checked to be in the future and before the year 10000; ISO 8601 as stored. */
export function futureDate(raw: string, now: number): string {
  const time = Date.parse(raw);
  if (Number.isNaN(time)) throw errors.validation('The retain until date must be an ISO 8601 date and time');
  if (time <= now) throw errors.validation('The retain until date must be in the future!');
  if (time > LATEST_RETAIN_UNTIL) throw errors.validation('The retain until date must be before the year 10000');
  return new Date(time).toISOString();
}

/**
 * Why a version's retention may not change from `current` to `next` (null:
 * removed), or null when it may: a running COMPLIANCE retention may only be
 * extended (same mode, a date no earlier); a running GOVERNANCE one may be
 * extended, and shortened, removed or turned COMPLIANCE only with a bypass.
 */
export function retentionChangeRefusal(
  current: VersionLock,
  next: { mode: RetentionMode; retainUntil: string } | null,
  now: number,
  bypassGovernance: boolean,
): string | null {
  if (!retentionRuns(current, now)) return null;
  const until = current.retainUntil!;
  const extends_ = next !== null && next.mode === current.mode && Date.parse(next.retainUntil) >= Date.parse(until);
  if (extends_) return null;
  if (current.mode === 'COMPLIANCE') {
    return `This version is under COMPLIANCE retention until ${until}: its retention can only be extended, never shortened, removed or changed`;
  }
  if (bypassGovernance) return null;
  return `This version is under GOVERNANCE retention until ${until}: shortening, removing or changing it needs a key with the bypass-governance permission that asks to bypass it`;
}
