/** Queries on API keys. Keys are found by the hash of their secret, never by the secret. */
import { DEFAULT_PERMISSIONS, PERMISSIONS, type Permission } from '@pail/shared';
import type { AccountRow, ApiKeyRow, ApiKeysTable, Db } from '../schema.js';
import { ACCOUNT_COLUMNS } from './users.js';

/** What a key may do, as stored; `buckets: null` is every bucket of the owner. */
export interface KeyLimits {
  buckets: readonly number[] | null;
  permissions: readonly Permission[];
  expiresAt: string | null;
}

/** Who a live key belongs to, and its limits. */
export interface KeyOwner {
  user: AccountRow;
  keyId: number;
  limits: KeyLimits;
  /** Found by S3 access key id: its secret, sealed (domain/s3-credentials.ts). */
  sealedSecret?: string;
}

export function limitsOf(row: Pick<ApiKeyRow, 'buckets' | 'permissions' | 'expires_at'>): KeyLimits {
  return {
    buckets: row.buckets === null ? null : (JSON.parse(row.buckets) as number[]),
    permissions: row.permissions === null ? DEFAULT_PERMISSIONS : (row.permissions.split(',') as Permission[]),
    expiresAt: row.expires_at,
  };
}

export function limitsColumns(limits: KeyLimits): Pick<ApiKeysTable, 'buckets' | 'permissions' | 'expires_at'> {
  // null stands for the default set (every permission but bypass-governance), so keys made before it existed keep their meaning.
  const asDefault = limits.permissions.length === DEFAULT_PERMISSIONS.length && DEFAULT_PERMISSIONS.every((p) => limits.permissions.includes(p));
  return {
    buckets: limits.buckets === null ? null : JSON.stringify(limits.buckets),
    permissions: asDefault ? null : PERMISSIONS.filter((p) => limits.permissions.includes(p)).join(','),
    expires_at: limits.expiresAt,
  };
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
    .select(['api_keys.id as key_id', 'api_keys.buckets as key_buckets', 'api_keys.permissions as key_permissions', 'api_keys.expires_at as key_expires_at'])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { key_id: keyId, key_buckets: buckets, key_permissions: permissions, key_expires_at: expires_at, ...user } = row;
  return { user, keyId, limits: limitsOf({ buckets, permissions, expires_at }) };
}

/** A live key by id, for the signed urls it made. */
export async function findKeyOwnerById(db: Db, keyId: number): Promise<KeyOwner | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(ACCOUNT_COLUMNS)
    .select(['api_keys.buckets as key_buckets', 'api_keys.permissions as key_permissions', 'api_keys.expires_at as key_expires_at'])
    .where('api_keys.id', '=', keyId)
    .where('api_keys.revoked_at', 'is', null)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { key_buckets: buckets, key_permissions: permissions, key_expires_at: expires_at, ...user } = row;
  return { user, keyId, limits: limitsOf({ buckets, permissions, expires_at }) };
}

/** A live key by its S3 access key id, with its sealed secret (never cached past the key's own lifetime: see ApiKeyAuthenticator). */
export async function findKeyOwnerByAccessKeyId(db: Db, accessKeyId: string): Promise<(KeyOwner & { sealedSecret: string }) | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(ACCOUNT_COLUMNS)
    .select([
      'api_keys.id as key_id',
      'api_keys.sealed_secret as key_sealed_secret',
      'api_keys.buckets as key_buckets',
      'api_keys.permissions as key_permissions',
      'api_keys.expires_at as key_expires_at',
    ])
    .where('api_keys.access_key_id', '=', accessKeyId)
    .where('api_keys.revoked_at', 'is', null)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row || row.key_sealed_secret === null) return undefined;
  const { key_id: keyId, key_sealed_secret: sealedSecret, key_buckets: buckets, key_permissions: permissions, key_expires_at: expires_at, ...user } = row;
  return { user, keyId, limits: limitsOf({ buckets, permissions, expires_at }), sealedSecret };
}

export async function touchKey(db: Db, keyId: number, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
}
