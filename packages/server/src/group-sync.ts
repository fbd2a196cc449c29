/**
 * Group commit for fsync-like operations. A caller needs a flush that starts
 * after its own write. If one is already running it may have started before
 * that write, so the caller waits for the next one, which every caller
 * arriving meanwhile shares: under load one flush covers many writes, never
 * fewer than each needs. Used for directory fsyncs (fs blob store) and for
 * the SQLite write-ahead log.
 */
export class GroupSync {
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  constructor(private readonly flush: () => Promise<void>) {}

  /** Resolves once a flush that started after this call has finished. */
  sync(): Promise<void> {
    if (!this.running) return this.start();
    this.next ??= this.running
      .catch(() => {})
      .then(() => {
        this.next = null;
        return this.start();
      });
    return this.next;
  }

  private start(): Promise<void> {
    const running = this.flush().finally(() => {
      if (this.running === running) this.running = null;
    });
    this.running = running;
    return running;
  }
}
