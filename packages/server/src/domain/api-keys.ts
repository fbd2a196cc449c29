/**
 * API keys: long random secrets, stored only as a SHA-256 hash (a slow hash is
 * for guessable passwords; 32 random bytes cannot be guessed). The prefix lets a
 * person recognise a key in a list.
 */
import type { ApiKey, CreatedApiKey } from '@pail/shared';
import { hash, randomBytes } from 'node:crypto';
import type { Db } from '../db/database.js';
import type { ApiKeyRow, UserRow } from '../db/schema.js';
import { nowIso } from './clock.js';
import { moveCacheEpoch } from './cache-epoch.js';
import { errors } from './errors.js';
import type { MetadataCache } from './metadata-cache.js';

const KEY_MARK = 'pail_';
const PREFIX_LENGTH = KEY_MARK.length + 8;
/** last_used_at is written at most this often per key, to keep writes off the hot path. */
const LAST_USED_RESOLUTION_MS = 60_000;

export const hashApiKey = (key: string): string => hash('sha256', key, 'hex');

function keyView(row: ApiKeyRow): ApiKey {
  return { id: row.id, name: row.name, prefix: row.prefix, created_at: row.created_at, last_used_at: row.last_used_at };
}

export function parseKeyName(name: unknown): string {
  if (name === undefined || name === null || name === '') return 'API key';
  if (typeof name !== 'string') throw errors.validation('name must be a string');
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100) throw errors.validation('name must be 1 to 100 characters');
  return trimmed;
}

export async function createApiKey(db: Db, userId: number, name: unknown): Promise<CreatedApiKey> {
  const key = KEY_MARK + randomBytes(32).toString('base64url');
  const row = await db
    .insertInto('api_keys')
    .values({
      user_id: userId,
      name: parseKeyName(name),
      prefix: key.slice(0, PREFIX_LENGTH),
      key_hash: hashApiKey(key),
      created_at: nowIso(),
      last_used_at: null,
      revoked_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { id: row.id, name: row.name, prefix: row.prefix, key, created_at: row.created_at };
}

export async function listApiKeys(db: Db, userId: number): Promise<ApiKey[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map(keyView);
}

export async function revokeApiKey(db: Db, userId: number, keyId: number): Promise<void> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: nowIso() })
    .where('id', '=', keyId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw errors.apiKeyNotFound();
  await moveCacheEpoch(db);
}

type KeyOwner = { user: UserRow; keyId: number };

export class ApiKeyAuthenticator {
  private readonly lastWritten = new Map<number, number>();
  /**
   * @param cache key -> owner, where caching is safe (see metadata-cache.ts);
   *   revoking a key empties it (on every instance, with Redis); a revocation
   *   or plan change by the `pail` CLI empties it too (embedded backend) or
   *   within its short TTL (PostgreSQL + Redis).
   */
  constructor(
    private readonly db: Db,
    private readonly cache: MetadataCache<KeyOwner> | null = null,
  ) {}

  /** The owner of a live key, or null. */
  async authenticate(key: string): Promise<KeyOwner | null> {
    if (!key.startsWith(KEY_MARK) || key.length > 200) return null;
    // Cached by the key itself: a hit costs no hashing (the cache is memory, as the key in the request is).
    const cached = this.cache?.get(key);
    if (cached) {
      this.touch(cached.keyId);
      return cached;
    }
    const mark = this.cache?.mark() ?? 0;
    const keyHash = hashApiKey(key);
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .selectAll('users')
      .select(['api_keys.id as key_id'])
      .where('api_keys.key_hash', '=', keyHash)
      .where('api_keys.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row) return null;
    const { key_id: keyId, ...user } = row;
    this.touch(keyId);
    const owner = { user, keyId };
    this.cache?.set(key, owner, mark);
    return owner;
  }

  /** A key was revoked or an owner changed: stop trusting what is cached. */
  async forget(): Promise<void> {
    await this.cache?.invalidate();
  }

  private touch(keyId: number): void {
    const now = Date.now();
    if (now - (this.lastWritten.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastWritten.set(keyId, now);
    void this.db
      .updateTable('api_keys')
      .set({ last_used_at: new Date(now).toISOString() })
      .where('id', '=', keyId)
      .execute()
      .catch(() => this.lastWritten.delete(keyId));
  }
}
