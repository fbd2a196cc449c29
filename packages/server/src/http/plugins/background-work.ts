/**
 * Work the server does on its own: finish bucket deletions an earlier
 * process did not, collect garbage, prune delivered webhook events, and remove expired multipart and
 * resumable uploads now and then (the uploads also at start, since a process may not live 15
 * minutes), apply lifecycle rules (lifecycle-sweeps.ts), and close every store when the app closes.
 */
import fp from 'fastify-plugin';
import { resumePurges } from '../../domain/bucket-deletion.js';
import { collectGarbage } from '../../domain/garbage-collection.js';
import { pruneDeliveredEvents } from '../../domain/webhook-deliverer.js';
import { expireMultipartUploads } from '../../domain/multipart-expiry.js';
import { expireResumableUploads, RESUMABLE_IDLE_SECONDS } from '../../domain/resumable-uploads.js';
import type { AppContext } from '../context.js';
import { startLifecycleSweeps } from './lifecycle-sweeps.js';
import type { Scope } from '../route.js';

const GC_INTERVAL_MS = 15 * 60 * 1000;

export const backgroundWork = fp(
  async (app: Scope, ctx: AppContext) => {
    const gc = () =>
      Promise.all([
        collectGarbage(ctx.storage, ctx.config.gcGraceSeconds).catch((error: unknown) => app.log.warn({ err: error }, 'garbage collection failed')),
        pruneDeliveredEvents(ctx.storage.db, ctx.config.webhooks.keepDeliveredDays).catch((error: unknown) =>
          app.log.warn({ err: error }, 'pruning delivered webhook events failed'),
        ),
      ]);
    const expire = () =>
      Promise.all([
        expireMultipartUploads(ctx.storage, ctx.config.multipartExpirySeconds).catch((error: unknown) =>
          app.log.warn({ err: error }, 'removing expired multipart uploads failed'),
        ),
        expireResumableUploads(ctx.storage, RESUMABLE_IDLE_SECONDS).catch((error: unknown) =>
          app.log.warn({ err: error }, 'removing expired resumable uploads failed'),
        ),
      ]);
    const purging = resumePurges(ctx.storage).catch((error: unknown) => app.log.warn({ err: error }, 'resuming bucket deletions failed'));
    const expiring = expire();
    // Webhook deliveries (issue 39): from the outbox, never on a request's path.
    ctx.deliverer.start();
    // Expired uploads first: the blobs their removal leaves behind (if deleting them failed) are then garbage.
    const timer = setInterval(() => void expire().then(gc), GC_INTERVAL_MS);
    timer.unref();
    const stopLifecycle = startLifecycleSweeps(app, ctx);
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await ctx.deliverer.stop();
      await Promise.all([purging, expiring, stopLifecycle()]);
      await ctx.close();
    });
  },
  { name: 'pail-background-work' },
);
