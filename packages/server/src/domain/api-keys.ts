/**
 * API keys: long random secrets, stored only as a SHA-256 hash (a slow hash is
 * for guessable passwords; 32 random bytes cannot be guessed). The prefix lets a
 * person recognise a key in a list.
 */
import type { ApiKey, CreatedApiKey } from '@pail/shared';
import { hash, randomBytes } from 'node:crypto';
import type { Caches } from '../cache/caches.js';
import type { Db } from '../db/database.js';
import {
  countLiveKeys,
  findKeyOwner,
  findKeyOwnerById,
  insertApiKey,
  limitsColumns,
  limitsOf,
  listLiveKeys,
  revokeKey,
  touchKey,
  type KeyOwner,
} from '../db/repositories/api-keys.js';
import { listLiveBuckets } from '../db/repositories/buckets.js';
import { insertWithinLimit } from '../db/repositories/users.js';
import type { ApiKeyRow } from '../db/schema.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import { hasExpired, parseKeyLimits, type KeyLimits, type KeyLimitsInput } from './key-limits.js';

export type { KeyOwner };

const KEY_MARK = 'pail_';
const PREFIX_LENGTH = KEY_MARK.length + 8;
/** last_used_at is written at most this often per key, to keep writes off the hot path. */
const LAST_USED_RESOLUTION_MS = 60_000;

export const hashApiKey = (key: string): string => hash('sha256', key, 'hex');

/** Whether a credential looks like an API key (rather than a session token). */
export const looksLikeApiKey = (credential: string): boolean => credential.startsWith(KEY_MARK);

function limitsView(limits: KeyLimits): Pick<ApiKey, 'buckets' | 'permissions' | 'expires_at'> {
  return { buckets: limits.buckets === null ? null : [...limits.buckets], permissions: [...limits.permissions], expires_at: limits.expiresAt };
}

function keyView(row: ApiKeyRow): ApiKey {
  return { id: row.id, name: row.name, prefix: row.prefix, created_at: row.created_at, last_used_at: row.last_used_at, ...limitsView(limitsOf(row)) };
}

export function parseKeyName(name: string | null | undefined): string {
  if (name === undefined || name === null || name === '') return 'API key';
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100) throw errors.validation('name must be 1 to 100 characters');
  return trimmed;
}

export async function createApiKey(db: Db, userId: number, input: KeyLimitsInput & { name?: string | null }, maxKeys: number): Promise<CreatedApiKey> {
  const name = parseKeyName(input.name);
  const ownBuckets = input.buckets == null ? new Set<number>() : new Set((await listLiveBuckets(db, userId)).map((b) => b.id));
  const limits = parseKeyLimits(input, ownBuckets, new Date());
  const key = KEY_MARK + randomBytes(32).toString('base64url');
  const values = {
    user_id: userId,
    name,
    prefix: key.slice(0, PREFIX_LENGTH),
    key_hash: hashApiKey(key),
    created_at: nowIso(),
    last_used_at: null,
    revoked_at: null,
    ...limitsColumns(limits),
  };
  const row = await insertWithinLimit(
    db,
    userId,
    maxKeys,
    (trx) => countLiveKeys(trx, userId),
    (trx) => insertApiKey(trx, values),
  );
  if (!row) throw errors.tooMany('API keys', maxKeys);
  return { id: row.id, name: row.name, prefix: row.prefix, key, created_at: row.created_at, ...limitsView(limits) };
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

  /** The owner of a live, unexpired key, or null. */
  async authenticate(key: string): Promise<KeyOwner | null> {
    if (!looksLikeApiKey(key) || key.length > 200) return null;
    // Cached by the key itself: a hit costs no hashing (the cache is memory, as the key in the request is).
    const owner = await this.cached(key, () => findKeyOwner(this.ports.db, hashApiKey(key)));
    if (!owner || (owner.limits.expiresAt !== null && hasExpired(owner.limits, nowIso()))) return null;
    this.touch(owner.keyId);
    return owner;
  }

  /** A live, unexpired key by id: the signer of a signed url. */
  async byId(keyId: number): Promise<KeyOwner | null> {
    const owner = await this.cached(`#${keyId}`, () => findKeyOwnerById(this.ports.db, keyId));
    return owner && (owner.limits.expiresAt === null || !hasExpired(owner.limits, nowIso())) ? owner : null;
  }

  private async cached(cacheKey: string, find: () => Promise<KeyOwner | undefined>): Promise<KeyOwner | null> {
    const cache = this.ports.caches.keyOwners;
    const hit = cache?.get(cacheKey);
    if (hit) return hit;
    const mark = cache?.mark() ?? 0;
    const owner = await find();
    if (!owner) return null;
    cache?.set(cacheKey, owner, mark);
    return owner;
  }

  private touch(keyId: number): void {
    const now = Date.now();
    if (now - (this.lastWritten.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastWritten.set(keyId, now);
    touchKey(this.ports.db, keyId, new Date(now).toISOString()).catch(() => this.lastWritten.delete(keyId));
  }
}
