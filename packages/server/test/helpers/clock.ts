/**
 * The clock a test server's expiries are decided by (domain/clock.ts): the
 * system's time, plus however far the test has moved it on. Moving it shows
 * a key or a signed url expiring without waiting for it.
 */
import type { Clock } from '../../src/domain/clock.js';

export class TestClock implements Clock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Moves the clock on by `ms` (back, when negative: something made now was made that long ago). */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
