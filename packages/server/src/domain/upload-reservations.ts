/**
 * Uploads in flight hold their bytes against the owner's cap from the moment
 * they start, so several stalled uploads can never together fill more than the
 * cap allows, and at most MAX_UPLOADS_PER_USER of a user's large uploads run at
 * once. A body of known length holds it all at the start (what cannot fit is
 * refused before a byte is stored); one of unknown length holds more as it
 * streams. The reservation is given back when the upload ends; one whose
 * process died lapses a few minutes after it was last renewed.
 */
import { randomUUID } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { bodyThrough } from '../blob/joined-streams.js';
import type { Db } from '../db/schema.js';
import { growReservation, releaseReservation, renewReservation } from '../db/repositories/upload-reservations.js';
import { errors } from './errors.js';
import type { StoragePorts } from './ports.js';
import type { Quota } from './quota.js';

const LEASE_MS = 2 * 60 * 1000;
const RENEW_EVERY_MS = 30 * 1000;
/** A body of unknown length reserves this much more each time it outgrows what it holds. */
const GROWTH_BYTES = 8 * 1024 * 1024;

export interface ReservationRules {
  quota: Quota;
  maxUploads: number;
}

export class UploadReservation {
  private held: number;
  private readonly renewal: NodeJS.Timeout;

  private constructor(
    private readonly db: Db,
    readonly id: string,
    private readonly userId: number,
    private readonly rules: ReservationRules,
    bytes: number,
  ) {
    this.held = bytes;
    this.renewal = setInterval(() => void renewReservation(db, id, leaseEnd()).catch(() => {}), RENEW_EVERY_MS);
    this.renewal.unref();
  }

  /** Holds `bytes` for a new upload, or refuses at once (over the cap: 409; too many uploads: 429). */
  static async take(ports: Pick<StoragePorts, 'db' | 'writes'>, userId: number, bytes: number, rules: ReservationRules): Promise<UploadReservation> {
    const id = randomUUID();
    const refusal = await ports.writes.reserveUpload({
      id,
      userId,
      bytes,
      quota: rules.quota,
      maxUploads: rules.maxUploads,
      now: new Date().toISOString(),
      expiresAt: leaseEnd(),
    });
    if (refusal === 'over-cap') throw rules.quota.exceeded();
    if (refusal === 'too-many') throw errors.tooManyUploads(rules.maxUploads);
    return new UploadReservation(ports.db, id, userId, rules, bytes);
  }

  /**
   * The body, passing through unchanged while this reservation grows to hold
   * every byte beyond `credit` (the bytes of the version it replaces). A byte
   * that cannot be held fails the stream with the storage-limit error.
   */
  meter(body: Readable, credit: number): Readable {
    let seen = 0;
    const meter = new Transform({
      transform: (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) => {
        seen += chunk.length;
        const needed = seen - credit;
        if (needed <= this.held) return done(null, chunk);
        this.grow(needed).then(
          () => done(null, chunk),
          (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
        );
      },
    });
    return bodyThrough(body, meter);
  }

  private async grow(needed: number): Promise<void> {
    // Ahead of the stream when that fits, else just what it needs.
    for (const target of [needed + GROWTH_BYTES, needed]) {
      const more = target - this.held;
      const grown = await growReservation(this.db, {
        id: this.id,
        userId: this.userId,
        bytes: more,
        quota: this.rules.quota,
        now: new Date().toISOString(),
        expiresAt: leaseEnd(),
      });
      if (grown) {
        this.held = target;
        return;
      }
    }
    throw this.rules.quota.exceeded();
  }

  async release(): Promise<void> {
    clearInterval(this.renewal);
    // Best effort: a reservation left behind lapses with its lease.
    await releaseReservation(this.db, this.id).catch(() => {});
  }
}

const leaseEnd = (): string => new Date(Date.now() + LEASE_MS).toISOString();
