/**
 * Keys with limits (decisions.md): which buckets a key may use, which
 * permissions it has, until when. A session, and a key without limits, may
 * do everything its owner may.
 */
import { PERMISSIONS, type Permission } from '@pail/shared';
import type { KeyLimits } from '../db/repositories/api-keys.js';
import { errors } from './errors.js';

export type { KeyLimits };

export const NO_LIMITS: KeyLimits = { buckets: null, permissions: PERMISSIONS, expiresAt: null };

export const isUnlimited = (limits: KeyLimits): boolean => limits.buckets === null && limits.permissions.length === PERMISSIONS.length;

export const hasExpired = (limits: KeyLimits, nowIso: string): boolean => limits.expiresAt !== null && limits.expiresAt <= nowIso;

export function requirePermission(limits: KeyLimits, permission: Permission): void {
  if (!limits.permissions.includes(permission)) throw errors.forbidden(`This API key does not allow ${permission}`);
}

/** Whether the key may use this bucket; a bucket it may not use is, for it, a bucket that does not exist. */
export const mayUseBucket = (limits: KeyLimits, bucketId: number): boolean => limits.buckets === null || limits.buckets.includes(bucketId);

export function requireBucket(limits: KeyLimits, bucketId: number): void {
  if (!mayUseBucket(limits, bucketId)) throw errors.bucketNotFound();
}

/** A key limited to some buckets cannot make one: the new bucket would lie outside its own limits. */
export function requireMayCreateBuckets(limits: KeyLimits): void {
  requirePermission(limits, 'manage');
  if (limits.buckets !== null) throw errors.forbidden('This API key is limited to some buckets, so it cannot create buckets');
}

export interface KeyLimitsInput {
  buckets?: number[] | null;
  permissions?: Permission[] | null;
  expires_at?: string | null;
  expires_in?: number | null;
}

/** The limits asked for at creation, checked; `ownBucketIds` are the owner's live buckets. */
export function parseKeyLimits(input: KeyLimitsInput, ownBucketIds: ReadonlySet<number>, now: Date): KeyLimits {
  const buckets = input.buckets ?? null;
  if (buckets !== null) {
    const unknown = buckets.find((id) => !ownBucketIds.has(id));
    if (unknown !== undefined) throw errors.validation(`buckets: bucket ${unknown} not found`);
  }
  const expiresAt = parseExpiry(input, now);
  const permissions = input.permissions ?? PERMISSIONS;
  return {
    buckets: buckets === null ? null : [...new Set(buckets)].sort((a, b) => a - b),
    permissions: PERMISSIONS.filter((p) => permissions.includes(p)),
    expiresAt,
  };
}

function parseExpiry(input: KeyLimitsInput, now: Date): string | null {
  const { expires_at: at, expires_in: seconds } = input;
  if (at != null && seconds != null) throw errors.validation('Give expires_at or expires_in, not both');
  if (seconds != null) return new Date(now.getTime() + seconds * 1000).toISOString();
  if (at == null) return null;
  const time = Date.parse(at);
  if (Number.isNaN(time)) throw errors.validation('expires_at must be an ISO 8601 date and time');
  if (time <= now.getTime()) throw errors.validation('expires_at must be in the future');
  return new Date(time).toISOString();
}
