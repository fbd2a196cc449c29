/** Queries on users. Each takes the database or a transaction. */
import type { Db, UserRow } from '../schema.js';

/** The columns of an AccountRow, for queries that join users (never the password hash). */
export const ACCOUNT_COLUMNS = ['users.id', 'users.email', 'users.plan', 'users.storage_used_bytes', 'users.created_at'] as const;

/** A live account by its email (a deleted one's email is a tombstone, and it is skipped in any case). */
export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).where('deleted_at', 'is', null).executeTakeFirst();
}

export function insertUser(db: Db, values: { email: string; password_hash: string; plan: string; created_at: string }): Promise<UserRow> {
  return db.insertInto('users').values(values).returningAll().executeTakeFirstOrThrow();
}

/** A deleted account by the tombstone its email became (its audit log stays readable to the operator). */
export function findDeletedUser(db: Db, tombstone: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', tombstone).where('deleted_at', 'is not', null).executeTakeFirst();
}

/** The live accounts, by id. */
export function listUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('deleted_at', 'is', null).orderBy('id').execute();
}

export function updatePlan(db: Db, email: string, plan: string): Promise<UserRow | undefined> {
  return db.updateTable('users').set({ plan }).where('email', '=', email).where('deleted_at', 'is', null).returningAll().executeTakeFirst();
}

/**
 * Marks a live account deleted: its email becomes `tombstone` (freeing the
 * address, which the unique constraint would otherwise keep) and its password
 * hash one no password matches. False when it was not live.
 */
export async function markUserDeleted(db: Db, userId: number, at: string, tombstone: string, unusableHash: string): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ deleted_at: at, email: tombstone, password_hash: unusableHash })
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Runs `insert` only while the user has fewer than `max` rows counted by
 * `count`, in one transaction that first writes the user's row: a row lock on
 * PostgreSQL and the write lock on SQLite, so racing inserts cannot together
 * pass `max`. Undefined when the user is at the limit.
 */
export function insertWithinLimit<T>(
  db: Db,
  userId: number,
  max: number,
  count: (trx: Db) => Promise<number>,
  insert: (trx: Db) => Promise<T>,
): Promise<T | undefined> {
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set((eb) => ({ plan: eb.ref('plan') }))
      .where('id', '=', userId)
      .execute();
    if ((await count(trx)) >= max) return undefined;
    return insert(trx);
  });
}

/** Bytes stored by all users together. */
export async function totalStorageUsed(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('storage_used_bytes'), eb.lit(0)).as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}
