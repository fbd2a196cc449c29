/**
 * API keys: long random secrets, stored only as a SHA-256 hash (a slow hash is
 * for guessable passwords; 32 random bytes cannot be guessed). The prefix lets a
 * person recognise a key in a list.
 */
import type { ApiKey, CreatedApiKey } from '@pail/shared';
import { hash, randomBytes } from 'node:crypto';
import type { Caches } from '../cache/caches.js';
import type { Db } from '../db/database.js';
import { countLiveKeys, findKeyOwner, insertApiKey, listLiveKeys, revokeKey, touchKey, type KeyOwner } from '../db/repositories/api-keys.js';
import { insertWithinLimit } from '../db/repositories/users.js';
import type { ApiKeyRow } from '../db/schema.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';

export type { KeyOwner };

const KEY_MARK = 'pail_';
const PREFIX_LENGTH = KEY_MARK.length + 8;
/** last_used_at is written at most this often per key, to keep writes off the hot path. */
const LAST_USED_RESOLUTION_MS = 60_000;

export const hashApiKey = (key: string): string => hash('sha256', key, 'hex');

/** Whether a credential looks like an API key (rather than a session token). */
export const looksLikeApiKey = (credential: string): boolean => credential.startsWith(KEY_MARK);

function keyView(row: ApiKeyRow): ApiKey {
  return { id: row.id, name: row.name, prefix: row.prefix, created_at: row.created_at, last_used_at: row.last_used_at };
}

export function parseKeyName(name: string | null | undefined): string {
  if (name === undefined || name === null || name === '') return 'API key';
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100) throw errors.validation('name must be 1 to 100 characters');
  return trimmed;
}

export async function createApiKey(db: Db, userId: number, name: string | null | undefined, maxKeys: number): Promise<CreatedApiKey> {
  const key = KEY_MARK + randomBytes(32).toString('base64url');
  const values = {
    user_id: userId,
    name: parseKeyName(name),
    prefix: key.slice(0, PREFIX_LENGTH),
    key_hash: hashApiKey(key),
    created_at: nowIso(),
    last_used_at: null,
    revoked_at: null,
  };
  const row = await insertWithinLimit(
    db,
    userId,
    maxKeys,
    (trx) => countLiveKeys(trx, userId),
    (trx) => insertApiKey(trx, values),
  );
  if (!row) throw errors.tooMany('API keys', maxKeys);
  return { id: row.id, name: row.name, prefix: row.prefix, key, created_at: row.created_at };
}

export async function listApiKeys(db: Db, userId: number): Promise<ApiKey[]> {
  return (await listLiveKeys(db, userId)).map(keyView);
}

/** Revokes a key: from the moment this returns, on every instance, it opens nothing. */
export async function revokeApiKey(ports: { db: Db; caches: Caches }, userId: number, keyId: number): Promise<void> {
  if (!(await revokeKey(ports.db, userId, keyId, nowIso()))) throw errors.apiKeyNotFound();
  await ports.caches.changed('keys');
}

export class ApiKeyAuthenticator {
  private readonly lastWritten = new Map<number, number>();

  constructor(private readonly ports: { db: Db; caches: Caches }) {}

  /** The owner of a live key, or null. */
  async authenticate(key: string): Promise<KeyOwner | null> {
    if (!looksLikeApiKey(key) || key.length > 200) return null;
    const cache = this.ports.caches.keyOwners;
    // Cached by the key itself: a hit costs no hashing (the cache is memory, as the key in the request is).
    const cached = cache?.get(key);
    if (cached) {
      this.touch(cached.keyId);
      return cached;
    }
    const mark = cache?.mark() ?? 0;
    const owner = await findKeyOwner(this.ports.db, hashApiKey(key));
    if (!owner) return null;
    this.touch(owner.keyId);
    cache?.set(key, owner, mark);
    return owner;
  }

  private touch(keyId: number): void {
    const now = Date.now();
    if (now - (this.lastWritten.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastWritten.set(keyId, now);
    touchKey(this.ports.db, keyId, new Date(now).toISOString()).catch(() => this.lastWritten.delete(keyId));
  }
}
