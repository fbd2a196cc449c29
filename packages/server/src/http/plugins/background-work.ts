/**
 * Work the server does on its own: finish bucket deletions an earlier
 * process did not, collect garbage now and then, and close every store when
 * the app closes.
 */
import fp from 'fastify-plugin';
import { resumePurges } from '../../domain/bucket-deletion.js';
import { collectGarbage } from '../../domain/garbage-collection.js';
import type { AppContext } from '../context.js';
import type { Scope } from '../route.js';

const GC_INTERVAL_MS = 15 * 60 * 1000;

export const backgroundWork = fp(
  async (app: Scope, ctx: AppContext) => {
    const gc = () =>
      collectGarbage(ctx.storage, ctx.config.gcGraceSeconds).catch((error: unknown) => app.log.warn({ err: error }, 'garbage collection failed'));
    const purging = resumePurges(ctx.storage).catch((error: unknown) => app.log.warn({ err: error }, 'resuming bucket deletions failed'));
    const timer = setInterval(() => void gc(), GC_INTERVAL_MS);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await purging;
      await ctx.close();
    });
  },
  { name: 'pail-background-work' },
);
