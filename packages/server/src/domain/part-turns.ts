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
 * Only the reading takes turns (a part's flush, rename and row overlap the
 * next part's bytes), and no part waits for the one before longer than
 * MAX_WAIT_MS, so a slow sender holds the others up only briefly. Turns are
 * per process: parts sent to different instances do not wait for each other.
 */
import { finished, type Readable } from 'node:stream';

const MAX_WAIT_MS = 250;

/** Per upload id, the moment the part read last is done being read. */
const lastRead = new Map<string, Promise<void>>();

/** Waits for this upload's previous part to be read (at most MAX_WAIT_MS), then holds the turn until `body` ends, fails or `release()` is called. */
export async function readingTurn(uploadId: string, body: Readable): Promise<{ release(): void }> {
  const before = lastRead.get(uploadId);
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    release = () => {
      resolve();
      if (lastRead.get(uploadId) === done) lastRead.delete(uploadId);
    };
  });
  lastRead.set(uploadId, done);
  if (before !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([before, new Promise<void>((resolve) => (timer = setTimeout(resolve, MAX_WAIT_MS)))]);
    clearTimeout(timer);
  }
  finished(body, () => release());
  return { release };
}
