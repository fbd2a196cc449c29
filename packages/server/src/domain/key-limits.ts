/**
 * Keys with limits (decisions.md): which buckets a key may use, which
 * permissions it has, until when, parsed when the key is made. A session,
 * and a key without limits, may do everything its owner may; what a key may
 * do is decided in authorize.ts.
 */
import { DEFAULT_PERMISSIONS, PERMISSIONS, type Permission } from '@pail/shared';
import type { KeyLimits } from '../db/repositories/api-keys.js';
import { errors } from './errors.js';

export type { KeyLimits };

/** A session's and the operator's: everything but bypassing GOVERNANCE retention, which only a key given bypass-governance may (object-lock.ts). */
export const NO_LIMITS: KeyLimits = { buckets: null, permissions: DEFAULT_PERMISSIONS, expiresAt: null };

export const hasExpired = (limits: KeyLimits, nowIso: string): boolean => limits.expiresAt !== null && limits.expiresAt <= nowIso;

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
  const permissions = input.permissions ?? DEFAULT_PERMISSIONS;
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
