/**
 * Batches work by key: while a batch for a key is being processed, further
 * items for that key queue, and run together as the next batch. Different keys
 * proceed independently. `process` answers every item of a batch (a result or
 * an error each); if it throws, every item of the batch gets that error.
 */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

export class KeyedBatcher<K, T, R> {
  private readonly queues = new Map<K, Pending<T, R>[]>();

  constructor(
    private readonly process: (key: K, items: T[]) => Promise<Outcome<R>[]>,
    private readonly maxBatch = Number.POSITIVE_INFINITY,
  ) {}

  run(key: K, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      this.queues.set(key, [{ item, resolve, reject }]);
      void this.drain(key);
    });
  }

  private async drain(key: K): Promise<void> {
    // Items arriving in this turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    for (;;) {
      const queue = this.queues.get(key)!;
      if (queue.length === 0) {
        this.queues.delete(key);
        return;
      }
      const batch = queue.splice(0, this.maxBatch);
      let outcomes: Outcome<R>[];
      try {
        outcomes = await this.process(
          key,
          batch.map((pending) => pending.item),
        );
      } catch (error) {
        outcomes = batch.map(() => ({ ok: false, error }));
      }
      batch.forEach((pending, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(outcome.error);
      });
    }
  }
}
