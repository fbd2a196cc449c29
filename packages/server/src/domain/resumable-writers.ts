/**
 * One writer per resumable upload (decisions.md, "Resumable uploads"): a
 * request that writes an upload's bytes, reads its offset or ends it
 * (resumable-uploads.ts endResumableUpload) holds the upload. A newer request asks the holder to stop, as tus servers do (a
 * client that resumes has given up on its older request, whose connection
 * may be half open and never end by itself): the holder stops reading its
 * body, records what it flushed, and lets go; the newer one then reads the
 * recorded offset. So bytes are written by one request at a time, at the
 * offset it checked, and HEAD reports an offset a resumed PATCH starts from.
 *
 * Within a process, a map of holders. On PostgreSQL, where several instances
 * share uploads, the holder also takes a lease in the upload's row, renewed
 * while it writes; a request on another instance asks it to stop through
 * that row (db/repositories/resumable-uploads.ts), and a lease whose
 * instance died runs out.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/schema.js';
import { askResumableWriter, claimResumableWriter, releaseResumableWriter, renewResumableWriter } from '../db/repositories/resumable-uploads.js';
import { errors } from './errors.js';

/** How long a request waits for the holder to let go before it is refused (409: the client asks for the offset again). */
const WAIT_MS = 30_000;
/** A lease not renewed for this long is free to take (its instance stopped). */
const LEASE_MS = 15_000;
/** How often a holder renews its lease, and so how soon it hears it was asked to stop. */
const RENEW_MS = 500;
/** How often a request waiting for another instance's holder tries again. */
const POLL_MS = 100;

interface Holder {
  stop: () => void;
  released: Promise<void>;
}

/** Lets go of the upload. */
export type Release = () => Promise<void>;

/** A request's place in line: when it arrived (arrival()), and whether it writes bytes (a write that a newer request overtook is refused). */
export interface Turn {
  arrival: number;
  writes: boolean;
}

export class ResumableWriters {
  private readonly holders = new Map<string, Holder>();
  /** The latest arrival that held each upload; best effort (an upload forgotten here is not checked). */
  private readonly latest = new LRUCache<string, number>({ max: 10_000 });
  private arrivals = 0;

  /** `shared`: the database instances share (PostgreSQL), for the lease; null when this process is the only one. */
  constructor(private readonly shared: Db | null) {}

  /** A request's arrival, taken as soon as it is received: a cut request may reach hold() after a newer one did. */
  arrival(): number {
    return ++this.arrivals;
  }

  /**
   * Holds upload `id` for one request, once any request holding it has
   * stopped (asked to by calling its `stop`). `stop` is this request's own:
   * it must end its body's read soon (a newer request wants the upload).
   * A write is refused when a request that arrived after it held the upload
   * first (in this process): that request ended it, as it would have had it
   * come in time. `gone`: the request's client went away; it stops waiting.
   */
  async hold(id: string, stop: () => void, turn?: Turn, gone?: AbortSignal): Promise<Release> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      if (turn?.writes && turn.arrival < (this.latest.get(id) ?? 0)) throw overtaken();
      if (gone?.aborted) throw busy();
      const holder = this.holders.get(id);
      if (!holder) break;
      holder.stop();
      if (!(await releasedBy(holder, deadline, gone))) throw busy();
    }
    if (turn && turn.arrival > (this.latest.get(id) ?? 0)) this.latest.set(id, turn.arrival);
    let released!: () => void;
    let asked = false;
    const me: Holder = {
      stop: () => {
        asked = true;
        stop();
      },
      released: new Promise((resolve) => (released = resolve)),
    };
    this.holders.set(id, me);
    const letGo = () => {
      if (this.holders.get(id) === me) this.holders.delete(id);
      released();
    };
    if (!this.shared) return async () => letGo();
    try {
      const lease = await this.lease(this.shared, id, stop, deadline, () => asked || gone?.aborted === true);
      return async () => {
        await lease().catch(() => {});
        letGo();
      };
    } catch (error) {
      letGo();
      throw error;
    }
  }

  /** Takes the upload's lease in its row, asking another instance's holder to stop; returns its release. */
  private async lease(db: Db, id: string, stop: () => void, deadline: number, giveUp: () => boolean): Promise<Release> {
    const writer = randomBytes(12).toString('hex');
    for (;;) {
      // A newer request in this process wants the upload (it waits for this one), or this one's client went away: it stops waiting.
      if (giveUp()) throw overtaken();
      const claimed = await claimResumableWriter(db, id, writer, Date.now() + LEASE_MS, Date.now());
      // An upload that ended: nothing to hold; the request finds it gone.
      if (claimed === 'gone') return async () => {};
      if (claimed === 'claimed') break;
      await askResumableWriter(db, id);
      if (Date.now() >= deadline) throw busy();
      await sleep(POLL_MS);
    }
    let stopped = false;
    const renewing = setInterval(() => {
      renewResumableWriter(db, id, writer, Date.now() + LEASE_MS).then(
        ({ held, wanted }) => {
          if ((!held || wanted) && !stopped) {
            stopped = true;
            stop();
          }
        },
        // The database did not answer: the lease may run out, and a newer request then asks again.
        () => {},
      );
    }, RENEW_MS);
    renewing.unref();
    return async () => {
      // A renewal still under way must not stop a request that is done (its answer is on its way).
      stopped = true;
      clearInterval(renewing);
      await releaseResumableWriter(db, id, writer);
    };
  }
}

/** Whether `holder` let go before `deadline` (false at once when `gone` aborts). */
async function releasedBy(holder: Holder, deadline: number, gone?: AbortSignal): Promise<boolean> {
  const left = deadline - Date.now();
  if (left <= 0) return false;
  const timer = new AbortController();
  const signal = gone ? AbortSignal.any([timer.signal, gone]) : timer.signal;
  try {
    return await Promise.race([holder.released.then(() => true), sleep(left, false, { ref: false, signal }).catch(() => false)]);
  } finally {
    timer.abort();
  }
}

const overtaken = () => errors.offsetMismatch('A newer request on this upload came first; ask for its offset again');
const busy = () => errors.offsetMismatch('Another request is still writing this upload; ask for its offset again');
