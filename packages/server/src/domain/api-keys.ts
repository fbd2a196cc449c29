/**
 * API keys: long random secrets, stored only as a SHA-256 hash (a slow hash is
 * for guessable passwords; 32 random bytes cannot be guessed). The prefix lets a
 * person recognise a key in a list. Each new key also gets an S3 credential
 * (s3-credentials.ts): an access key id and a sealed secret.
 */
import type { ApiKey, CreatedApiKey } from '@pail/shared';
import { hash, randomBytes } from 'node:crypto';
import type { Caches } from '../cache/caches.js';
import {
  countLiveKeys,
  findKeyOwner,
  findKeyOwnerByAccessKeyId,
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
import type { ApiKeyRow, Db } from '../db/schema.js';
import { nowIso, systemClock, type Clock } from './clock.js';
import { errors } from './errors.js';
import { hasExpired, parseKeyLimits, type KeyLimits, type KeyLimitsInput } from './key-limits.js';
import { looksLikeAccessKeyId, type S3CredentialSealer } from './s3-credentials.js';
import { OPERATOR, recordAudit, type Actor } from './audit.js';

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
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    access_key_id: row.access_key_id,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    ...limitsView(limitsOf(row)),
  };
}

export function parseKeyName(name: string | null | undefined): string {
  if (name === undefined || name === null || name === '') return 'API key';
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100) throw errors.validation('name must be 1 to 100 characters');
  return trimmed;
}

/** A new key, with its S3 credential (the secret sealed under the server secret); the secrets are in this answer only. */
export async function createApiKey(
  db: Db,
  userId: number,
  input: KeyLimitsInput & { name?: string | null },
  maxKeys: number,
  sealer: S3CredentialSealer,
  clock: Clock = systemClock,
  actor: Actor = OPERATOR,
): Promise<CreatedApiKey> {
  const name = parseKeyName(input.name);
  const ownBuckets = input.buckets == null ? new Set<number>() : new Set((await listLiveBuckets(db, userId)).map((b) => b.id));
  const limits = parseKeyLimits(input, ownBuckets, new Date(clock.now()));
  const key = KEY_MARK + randomBytes(32).toString('base64url');
  const s3 = sealer.issue();
  const values = {
    user_id: userId,
    name,
    prefix: key.slice(0, PREFIX_LENGTH),
    key_hash: hashApiKey(key),
    created_at: nowIso(clock),
    last_used_at: null,
    revoked_at: null,
    access_key_id: s3.accessKeyId,
    sealed_secret: s3.sealedSecret,
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
  await recordAudit(db, { userId, actor, action: 'key.created', target: `key:${row.id}`, details: { name: row.name, prefix: row.prefix } });
  const view = { id: row.id, name: row.name, prefix: row.prefix, key, created_at: row.created_at, ...limitsView(limits) };
  return { ...view, access_key_id: s3.accessKeyId, secret_access_key: s3.secretAccessKey };
}

export async function listApiKeys(db: Db, userId: number): Promise<ApiKey[]> {
  return (await listLiveKeys(db, userId)).map(keyView);
}

/** Revokes a key: from the moment this returns, on every instance, it opens nothing. */
export async function revokeApiKey(ports: { db: Db; caches: Caches }, userId: number, keyId: number, actor: Actor = OPERATOR): Promise<void> {
  if (!(await revokeKey(ports.db, userId, keyId, nowIso()))) throw errors.apiKeyNotFound();
  await ports.caches.changed('keys');
  await recordAudit(ports.db, { userId, actor, action: 'key.revoked', target: `key:${keyId}` });
}

const hasSealedSecret = (owner: KeyOwner): owner is KeyOwner & { sealedSecret: string } => owner.sealedSecret !== undefined;

export class ApiKeyAuthenticator {
  private readonly lastWritten = new Map<number, number>();

  constructor(private readonly ports: { db: Db; caches: Caches; clock: Clock }) {}

  /** The owner of a live, unexpired key, or null. */
  async authenticate(key: string): Promise<KeyOwner | null> {
    if (!looksLikeApiKey(key) || key.length > 200) return null;
    // Cached by the key itself: a hit costs no hashing (the cache is memory, as the key in the request is).
    const owner = await this.cached(key, () => findKeyOwner(this.ports.db, hashApiKey(key)));
    if (!owner || (owner.limits.expiresAt !== null && hasExpired(owner.limits, nowIso(this.ports.clock)))) return null;
    this.touch(owner.keyId);
    return owner;
  }

  /**
   * A live, unexpired key by its S3 access key id, with the sealed secret
   * its requests are signed with. Cached like the other lookups, so a
   * revocation ends it on every instance at once.
   */
  async byAccessKeyId(accessKeyId: string): Promise<(KeyOwner & { sealedSecret: string }) | null> {
    if (!looksLikeAccessKeyId(accessKeyId)) return null;
    const owner = await this.cached(`@${accessKeyId}`, () => findKeyOwnerByAccessKeyId(this.ports.db, accessKeyId));
    if (!owner || !hasSealedSecret(owner) || (owner.limits.expiresAt !== null && hasExpired(owner.limits, nowIso(this.ports.clock)))) return null;
    this.touch(owner.keyId);
    return owner;
  }

  /** A live, unexpired key by id: the signer of a signed url. */
  async byId(keyId: number): Promise<KeyOwner | null> {
    const owner = await this.cached(`#${keyId}`, () => findKeyOwnerById(this.ports.db, keyId));
    return owner && (owner.limits.expiresAt === null || !hasExpired(owner.limits, nowIso(this.ports.clock))) ? owner : null;
  }

  /**
   * The same answer from the cache alone, with no promise (the hot path of a
   * signed url): the owner, null for a key that has expired, undefined when it
   * must be looked up with byId.
   */
  cachedById(keyId: number): KeyOwner | null | undefined {
    const owner = this.ports.caches.keyOwners?.get(`#${keyId}`);
    if (!owner) return undefined;
    return owner.limits.expiresAt === null || !hasExpired(owner.limits, nowIso(this.ports.clock)) ? owner : null;
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
    const now = this.ports.clock.now();
    if (now - (this.lastWritten.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastWritten.set(keyId, now);
    touchKey(this.ports.db, keyId, new Date(now).toISOString()).catch(() => this.lastWritten.delete(keyId));
  }
}
