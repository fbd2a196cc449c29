/** Queries on users. Each takes the database or a transaction. */
import type { Db, UserRow } from '../schema.js';

/** The columns of an AccountRow, for queries that join users (never the password hash). */
export const ACCOUNT_COLUMNS = ['users.id', 'users.email', 'users.plan', 'users.storage_used_bytes', 'users.created_at'] as const;

export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function insertUser(db: Db, values: { email: string; password_hash: string; plan: string; created_at: string }): Promise<UserRow> {
  return db.insertInto('users').values(values).returningAll().executeTakeFirstOrThrow();
}

export function listUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('id').execute();
}

export function updatePlan(db: Db, email: string, plan: string): Promise<UserRow | undefined> {
  return db.updateTable('users').set({ plan }).where('email', '=', email).returningAll().executeTakeFirst();
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
