/**
 * W4 "hook" and "dead" (issue 39): PUTs into a bucket with a webhook, to a
 * receiver that answers at once (204) or to a dead endpoint that accepts the
 * connection and never answers (every delivery waits for WEBHOOK_TIMEOUT_MS,
 * then backs off). Uploads must not notice either: delivery is off the
 * request's path. The receivers run in this process (the load core).
 */
import http from 'node:http';
import { makeBucket } from './pail-api.mjs';

let receivers;

/** The two endpoints, started once: `live` answers 204, `dead` never answers. */
export async function hookReceivers() {
  receivers ??= (async () => {
    const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}/hook`)));
    const live = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(204).end());
    });
    // Accepts and reads, never answers: the deliverer's time limit ends each attempt.
    const dead = http.createServer((request) => request.resume());
    live.unref();
    dead.unref();
    return { live: await listen(live), dead: await listen(dead) };
  })();
  return receivers;
}

/** A fresh bucket for repetition `rep` with a webhook on every event to the `kind` endpoint. */
export async function hookedBucket(target, rep, kind) {
  const name = `bench-w4${kind}-r${rep}`;
  if (target.w4Buckets.has(name)) return target.w4Buckets.get(name);
  // Once again after a network error: a kept-alive connection the server closed as idle (IDLE_TIMEOUT_SECONDS) may be reused.
  const again = async (call) => call().catch(() => call());
  const bucket = await again(() => makeBucket(target.server.base, target.key, name, 'private'));
  const url = (await hookReceivers())[kind];
  const response = await again(() =>
    fetch(`${target.server.base}/api/v1/buckets/${bucket}/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': target.key, 'content-type': 'application/json' },
      body: JSON.stringify({ url, events: ['object.created', 'object.removed'] }),
    }),
  );
  if (response.status !== 201) throw new Error(`adding a webhook failed: ${response.status} ${await response.text()}`);
  target.w4Buckets.set(name, bucket);
  return bucket;
}
