/**
 * How a put's bytes reach its temporary file (fs-store.ts): copied into two
 * reusable 512 KiB slabs, one written while the other fills. Few thread-pool
 * round trips, at most 1 MiB held per upload, and the caller's chunks die
 * young (holding them across a write would promote them to the old
 * generation, where their memory waits for a full GC: +32 MiB of RSS per
 * large upload, measured).
 *
 * Why 512 KiB: every write is a round trip to the thread pool (wake a pool
 * thread, switch to it, wake the event loop again), and with the server on
 * one core those switches were a large share of a 1 GiB upload's CPU beside
 * the kernel's copy into the page cache. 1 GiB uploads on one core, the same
 * server build but for this size, interleaved (bench/README.md, "W5"):
 * 128 KiB writes 538 MB/s, 512 KiB 618 (median of 10 each, the bare-Node
 * baseline 680); the event loop's system time fell by ~0.1 s per GiB and the
 * pool's by more (64 KiB writes: 1.39 s of CPU per GiB against 1.10).
 *
 * Why the first slab is small, besides small files: the kernel puts a write
 * into page-cache folios no larger than the write and no larger than the
 * alignment of its file offset, and on this host (Linux 6.18, ext4, a VM)
 * copying into folios of 512 KiB or more is slow: 1 GiB in aligned 512 KiB
 * writes took 0.76–0.97 s of kernel time against 0.17–0.26 in 64 to 256 KiB
 * writes (writeSync, page cache emptied first; perf puts it all in
 * copy_folio_from_iter_atomic). After the 64 KiB first write every 512 KiB
 * write starts at an odd multiple of 64 KiB, so its folios stay at 256 KiB
 * or less (0.18 s again). 1 MiB writes reach 512 KiB folios: that is why
 * they were slower (393 MB/s against 614, 6 uploads each).
 *
 * Writing the chunks by reference instead (writev, no copy) was measured too:
 * no difference in CPU or speed for a 1 GiB upload (a 1 GiB copy costs about
 * 0.03 s), so the simpler single path stays.
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

  constructor(private readonly file: FileHandle) {}

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
    if (this.used > 0) await writeAll(this.file, this.slabs[this.filling]!, this.used);
  }

  private async writeSlab(): Promise<void> {
    await this.inFlight;
    this.inFlight = background(writeAll(this.file, this.slabs[this.filling]!, this.used));
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
    if (this.unsynced >= SYNC_EVERY_BYTES) {
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

/** Writes `length` bytes of `buffer`, however many calls the kernel needs. */
async function writeAll(file: FileHandle, buffer: Buffer, length: number): Promise<void> {
  for (let offset = 0; offset < length; ) {
    offset += (await file.write(buffer, offset, length - offset)).bytesWritten;
  }
}
