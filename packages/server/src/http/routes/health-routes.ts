/** Liveness and readiness probes. */
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { errors } from '../../domain/errors.js';

export function registerHealthRoutes(app: FastifyInstance, ctx: AppContext): void {
  const tags = ['Operations'];
  app.get('/healthz', { schema: { tags, summary: 'The process is up' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags, summary: 'The metadata store and the blob store answer' } }, async (request) => {
    try {
      await sql`select 1`.execute(ctx.db);
      await ctx.blobs.check();
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      throw errors.unavailable('Not ready: a backing store is unreachable');
    }
    return { status: 'ok' };
  });
}
