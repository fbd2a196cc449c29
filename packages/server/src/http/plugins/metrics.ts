/**
 * GET /metrics in Prometheus text (prom-client): requests by operation and
 * status, their latency, bytes in and out, uploads, refusals by reason, and
 * the storage used, read from the database when scraped. Each app has its
 * own registry, so tests and several apps in one process never mix counts.
 */
import { timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import { Counter, Gauge, Registry } from 'prom-client';
import { totalStorageUsed } from '../../db/repositories/users.js';
import { errors } from '../../domain/errors.js';
import type { AppContext } from '../context.js';
import { addRoute, type Scope } from '../route.js';
import { RequestTallies } from './request-tallies.js';

/** Why a request was refused, by its error code; other codes are not refusals of this kind. */
const REFUSAL_REASONS: Record<string, string> = {
  RateLimited: 'rate',
  StorageLimitExceeded: 'cap',
  PayloadTooLarge: 'size',
  Unauthorized: 'auth',
  Forbidden: 'auth',
};

const UPLOADS = new Set(['uploadRaw', 'uploadMultipart', 'uploadBySignedUrl']);

export const metrics = fp(
  async (app: Scope, ctx: AppContext) => {
    if (!ctx.config.metrics) return;
    const registry = new Registry();
    // Not prom-client's default metrics: their observer of every garbage collection made small
    // requests measurably dearer (docs/performance.md). The process's figures are read when scraped.
    new Gauge({
      name: 'pail_process_resident_memory_bytes',
      help: 'Resident memory of the process',
      registers: [registry],
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new Gauge({
      name: 'pail_process_cpu_seconds_total',
      help: 'CPU time the process has used (user + system)',
      registers: [registry],
      collect() {
        const { user, system } = process.cpuUsage();
        this.set((user + system) / 1e6);
      },
    });
    const tallies = new RequestTallies();
    tallies.register(registry);
    const uploads = new Counter({ name: 'pail_uploads_total', help: 'Files stored', labelNames: ['operation'], registers: [registry] });
    const refusals = new Counter({
      name: 'pail_refusals_total',
      help: 'Requests refused, by reason (rate, cap, size, auth)',
      labelNames: ['reason'],
      registers: [registry],
    });
    new Gauge({
      name: 'pail_storage_used_bytes',
      help: 'Bytes stored by all users',
      registers: [registry],
      async collect() {
        this.set(await totalStorageUsed(ctx.db));
      },
    });

    app.addHook('onResponse', (request, reply, done) => {
      const operation = request.routeOptions.config.operation ?? 'none';
      const status = reply.statusCode;
      const received = Number(request.headers['content-length']) || 0;
      const sent = request.method === 'HEAD' ? 0 : Number(reply.getHeader('content-length')) || 0;
      tallies.record(operation, status, reply.elapsedTime / 1000, received, sent);
      if (status === 201 && UPLOADS.has(operation)) uploads.inc({ operation });
      const reason = request.errorCode === null ? undefined : REFUSAL_REASONS[request.errorCode];
      if (reason) refusals.inc({ reason });
      done();
    });

    const token = ctx.config.metricsToken;
    addRoute(app, {
      operation: 'metrics',
      routes: ['GET /metrics'],
      tag: 'Operations',
      schema: {},
      handler: async (request, reply) => {
        if (token !== undefined && !bearerMatches(request.headers.authorization, token)) throw errors.unauthorized();
        return reply.type(registry.contentType).send(await registry.metrics());
      },
    });
  },
  { name: 'pail-metrics' },
);

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
