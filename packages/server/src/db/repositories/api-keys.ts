/** Queries on API keys. Keys are found by the hash of their secret, never by the secret. */
import type { Db } from '../database.js';
import type { AccountRow, ApiKeyRow, ApiKeysTable } from '../schema.js';
import { ACCOUNT_COLUMNS } from './users.js';

/** Who a live key belongs to. */
export interface KeyOwner {
  user: AccountRow;
  keyId: number;
}

export function insertApiKey(db: Db, values: Omit<ApiKeysTable, 'id'>): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function countLiveKeys(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function listLiveKeys(db: Db, userId: number): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).where('revoked_at', 'is', null).orderBy('id').execute();
}

/** True when a live key of this user was revoked. */
export async function revokeKey(db: Db, userId: number, keyId: number, at: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findKeyOwner(db: Db, keyHash: string): Promise<KeyOwner | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(ACCOUNT_COLUMNS)
    .select('api_keys.id as key_id')
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { key_id: keyId, ...user } = row;
  return { user, keyId };
}

export async function touchKey(db: Db, keyId: number, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
}
