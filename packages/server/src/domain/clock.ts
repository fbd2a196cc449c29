/**
 * The time credentials and uploads expire by. The server reads the system
 * clock; tests build the app with one they move forward (buildApp's clock),
 * so an expiry is shown without waiting for it.
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** ISO 8601 timestamps, the one format stored and returned. */
export const nowIso = (clock: Clock = systemClock): string => new Date(clock.now()).toISOString();
