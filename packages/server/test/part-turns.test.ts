/**
 * The parts of one multipart upload are read one at a time (domain/part-turns.ts):
 * a part's turn comes when the part before it has been read, its body ended or
 * failed, or after at most 250 ms; other uploads' parts never wait.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readingTurn } from '../src/domain/part-turns.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A turn being waited for, and whether it has come. */
function waiting(uploadId: string, body: PassThrough) {
  const state = { came: false, turn: readingTurn(uploadId, body) };
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
});
