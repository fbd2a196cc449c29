/**
 * Queries on versions' locks (object lock: a retention and a legal hold per
 * version, keyed by its storage key). A lock row outlives nothing: the
 * queries about what is held join the rows of versions that exist, so a row
 * left behind by a removed version holds nothing.
 */
import type { BucketRow, Db, VersionLocksTable } from '../schema.js';

export type LockRow = Pick<VersionLocksTable, 'storage_key' | 'mode' | 'retain_until'> & { legal_hold: number };

export interface LockValues {
  mode: string | null;
  retainUntil: string | null;
  legalHold: boolean;
}

export async function findLocks(db: Db, storageKeys: readonly string[]): Promise<Map<string, LockRow>> {
  if (storageKeys.length === 0) return new Map();
  const rows = await db
    .selectFrom('version_locks')
    .select(['storage_key', 'mode', 'retain_until', 'legal_hold'])
    .where('storage_key', 'in', [...storageKeys])
    .execute();
  return new Map(rows.map((row) => [row.storage_key, row]));
}

/** The lock row a commit writes beside a new version (in its transaction: object-writes/). */
export function lockRowValues(bucketId: number, filename: string, storageKey: string, lock: LockValues) {
  return { storage_key: storageKey, bucket_id: bucketId, filename, mode: lock.mode, retain_until: lock.retainUntil, legal_hold: lock.legalHold ? 1 : 0 };
}

/**
 * Changes a version's lock in one transaction that first takes its bucket's
 * lock (a no-op update of its row: PostgreSQL's row lock, which every delete
 * of a version takes too, and SQLite's write lock). So a delete of the
 * version either commits first, and the change then finds no version
 * (undefined), or reads the changed lock in its own transaction after this
 * one (object-writes/). `decide` makes the next lock from the row there now,
 * or throws to refuse. Undefined also when the bucket is gone.
 */
export function changeLockInBucket(
  db: Db,
  version: { bucketId: number; filename: string; storageKey: string },
  decide: (row: LockRow | undefined) => LockValues,
): Promise<LockValues | undefined> {
  return db.transaction().execute(async (trx) => {
    const held = await trx
      .updateTable('buckets')
      .set((eb) => ({ object_lock: eb.ref('object_lock') }))
      .where('id', '=', version.bucketId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(held.numUpdatedRows) === 0 || !(await versionExists(trx, version))) return undefined;
    const next = decide((await findLocks(trx, [version.storageKey])).get(version.storageKey));
    const values = lockRowValues(version.bucketId, version.filename, version.storageKey, next);
    await trx
      .insertInto('version_locks')
      .values(values)
      .onConflict((conflict) =>
        conflict.column('storage_key').doUpdateSet({ mode: values.mode, retain_until: values.retain_until, legal_hold: values.legal_hold }),
      )
      .execute();
    return next;
  });
}

/** Whether a version (its storage key) is still at its name, current or kept. */
async function versionExists(trx: Db, version: { bucketId: number; filename: string; storageKey: string }): Promise<boolean> {
  const current = await trx
    .selectFrom('objects')
    .select('storage_key')
    .where('bucket_id', '=', version.bucketId)
    .where('filename', '=', version.filename)
    .where('storage_key', '=', version.storageKey)
    .executeTakeFirst();
  if (current) return true;
  const kept = await trx
    .selectFrom('object_versions')
    .select('storage_key')
    .where('bucket_id', '=', version.bucketId)
    .where('filename', '=', version.filename)
    .where('storage_key', '=', version.storageKey)
    .executeTakeFirst();
  return kept !== undefined;
}

/** Forgets the locks of versions that are gone (their rows would hold nothing, see above; this keeps the table small). */
export async function dropLocks(db: Db, storageKeys: readonly string[]): Promise<void> {
  if (storageKeys.length > 0)
    await db
      .deleteFrom('version_locks')
      .where('storage_key', 'in', [...storageKeys])
      .execute();
}

/** Every storage key a version has now, current or kept: the rows a lock can hold. */
const existingVersions = (db: Db) =>
  db
    .selectFrom('objects')
    .select('objects.storage_key')
    .union(
      db
        .selectFrom('object_versions')
        .select('object_versions.storage_key')
        .where('object_versions.storage_key', 'is not', null)
        .$narrowType<{ storage_key: string }>(),
    );

export interface HeldSummary {
  /** The latest retain-until among COMPLIANCE retentions still running; null: none. */
  lastCompliance: string | null;
  /** The latest retain-until among GOVERNANCE retentions still running; null: none. */
  lastGovernance: string | null;
  /** How many versions are under a legal hold. */
  legalHolds: number;
}

/** What still holds versions of some buckets: retentions running at `now`, by mode, and legal holds. */
export async function heldInBuckets(db: Db, bucketIds: readonly number[], now: string): Promise<HeldSummary> {
  if (bucketIds.length === 0) return { lastCompliance: null, lastGovernance: null, legalHolds: 0 };
  const base = db
    .selectFrom('version_locks')
    .where('bucket_id', 'in', [...bucketIds])
    .where('storage_key', 'in', existingVersions(db));
  const retentions = await base
    .select((eb) => ['mode', eb.fn.max<string | null>('retain_until').as('until')])
    .where('retain_until', '>', now)
    .groupBy('mode')
    .execute();
  const holds = await base
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('legal_hold', '=', 1)
    .executeTakeFirstOrThrow();
  const lastOf = (mode: string) => retentions.find((row) => row.mode === mode)?.until ?? null;
  return { lastCompliance: lastOf('COMPLIANCE'), lastGovernance: lastOf('GOVERNANCE'), legalHolds: Number(holds.n) };
}

/**
 * A live bucket's lock settings: object lock on, and its default retention.
 * Lock goes on only where it is on already or versioning is enabled (checked
 * in the statement, so a suspension meanwhile cannot slip past); the row
 * after, or undefined when neither holds or the bucket is gone.
 */
export function setBucketLock(
  db: Db,
  bucketId: number,
  values: { object_lock: 1; lock_default_mode: string | null; lock_default_days: number | null; lock_default_years: number | null },
): Promise<BucketRow | undefined> {
  return db
    .updateTable('buckets')
    .set(values)
    .where('id', '=', bucketId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('object_lock', '=', 1), eb('versioning', '=', 'enabled')]))
    .returningAll()
    .executeTakeFirst();
}

/** The live buckets of an owner, by id: what a user's deletion removes. */
export async function liveBucketIdsOf(db: Db, ownerId: number): Promise<number[]> {
  const rows = await db.selectFrom('buckets').select('id').where('owner_id', '=', ownerId).where('deleted_at', 'is', null).execute();
  return rows.map((row) => row.id);
}
