/** Liveness and readiness probes. */
import { sql } from 'kysely';
import { errors } from '../domain/errors.js';
import type { AppContext } from '../http/context.js';
import { addRoute, type Scope } from '../http/route.js';

const tag = 'Operations';

export function registerHealthRoutes(app: Scope, ctx: AppContext): void {
  addRoute(app, { operation: 'healthz', routes: ['GET /healthz'], tag, schema: {}, handler: async () => ({ status: 'ok' }) });
  addRoute(app, {
    operation: 'readyz',
    routes: ['GET /readyz'],
    tag,
    schema: {},
    handler: async (request) => {
      try {
        await sql`select 1`.execute(ctx.db);
        await ctx.storage.blobs.check();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        throw errors.unavailable('Not ready: a backing store is unreachable');
      }
      return { status: 'ok' };
    },
  });
}
