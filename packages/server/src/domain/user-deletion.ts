/**
 * The operator deleting a user's account (`pail users delete`). Each part goes
 * the way it goes when the user removes it: keys through revokeApiKey,
 * unfinished uploads through their own aborts (cancelUnfinishedUpload), each
 * bucket through deleteBucket (its lock check, its bucket.deleted event, its
 * audit entry, its purge). Then the account is soft-deleted, as a bucket is:
 * its row stays (its audit log, its buckets' rows and their events name it),
 * marked deleted, its email replaced by a tombstone so the address can sign up
 * again, and no lookup of a live account finds it any more.
 *
 * Object lock (decisions.md): a version under a running retention of either
 * mode or a legal hold is never removed by any door, so the deletion is
 * refused, before anything changes, while the user holds one
 * (userDeletionBlocker), with the date the last lock ends.
 */
import { listLiveBuckets } from '../db/repositories/buckets.js';
import { listLiveKeys } from '../db/repositories/api-keys.js';
import { countLiveSessions, revokeSessionsOf } from '../db/repositories/sessions.js';
import { findDeletedUser, markUserDeleted } from '../db/repositories/users.js';
import type { AccountRow, Db, UserRow } from '../db/schema.js';
import { revokeApiKey } from './api-keys.js';
import { OPERATOR, recordAudit } from './audit.js';
import { deleteBucket } from './bucket-deletion.js';
import { nowIso } from './clock.js';
import { AppError, errors } from './errors.js';
import { userDeletionBlocker } from './object-lock.js';
import type { StoragePorts } from './ports.js';
import { operatorFor } from './principal.js';
import { cancelUnfinishedUpload, listUnfinishedUploads } from './unfinished-uploads.js';

/** What a user holds that their deletion removes. */
export interface UserHoldings {
  buckets: number;
  files: number;
  /** Bytes their buckets hold (every version). */
  bytes: number;
  keys: number;
  sessions: number;
  uploads: number;
}

/** What was removed: the account, and counts of what it held. */
export interface UserDeletion {
  user: { id: number; email: string };
  buckets: number;
  keys: number;
  sessions: number;
  uploads: number;
}

/** No password matches it (passwords.ts verifies only scrypt hashes). */
const UNUSABLE_PASSWORD_HASH = 'deleted';

/** A deleted account's email: without an `@`, so no sign-up or login can ever name it; unique by the id. */
export const deletedEmail = (userId: number): string => `deleted-user-${userId}`;

/** A deleted account named by its tombstone (`deleted-user-<id>`, as `pail users delete` prints it), for reading its audit log. */
export const findDeletedAccount = (db: Db, name: string): Promise<UserRow | undefined> => findDeletedUser(db, name.trim().toLowerCase());

/** Throws the refusal (403 ObjectLocked, saying until when) when the user holds locked versions. */
async function refuseLocked(ports: Pick<StoragePorts, 'db' | 'clock'>, userId: number): Promise<void> {
  const held = await userDeletionBlocker(ports, userId);
  if (held !== null) throw new AppError('ObjectLocked', held);
}

/**
 * What deleting the user would remove, for a confirmation; refused, as the
 * deletion would be, when the user holds locked versions.
 */
export async function userDeletionPreview(ports: Pick<StoragePorts, 'db' | 'clock'>, user: AccountRow): Promise<UserHoldings> {
  await refuseLocked(ports, user.id);
  const [buckets, keys, sessions, uploads] = await Promise.all([
    listLiveBuckets(ports.db, user.id),
    listLiveKeys(ports.db, user.id),
    countLiveSessions(ports.db, user.id, nowIso(ports.clock)),
    listUnfinishedUploads(ports.db, operatorFor(user)),
  ]);
  return {
    buckets: buckets.length,
    files: buckets.reduce((sum, bucket) => sum + bucket.object_count, 0),
    bytes: buckets.reduce((sum, bucket) => sum + bucket.total_bytes, 0),
    keys: keys.length,
    sessions,
    uploads: uploads.uploads.length,
  };
}

/**
 * Deletes the user's account and everything in it. Access goes first (keys,
 * sessions), so the user starts nothing new meanwhile; then uploads, then
 * buckets; then the account is marked deleted, which no key, session or login
 * passes from then on; then one more sweep takes whatever a request already
 * under way made in between. A lock set by such a request after the check
 * stops the deletion at that bucket (deleteBucket refuses it in its own
 * transaction); run it again once the lock has ended.
 */
export async function deleteUser(ports: StoragePorts, user: AccountRow): Promise<UserDeletion> {
  await refuseLocked(ports, user.id);
  const removed = { buckets: 0, keys: 0, sessions: 0, uploads: 0 };
  const sweep = async () => {
    removed.keys += await revokeKeys(ports, user.id);
    removed.sessions += await revokeSessionsOf(ports.db, user.id, nowIso(ports.clock));
    removed.uploads += await endUploads(ports, user);
    removed.buckets += await deleteBuckets(ports, user.id);
  };
  await sweep();
  if (!(await markUserDeleted(ports.db, user.id, nowIso(ports.clock), deletedEmail(user.id), UNUSABLE_PASSWORD_HASH))) {
    throw errors.validation(`no user with email ${user.email}`);
  }
  // Cached key owners carry the account.
  await ports.caches.changed('keys');
  await sweep();
  await recordAudit(ports.db, {
    userId: user.id,
    actor: OPERATOR,
    action: 'user.deleted',
    target: `user:${user.id}`,
    details: { email: user.email, ...removed },
  });
  return { user: { id: user.id, email: user.email }, ...removed };
}

async function revokeKeys(ports: StoragePorts, userId: number): Promise<number> {
  let revoked = 0;
  for (const key of await listLiveKeys(ports.db, userId)) {
    try {
      await revokeApiKey(ports, userId, key.id, OPERATOR);
      revoked++;
    } catch (error) {
      if (!isGone(error)) throw error; // revoked meanwhile
    }
  }
  return revoked;
}

/** Ends every unfinished upload, a page at a time, until a pass ends none (one that cannot be ended then expires as any does). */
async function endUploads(ports: StoragePorts, user: AccountRow): Promise<number> {
  const principal = operatorFor(user);
  let ended = 0;
  for (;;) {
    const { uploads } = await listUnfinishedUploads(ports.db, principal);
    let thisPass = 0;
    for (const upload of uploads) {
      try {
        await cancelUnfinishedUpload(ports, principal, upload.kind, upload.id);
        thisPass++;
      } catch (error) {
        if (!isGone(error)) throw error; // finished or ended meanwhile
      }
    }
    ended += thisPass;
    if (thisPass === 0) return ended;
  }
}

/** Deletes every live bucket through deleteBucket; a lock refusal stops it (and is the caller's answer). */
async function deleteBuckets(ports: StoragePorts, userId: number): Promise<number> {
  let deleted = 0;
  for (const bucket of await listLiveBuckets(ports.db, userId)) {
    try {
      await deleteBucket(ports, userId, String(bucket.id), undefined, OPERATOR);
      deleted++;
    } catch (error) {
      if (!isGone(error)) throw error; // deleted meanwhile
    }
  }
  return deleted;
}

const isGone = (error: unknown): boolean =>
  error instanceof AppError && (error.code === 'NotFound' || error.code === 'BucketNotFound' || error.code === 'ApiKeyNotFound');
