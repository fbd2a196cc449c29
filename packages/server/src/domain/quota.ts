/**
 * The storage cap: one rule that every write asks, whatever its door (Pail
 * API, signed url, S3, tus) and wherever its bytes go (inline or the blob
 * store). It counts everything the owner holds: stored bytes, kept multipart
 * parts, resumable uploads and uploads in flight. db/ reads that holding under
 * the owner's lock, in the transaction that makes the write, and applies the
 * answer there (db/repositories/holdings.ts), so racing writes never pass the
 * cap together. Each decision is made here once, and both dialects' writes
 * ask it (db/repositories/ on PostgreSQL, db/object-writes/sqlite-holdings.ts).
 */
import type { Plan } from '@pail/shared';
import type { CapRule, Holding, HoldingAndUploads } from '../db/repositories/holdings.js';
import type { UserRow } from '../db/schema.js';
import { errors, type AppError } from './errors.js';
import type { StorageLimits } from './ports.js';
import { planOf } from './users.js';

export class Quota implements CapRule {
  constructor(
    readonly plan: Plan,
    readonly cap: number,
  ) {}

  /**
   * Whether a write adding `bytes` to what is held fits under the cap. One
   * that adds nothing (a smaller replacement, a completion of what is already
   * held) always does, so an owner over a lowered cap can still shrink.
   */
  fits(holding: Holding, bytes: number): boolean {
    return bytes <= 0 || holding.used + holding.reserved + holding.parts + holding.resumable + bytes <= this.cap;
  }

  /**
   * Why a new upload in flight may not hold `bytes` beside what is held: too
   * many uploads in flight (MAX_UPLOADS_PER_USER) is said before the cap.
   */
  reservationRefusal(held: HoldingAndUploads, wanted: { bytes: number; maxUploads: number }): 'too-many' | 'over-cap' | null {
    if (held.count >= wanted.maxUploads) return 'too-many';
    return this.fits(held, wanted.bytes) ? null : 'over-cap';
  }

  /** Why a part may not be kept: it adds its size less the part of that number it replaces, whose bytes are freed. */
  partRefusal(held: Holding, size: number, replacedSize: number): 'over-cap' | null {
    return this.fits(held, size - replacedSize) ? null : 'over-cap';
  }

  /** The refusal every door gives (409 on the Pail API, QuotaExceeded on S3). */
  exceeded(): AppError {
    return errors.storageLimit(this.plan, this.cap);
  }
}

/** The owner's plan and its cap. */
export function capOf(limits: Pick<StorageLimits, 'plans'>, owner: Pick<UserRow, 'plan'>): Quota {
  const plan = planOf(owner);
  return new Quota(plan, limits.plans[plan].storageBytes);
}
