/**
 * Joining a stream to a stage its bytes pass through (a byte counter, a hash,
 * a check), so that every failure has an owner: a stage that fails before
 * anyone reads it (a refusal while its reader is still a few awaits away)
 * keeps the failure for that reader instead of emitting an 'error' nobody
 * hears, which would end the process.
 */
import { pipeline, type Duplex, type Readable } from 'node:stream';

/** The failure of a body whose client went away before it ended, as Node reports it (http/client-errors.ts isClientAbort knows it). */
export const clientGone = (): Error => Object.assign(new Error('aborted'), { code: 'ECONNRESET' });

/**
 * A request's body (or a part of one) through `stage`. The body failing (a
 * cut connection) fails the stage. The stage failing or closed early (a
 * refusal: over the cap, a bad checksum) stops taking the body, whose rest is
 * read and dropped so the connection can carry the answer; the body itself is
 * left open, as stream.pipeline would not: destroying a request destroys the
 * socket the answer goes out on.
 */
export function bodyThrough<T extends Duplex>(body: Readable, stage: T): T {
  // A body that already failed (its client went away while the request was authorized) fails the stage at once.
  if (body.destroyed) {
    stage.on('error', () => {});
    stage.destroy(body.errored ?? clientGone());
    return stage;
  }
  body.on('error', (error) => stage.destroy(error));
  // The failure stays on the stage (destroyed, errored) for its reader to meet.
  stage.on('error', () => {});
  stage.on('close', () => {
    body.unpipe(stage);
    if (!body.readableEnded && !body.destroyed) body.resume();
  });
  // The body flows once the stage's reader starts reading, not before: a client that waits for 100 Continue is
  // told to send only then (http/expectations.ts), after whatever may refuse the request without its body.
  const startWhenRead = (event: string | symbol) => {
    if (event !== 'data' && event !== 'readable') return;
    stage.off('newListener', startWhenRead);
    body.pipe(stage);
  };
  stage.on('newListener', startWhenRead);
  return stage;
}

/**
 * A stream of the server's own (a stored blob being read) through `stage`, by
 * stream.pipeline: either failing, or the stage's reader giving up, destroys
 * both, so a read the reader no longer wants never stays open.
 */
export function sourceThrough<T extends Duplex>(source: Readable, stage: T): T {
  pipeline(source, stage, ignore);
  return stage;
}

// The failure is the stage's reader's to meet (pipeline destroys the stage with it).
function ignore(): void {}
