/**
 * The parts of one multipart upload are read one after another, in the order
 * they arrive, rather than side by side.
 *
 * Why: clients send several parts at once (lib-storage: 4) and prepare each
 * (hash, sign) before sending it. Read side by side, a batch of parts ends
 * together, its answers leave together, and the client then prepares the
 * next batch while the server waits: the two take turns instead of working
 * at once. Read one at a time, the answers are spread out, and the client
 * prepares a part while the server reads another. Each part's bytes are then
 * read at full speed; the waiting ones sit in the socket buffers meanwhile.
 *
 * The server never waits while bytes are ready, though: when the part being
 * read stalls (its connection brings nothing for a few milliseconds, as
 * when the client is busy preparing its next part), the next part starts
 * reading what its own connection holds. And no part waits for the one
 * before longer than MAX_WAIT_MS, so a slow sender holds the others up only
 * briefly. Only the reading takes turns (a part's flush, rename and row
 * overlap the next part's bytes). Turns are per process: parts sent to
 * different instances do not wait for each other.
 */
import { finished, type Readable } from 'node:stream';

const MAX_WAIT_MS = 250;
/** How often a waiting part looks at the progress of the part it waits for, and how many unchanged looks make a stall. */
const STALL_POLL_MS = 2;
const STALL_POLLS = 2;

interface Turn {
  /** Resolves when this part is done being read. */
  read: Promise<void>;
  /** Resolves when this part's turn has come (it is being read). */
  reading: Promise<void>;
  /** The bytes its connection has brought so far, when known. */
  received: (() => number) | undefined;
}

/** Per upload id, the turn of the part that arrived last. */
const lastTurn = new Map<string, Turn>();

/**
 * Waits for this upload's previous part to be read, to stall, or for
 * MAX_WAIT_MS, then holds the turn until `body` ends, fails or `release()`
 * is called. `received` gives the bytes the part's connection has brought
 * (its socket's bytesRead): without it, a stall goes unnoticed.
 */
export async function readingTurn(uploadId: string, body: Readable, received?: () => number): Promise<{ release(): void }> {
  const before = lastTurn.get(uploadId);
  let release!: () => void;
  let begin!: () => void;
  const turn: Turn = {
    read: new Promise<void>((resolve) => {
      release = () => {
        resolve();
        if (lastTurn.get(uploadId) === turn) lastTurn.delete(uploadId);
      };
    }),
    reading: new Promise<void>((resolve) => (begin = resolve)),
    received,
  };
  lastTurn.set(uploadId, turn);
  if (before !== undefined) {
    const waiting = new AbortController();
    await Promise.race([before.read, stalled(before, waiting.signal), delay(MAX_WAIT_MS, waiting.signal)]);
    waiting.abort();
  }
  begin();
  finished(body, () => release());
  return { release };
}

/** Resolves once `turn` is being read and its connection has brought nothing for STALL_POLLS looks; never without `received`. */
async function stalled(turn: Turn, signal: AbortSignal): Promise<void> {
  const received = turn.received;
  if (received === undefined) return new Promise<void>(() => {});
  await turn.reading;
  if (signal.aborted) return;
  return new Promise<void>((resolve) => {
    let last = received();
    let unchanged = 0;
    const timer = setInterval(() => {
      const now = received();
      unchanged = now === last ? unchanged + 1 : 0;
      last = now;
      if (unchanged >= STALL_POLLS || signal.aborted) {
        clearInterval(timer);
        resolve();
      }
    }, STALL_POLL_MS);
  });
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });
}
