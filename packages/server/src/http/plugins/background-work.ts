/**
 * Work the server does on its own: finish bucket deletions an earlier
 * process did not, collect garbage and remove expired multipart and
 * resumable uploads now and then (the uploads also at start, since a process may not live 15
 * minutes), and close every store when the app closes.
 */
import fp from 'fastify-plugin';
import { resumePurges } from '../../domain/bucket-deletion.js';
import { collectGarbage } from '../../domain/garbage-collection.js';
import { expireMultipartUploads } from '../../domain/multipart-expiry.js';
import { expireResumableUploads, RESUMABLE_IDLE_SECONDS } from '../../domain/resumable-uploads.js';
import type { AppContext } from '../context.js';
import type { Scope } from '../route.js';

const GC_INTERVAL_MS = 15 * 60 * 1000;

export const backgroundWork = fp(
  async (app: Scope, ctx: AppContext) => {
    const gc = () =>
      collectGarbage(ctx.storage, ctx.config.gcGraceSeconds).catch((error: unknown) => app.log.warn({ err: error }, 'garbage collection failed'));
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
    // Expired uploads first: the blobs their removal leaves behind (if deleting them failed) are then garbage.
    const timer = setInterval(() => void expire().then(gc), GC_INTERVAL_MS);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await Promise.all([purging, expiring]);
      await ctx.close();
    });
  },
  { name: 'pail-background-work' },
);
