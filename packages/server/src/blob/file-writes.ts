/**
 * How a put's bytes reach its temporary file (fs-store.ts): copied into two
 * reusable 512 KiB slabs, one written while the other fills. Large writes keep
 * the thread-pool round trips few, and copying lets the caller's chunks die
 * young (held across a write, they would reach V8's old generation and wait
 * for a full GC) while the upload holds only about 1 MiB; writing the chunks
 * by reference (writev) was no faster.
 *
 * The first slab is small (64 KiB), for small files and because it keeps every
 * later 512 KiB write off 512 KiB alignment: the kernel sizes page-cache folios
 * by a write's length and its offset's alignment, and copying into folios of
 * 512 KiB or more was slow on the host measured. See docs/performance.md.
 */
import type { FileHandle } from 'node:fs/promises';

/** Also keeps every later write off 512 KiB alignment (see above). */
const FIRST_SLAB_BYTES = 64 * 1024;
const SLAB_BYTES = 512 * 1024;
const SYNC_EVERY_BYTES = 32 * 1024 * 1024;

export class FileWrites {
  // Small files never need more than the first, small slab; the two large
  // ones appear once a file outgrows it.
  private slabs = [Buffer.allocUnsafeSlow(FIRST_SLAB_BYTES)];
  private filling = 0;
  private used = 0;
  private inFlight: Promise<void> = Promise.resolve();
  private unsynced = 0;
  private syncing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: FileHandle,
    /** How far writes may run ahead of the disk before a background flush starts (smaller: a shorter final flush). */
    private readonly syncEveryBytes = SYNC_EVERY_BYTES,
    /** Where in the file the bytes go, written there by position; null: at the file's own position, as it moves. */
    private position: number | null = null,
  ) {}

  /** Takes a copy of `chunk`; resolves when the caller may reuse or free it. */
  async add(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const slab = this.slabs[this.filling]!;
      const copied = chunk.copy(slab, this.used, offset);
      offset += copied;
      this.used += copied;
      if (this.used === slab.length) await this.writeSlab();
    }
  }

  /** Resolves when every byte added is written (not yet flushed to disk). */
  async finish(): Promise<void> {
    await this.inFlight;
    await this.syncing;
    if (this.used > 0) await this.write(this.slabs[this.filling]!, this.used);
  }

  /** Writes a slab's first `length` bytes where the file's bytes go next. */
  private write(slab: Buffer, length: number): Promise<void> {
    if (this.position === null) return writeAll(this.file, slab, length);
    const at = this.position;
    this.position += length;
    return writeAll(this.file, slab, length, at);
  }

  private async writeSlab(): Promise<void> {
    await this.inFlight;
    this.inFlight = background(this.write(this.slabs[this.filling]!, this.used));
    this.unsynced += this.used;
    if (this.slabs.length === 1) {
      // Outgrew the small slab (it may still be in flight, so it is not reused).
      this.slabs = [Buffer.allocUnsafeSlow(SLAB_BYTES), Buffer.allocUnsafeSlow(SLAB_BYTES)];
      this.filling = 0;
    } else {
      this.filling = 1 - this.filling;
    }
    this.used = 0;
    // Large files: let the disk write behind us as we go, so the final fsync
    // is short and the upload runs at disk speed rather than cache speed
    // followed by one long flush. One background sync at a time.
    if (this.unsynced >= this.syncEveryBytes) {
      this.unsynced = 0;
      await this.syncing;
      this.syncing = background(this.file.datasync());
    }
  }
}

/**
 * A write or sync that runs while the next bytes arrive. It is awaited before
 * the put completes, but it may fail (a full disk) while the put waits for
 * the client; until then nothing listens, and Node would end the whole
 * process for an unhandled rejection. Attaching a no-op handler keeps the
 * failure for the awaiting put to see.
 */
function background(work: Promise<void>): Promise<void> {
  work.catch(() => {});
  return work;
}

/** Writes `length` bytes of `buffer` (at `position`, else at the file's own position), however many calls the kernel needs. */
async function writeAll(file: FileHandle, buffer: Buffer, length: number, position?: number): Promise<void> {
  for (let offset = 0; offset < length;) {
    offset += (await file.write(buffer, offset, length - offset, position === undefined ? null : position + offset)).bytesWritten;
  }
}
