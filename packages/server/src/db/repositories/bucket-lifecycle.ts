/**
 * Queries of lifecycle rules and their sweep: a bucket's rules as one JSON
 * text (no row for none), the live buckets that have some, the files and
 * uploads a rule reaches, and the lease one sweeping instance holds.
 */
import type { BucketRow, Db } from '../schema.js';
import { startingWith } from '../name-ranges.js';

export async function findLifecycleRules(db: Db, bucketId: number): Promise<string | undefined> {
  const row = await db.selectFrom('bucket_lifecycle').select('rules').where('bucket_id', '=', bucketId).executeTakeFirst();
  return row?.rules;
}

export async function saveLifecycleRules(db: Db, bucketId: number, rules: string): Promise<void> {
  await db
    .insertInto('bucket_lifecycle')
    .values({ bucket_id: bucketId, rules })
    .onConflict((conflict) => conflict.column('bucket_id').doUpdateSet({ rules }))
    .execute();
}

export async function deleteLifecycleRules(db: Db, bucketId: number): Promise<void> {
  await db.deleteFrom('bucket_lifecycle').where('bucket_id', '=', bucketId).execute();
}

/** Up to `limit` live buckets with lifecycle rules, by id after `afterId`, each with its rules' JSON. */
export function bucketsWithRules(db: Db, afterId: number, limit: number): Promise<(BucketRow & { rules: string })[]> {
  return (
    db
      .selectFrom('bucket_lifecycle')
      .innerJoin('buckets', 'buckets.id', 'bucket_lifecycle.bucket_id')
      // Every column of the bucket, whatever later migrations add, beside its rules.
      .selectAll('buckets')
      .select('bucket_lifecycle.rules')
      .where('buckets.deleted_at', 'is', null)
      .where('buckets.id', '>', afterId)
      .orderBy('buckets.id')
      .limit(limit)
      .execute()
  );
}

/** What the sweep weighs of a current file: its version (storage key), size, tags and when it was written. */
export interface SweptFile {
  filename: string;
  storage_key: string;
  size: number;
  tags: string | null;
  updated_at: string;
}

/**
 * Up to `limit` current files of a bucket under `prefix`, after `after` in
 * byte order, written before `writtenBefore` (an ISO time) and within the
 * size bounds: the candidates of an Expiration (tags are the domain's to match).
 */
export function filesWrittenBefore(
  db: Db,
  bucketId: number,
  page: { prefix: string; after: string | null; writtenBefore: string; sizeAbove?: number | undefined; sizeBelow?: number | undefined; limit: number },
): Promise<SweptFile[]> {
  let q = db
    .selectFrom('objects')
    .select(['filename', 'storage_key', 'size', 'tags', 'updated_at'])
    .where('bucket_id', '=', bucketId)
    .where('updated_at', '<', page.writtenBefore);
  q = q.$call(startingWith('filename', page.prefix));
  if (page.after !== null) q = q.where('filename', '>', page.after);
  if (page.sizeAbove !== undefined) q = q.where('size', '>', page.sizeAbove);
  if (page.sizeBelow !== undefined) q = q.where('size', '<', page.sizeBelow);
  return q.orderBy('filename').limit(page.limit).execute();
}

/** Up to `limit` ids of a bucket's multipart uploads under `prefix` begun before `cutoff` (an ISO time), oldest first. */
export async function bucketUploadsBegunBefore(db: Db, bucketId: number, prefix: string, cutoff: string, limit: number): Promise<string[]> {
  let q = db.selectFrom('multipart_uploads').select('id').where('bucket_id', '=', bucketId).where('created_at', '<', cutoff);
  q = q.$call(startingWith('filename', prefix));
  const rows = await q.orderBy('created_at').orderBy('id').limit(limit).execute();
  return rows.map((row) => row.id);
}

/**
 * Takes or renews the lease `name` for `holder` until `untilMs`: true when
 * it is now theirs (it was free, lapsed at `nowMs`, or already theirs). One
 * statement each way, so two instances never both get it.
 */
export async function takeLease(db: Db, name: string, holder: string, nowMs: number, untilMs: number): Promise<boolean> {
  await db
    .insertInto('background_leases')
    .values({ name, holder: '', until_ms: 0 })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const taken = await db
    .updateTable('background_leases')
    .set({ holder, until_ms: untilMs })
    .where('name', '=', name)
    .where((eb) => eb.or([eb('holder', '=', holder), eb('until_ms', '<', nowMs)]))
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/** Gives the lease back, if `holder` still has it. */
export async function releaseLease(db: Db, name: string, holder: string): Promise<void> {
  await db.updateTable('background_leases').set({ until_ms: 0 }).where('name', '=', name).where('holder', '=', holder).execute();
}

/** What the sweep weighs of a kept (noncurrent) version or delete marker: its row id (the paging cursor), name and version id. */
export interface SweptVersion {
  id: number;
  filename: string;
  version_id: string | null;
  size: number;
  tags: string | null;
  /** How many newer noncurrent versions (not delete markers) the name keeps; only counted when asked. */
  newer: number;
}

/**
 * Up to `limit` noncurrent versions (not delete markers) of a bucket under
 * `prefix`, after row `afterId`, oldest first, that stopped being current
 * before `before`, within the size bounds; with `countNewer`, each with how
 * many newer noncurrent versions its name has (NewerNoncurrentVersions).
 */
export async function noncurrentVersionsBefore(
  db: Db,
  bucketId: number,
  page: { prefix: string; afterId: number; before: string; sizeAbove?: number | undefined; sizeBelow?: number | undefined; countNewer: boolean; limit: number },
): Promise<SweptVersion[]> {
  let q = db
    .selectFrom('object_versions as v')
    .select(['v.id', 'v.filename', 'v.version_id', 'v.size', 'v.tags'])
    .$if(page.countNewer, (query) =>
      query.select((eb) =>
        eb
          .selectFrom('object_versions as n')
          .select((n) => n.fn.countAll<number | string>().as('c'))
          .whereRef('n.bucket_id', '=', 'v.bucket_id')
          .whereRef('n.filename', '=', 'v.filename')
          .whereRef('n.id', '>', 'v.id')
          .where('n.is_delete_marker', '=', 0)
          .as('newer'),
      ),
    )
    .where('v.bucket_id', '=', bucketId)
    .where('v.is_delete_marker', '=', 0)
    .where('v.noncurrent_at', '<', page.before)
    .where('v.id', '>', page.afterId);
  q = q.$call(startingWith('v.filename', page.prefix));
  if (page.sizeAbove !== undefined) q = q.where('v.size', '>', page.sizeAbove);
  if (page.sizeBelow !== undefined) q = q.where('v.size', '<', page.sizeBelow);
  const rows = await q.orderBy('v.id').limit(page.limit).execute();
  return rows.map((row) => ({ ...row, newer: Number((row as { newer?: number | string | null }).newer ?? 0) }));
}

/**
 * Up to `limit` expired delete markers of a bucket under `prefix`, after row
 * `afterId`: markers that are their name's only version left (no current
 * file, no other kept version), made before `madeBefore`.
 */
export async function soleDeleteMarkers(
  db: Db,
  bucketId: number,
  page: { prefix: string; afterId: number; madeBefore: string; limit: number },
): Promise<Pick<SweptVersion, 'id' | 'filename' | 'version_id'>[]> {
  let q = db
    .selectFrom('object_versions as v')
    .select(['v.id', 'v.filename', 'v.version_id'])
    .where('v.bucket_id', '=', bucketId)
    .where('v.is_delete_marker', '=', 1)
    .where('v.updated_at', '<', page.madeBefore)
    .where('v.id', '>', page.afterId)
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('objects as o').select('o.bucket_id').whereRef('o.bucket_id', '=', 'v.bucket_id').whereRef('o.filename', '=', 'v.filename')),
      ),
    )
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('object_versions as w')
            .select('w.id')
            .whereRef('w.bucket_id', '=', 'v.bucket_id')
            .whereRef('w.filename', '=', 'v.filename')
            .whereRef('w.id', '<>', 'v.id'),
        ),
      ),
    );
  q = q.$call(startingWith('v.filename', page.prefix));
  return q.orderBy('v.id').limit(page.limit).execute();
}
