/**
 * What every request goes through, whatever its route: caches learn what
 * other processes changed before any is consulted, and a change is answered
 * only once it is on disk.
 */
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import type { Scope } from '../route.js';

export const requestHooks = fp(
  async (app: Scope, ctx: AppContext) => {
    const { caches } = ctx.storage;
    if (caches.refreshes) {
      // A callback hook: on SQLite the check is synchronous, and reads, the hot path, pay no promise for it.
      app.addHook('onRequest', (_request, _reply, done) => {
        const refreshing = caches.refresh();
        if (refreshing) refreshing.then(() => done(), done);
        else done();
      });
    }
    // One hook, so no write path can forget it; requests that wrote nothing do not wait.
    app.addHook('onSend', (request, _reply, payload, done) => {
      if (request.method === 'GET' || request.method === 'HEAD') return done(null, payload);
      ctx.durable().then(() => done(null, payload), done);
    });
    if (ctx.config.logLevel === 'debug' || ctx.config.logLevel === 'trace') {
      // One line per request costs a tenth of a small request's time, so only at debug level.
      app.addHook('onResponse', async (request, reply) => {
        const operation = request.meteredAs ?? request.routeOptions.config.operation;
        request.log.debug({ operation, method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request');
      });
    }
  },
  { name: 'pail-request-hooks' },
);
