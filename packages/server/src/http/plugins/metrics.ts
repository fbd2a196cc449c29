/**
 * GET /metrics in Prometheus text (prom-client): requests by operation and
 * status, their latency, bytes in and out, uploads, refusals by reason, and
 * the storage used, read from the database when scraped. Each app has its
 * own registry, so tests and several apps in one process never mix counts.
 */
import { timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { totalStorageUsed } from '../../db/repositories/users.js';
import { errors } from '../../domain/errors.js';
import type { AppContext } from '../context.js';
import { addRoute, type Scope } from '../route.js';

/** Why a request was refused, by its error code; other codes are not refusals of this kind. */
const REFUSAL_REASONS: Record<string, string> = {
  RateLimited: 'rate',
  StorageLimitExceeded: 'cap',
  PayloadTooLarge: 'size',
  Unauthorized: 'auth',
  Forbidden: 'auth',
};

const UPLOADS = new Set(['uploadRaw', 'uploadMultipart']);

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
    const requests = new Counter({
      name: 'pail_http_requests_total',
      help: 'Requests answered, by operation and status',
      labelNames: ['operation', 'status'],
      registers: [registry],
    });
    const latency = new Histogram({
      name: 'pail_http_request_duration_seconds',
      help: 'Time from request to response, by operation',
      labelNames: ['operation'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
      registers: [registry],
    });
    const bytesIn = new Counter({ name: 'pail_http_received_bytes_total', help: 'Request body bytes received (declared lengths)', registers: [registry] });
    const bytesOut = new Counter({ name: 'pail_http_sent_bytes_total', help: 'Response body bytes sent (declared lengths)', registers: [registry] });
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
      requests.inc({ operation, status });
      latency.observe({ operation }, reply.elapsedTime / 1000);
      const received = Number(request.headers['content-length']);
      if (received > 0) bytesIn.inc(received);
      const sent = Number(reply.getHeader('content-length'));
      if (sent > 0 && request.method !== 'HEAD') bytesOut.inc(sent);
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
