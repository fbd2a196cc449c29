/**
 * The lifecycle sweep's schedule (domain/lifecycle-lease.ts): a pass every
 * LIFECYCLE_INTERVAL_SECONDS, never two at once in this process, and one
 * instance at a time across processes through the lease. background-work.ts
 * starts it and awaits its stop before the stores close.
 */
import { leaseHolderName, runLifecycleSweep } from '../../domain/lifecycle-lease.js';
import type { AppContext } from '../context.js';
import type { Scope } from '../route.js';

/** Between two batches of a pass: at least long enough for waiting requests to get the database first. */
const PAUSE_MS = 5;
/** After each batch, rest three times as long as it took: the sweep takes at most about a quarter of the process's time. */
const REST_FACTOR = 3;

/** Starts the schedule; the function returned stops it, resolving once a pass under way has stopped. */
export function startLifecycleSweeps(app: Scope, ctx: AppContext): () => Promise<void> {
  const holder = leaseHolderName();
  let closing = false;
  let running: Promise<unknown> | null = null;
  const pass = () => {
    if (running !== null || closing) return;
    running = runLifecycleSweep(ctx.storage, holder, {
      daySeconds: ctx.config.lifecycleDaySeconds,
      pauseMs: PAUSE_MS,
      restFactor: REST_FACTOR,
      closing: () => closing,
      bucketFailed: (bucketId, error) => app.log.warn({ err: error, bucketId }, "applying a bucket's lifecycle rules failed"),
    })
      .then((tally) => {
        if (tally !== null && Object.values(tally).some((count) => count > 0)) app.log.info(tally, 'lifecycle rules applied');
      })
      .catch((error: unknown) => app.log.warn({ err: error }, 'applying lifecycle rules failed'))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(pass, ctx.config.lifecycleIntervalSeconds * 1000);
  timer.unref();
  return async () => {
    closing = true;
    clearInterval(timer);
    await running;
  };
}
