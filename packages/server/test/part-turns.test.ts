/**
 * The parts of one multipart upload are read one at a time (domain/part-turns.ts):
 * a part's turn comes when the part before it has been read, its body ended or
 * failed, when it stalls (its connection brings nothing for a few ms while it
 * is read), or after at most 250 ms; other uploads' parts never wait.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readingTurn } from '../src/domain/part-turns.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A turn being waited for, and whether it has come. */
function waiting(uploadId: string, body: PassThrough, received?: () => number) {
  const state = { came: false, turn: readingTurn(uploadId, body, received) };
  void state.turn.then(() => (state.came = true));
  return state;
}

describe('reading turns of multipart parts', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a part is read once the one before it has been read to its end, in the order they came', async () => {
    const bodies = [new PassThrough(), new PassThrough(), new PassThrough()];
    await readingTurn('upload-a', bodies[0]!);
    const second = waiting('upload-a', bodies[1]!);
    const third = waiting('upload-a', bodies[2]!);
    await tick();
    expect([second.came, third.came]).toEqual([false, false]);

    bodies[0]!.end('bytes');
    bodies[0]!.resume();
    await second.turn;
    await tick();
    expect([second.came, third.came]).toEqual([true, false]);

    // A body that fails ends its turn too.
    bodies[1]!.destroy(new Error('connection reset'));
    await third.turn;
    expect(third.came).toBe(true);
    (await third.turn).release();
  });

  it("another upload's parts do not wait", async () => {
    await readingTurn('upload-b', new PassThrough());
    const other = waiting('upload-c', new PassThrough());
    await tick();
    expect(other.came).toBe(true);
  });

  it('release() gives the turn away at once (a part refused before its body ends)', async () => {
    const first = await readingTurn('upload-d', new PassThrough());
    const second = waiting('upload-d', new PassThrough());
    await tick();
    expect(second.came).toBe(false);
    first.release();
    await second.turn;
    expect(second.came).toBe(true);
  });

  it('a part whose predecessor stalls waits 250 ms at most', async () => {
    vi.useFakeTimers();
    await readingTurn('upload-e', new PassThrough());
    const second = waiting('upload-e', new PassThrough());
    await vi.advanceTimersByTimeAsync(249);
    expect(second.came).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(second.came).toBe(true);
  });

  it('a part whose predecessor stalls while being read starts reading, and one that keeps bringing bytes does not', async () => {
    const bytes = { first: 0 };
    await readingTurn('upload-f', new PassThrough(), () => bytes.first);
    const second = waiting('upload-f', new PassThrough());
    // The first part's connection keeps bringing bytes: the second waits.
    for (let i = 0; i < 10; i++) {
      bytes.first += 1000;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(second.came).toBe(false);
    // Then nothing comes for a while (the client is busy): the second starts.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(second.came).toBe(true);
    (await second.turn).release();
  });

  it('a part counts as stalled only while it is being read, and not while it brings bytes', async () => {
    const first = await readingTurn('upload-g', new PassThrough());
    // The second brings nothing, but it is still waiting for the first (which has no byte count): not stalled.
    const second = waiting('upload-g', new PassThrough(), () => 0);
    const third = waiting('upload-g', new PassThrough());
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect([second.came, third.came]).toEqual([false, false]);
    // Once the second is read and brings nothing, the third starts.
    first.release();
    await second.turn;
    await third.turn;
    expect(third.came).toBe(true);
    (await second.turn).release();
    (await third.turn).release();
  });
});
