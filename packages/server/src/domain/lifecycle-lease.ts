/**
 * Running the lifecycle sweep on one instance at a time: a lease row in the
 * database (both dialects, so embedded and scaled alike), taken before a
 * pass, renewed between its batches and given back after it. An instance
 * that dies holding it loses it when it lapses; one that cannot renew it
 * stops at the next batch.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { releaseLease, takeLease } from '../db/repositories/bucket-lifecycle.js';
import { sweepLifecycle, type SweepTally } from './lifecycle-sweep.js';
import type { StoragePorts } from './ports.js';

const LEASE_NAME = 'lifecycle-sweep';
/** How long a lease holds without renewal: far longer than one batch takes. */
const LEASE_MS = 60_000;

export interface LifecycleRunOptions {
  daySeconds: number;
  /** Milliseconds to wait at least between batches, so requests get the database in between. */
  pauseMs: number;
  /**
   * How long to rest after a batch, as a multiple of the time it took: 3 keeps the sweep to a quarter of the
   * process's time, so requests served beside it keep most of it (bench/lifecycle-sweep.mjs measures this).
   */
  restFactor: number;
  /** True once the server is closing: the pass stops at the next batch. */
  closing: () => boolean;
  /** Told of a bucket whose rules failed this pass; the pass goes on (SweepOptions.bucketFailed). */
  bucketFailed?: (bucketId: number, error: unknown) => void;
}

/** A name for one instance as a lease holder (each app has its own, even two in one process). */
export const leaseHolderName = (): string => randomUUID();

/** One pass of the sweep if no other instance is sweeping; null when one is. */
export async function runLifecycleSweep(ports: StoragePorts, holder: string, options: LifecycleRunOptions): Promise<SweepTally | null> {
  const renew = () => {
    const now = ports.clock.now();
    return takeLease(ports.db, LEASE_NAME, holder, now, now + LEASE_MS);
  };
  if (!(await renew())) return null;
  let batchStart = performance.now();
  try {
    return await sweepLifecycle(ports, {
      daySeconds: options.daySeconds,
      ...(options.bucketFailed !== undefined ? { bucketFailed: options.bucketFailed } : {}),
      between: async () => {
        const worked = performance.now() - batchStart;
        await sleep(Math.max(options.pauseMs, worked * options.restFactor));
        batchStart = performance.now();
        return !options.closing() && (await renew());
      },
    });
  } finally {
    await releaseLease(ports.db, LEASE_NAME, holder);
  }
}
