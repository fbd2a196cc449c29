/**
 * GET /metrics in Prometheus text (prom-client): requests by operation and
 * status, their latency, bytes in and out, uploads, refusals by reason, and
 * the storage used, read from the database when scraped. Each app has its
 * own registry, so tests and several apps in one process never mix counts;
 * the S3 listener's requests count in the same app's (s3/listener.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Registry } from 'prom-client';
import { totalStorageUsed } from '../../db/repositories/users.js';
import { errors } from '../../domain/errors.js';
import type { ObjectEvent } from '../../domain/object-events.js';
import type { AppContext } from '../context.js';
import { addRoute, type Scope } from '../route.js';
import { RequestTallies } from './request-tallies.js';

/** Why a request was refused, by its error code (the Pail API's, or S3's); other codes are not refusals of this kind. */
const REFUSAL_REASONS: Record<string, string> = {
  RateLimited: 'rate',
  StorageLimitExceeded: 'cap',
  PayloadTooLarge: 'size',
  Unauthorized: 'auth',
  Forbidden: 'auth',
  SlowDown: 'rate',
  QuotaExceeded: 'cap',
  EntityTooLarge: 'size',
  AccessDenied: 'auth',
  InvalidAccessKeyId: 'auth',
  SignatureDoesNotMatch: 'auth',
};

/**
 * The counts behind /metrics, one set per app: both listeners (the Pail
 * API's and the S3 API's) record into it through `onResponse`, files stored
 * are counted at the commit seam (domain/object-events.ts), and the storage
 * used and the process's figures are read when scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly tallies = new RequestTallies();
  private readonly uploads: Counter<'operation'>;
  private readonly refusals: Counter<'reason'>;

  constructor(ctx: AppContext) {
    const registers = [this.registry];
    // Not prom-client's default metrics: their observer of every garbage collection made small
    // requests measurably dearer (docs/performance.md). The process's figures are read when scraped.
    new Gauge({
      name: 'pail_process_resident_memory_bytes',
      help: 'Resident memory of the process',
      registers,
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new Gauge({
      name: 'pail_process_cpu_seconds_total',
      help: 'CPU time the process has used (user + system)',
      registers,
      collect() {
        const { user, system } = process.cpuUsage();
        this.set((user + system) / 1e6);
      },
    });
    this.tallies.register(this.registry);
    this.uploads = new Counter({ name: 'pail_uploads_total', help: 'Files stored', labelNames: ['operation'], registers });
    this.refusals = new Counter({
      name: 'pail_refusals_total',
      help: 'Requests refused, by reason (rate, cap, size, auth)',
      labelNames: ['reason'],
      registers,
    });
    new Gauge({
      name: 'pail_storage_used_bytes',
      help: 'Bytes stored by all users',
      registers,
      async collect() {
        this.set(await totalStorageUsed(ctx.db));
      },
    });
  }

  /** Listens at the commit seam: a file stored is counted when its version committed, by the operation of the door that made it. */
  readonly onObjectEvent = (event: ObjectEvent): void => {
    if (event.type === 'object-created' && event.cause === 'stored') this.uploads.inc({ operation: event.operation ?? 'none' });
  };

  /** A listener's onResponse hook: the request's operation is its route's, or what the S3 listener found (`meteredAs`). */
  readonly onResponse = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const operation = request.meteredAs ?? request.routeOptions.config.operation ?? 'none';
    const status = reply.statusCode;
    const received = Number(request.headers['content-length']) || 0;
    const sent = request.method === 'HEAD' ? 0 : Number(reply.getHeader('content-length')) || 0;
    this.tallies.record(operation, status, reply.elapsedTime / 1000, received, sent);
    const reason = request.errorCode === null ? undefined : REFUSAL_REASONS[request.errorCode];
    if (reason) this.refusals.inc({ reason });
    done();
  };
}

/**
 * The Pail API's side: its requests recorded, and GET /metrics served: with
 * METRICS_TOKEN, to that bearer token only; without one, to loopback
 * addresses only (what a request carried through a proxy says it came from
 * is not loopback, so a proxy on the same host does not open it to everyone).
 */
export const metrics = fp(
  async (app: Scope, { ctx, meter }: { ctx: AppContext; meter: Metrics }) => {
    app.addHook('onResponse', meter.onResponse);
    const token = ctx.config.metricsToken;
    addRoute(app, {
      operation: 'metrics',
      routes: ['GET /metrics'],
      tag: 'Operations',
      schema: {},
      handler: async (request, reply) => {
        if (token !== undefined && !bearerMatches(request.headers.authorization, token)) throw errors.unauthorized();
        if (token === undefined && !fromLoopback(request))
          throw errors.forbidden('Metrics are served to loopback addresses only; set METRICS_TOKEN to scrape them from elsewhere');
        return reply.type(meter.registry.contentType).send(await meter.registry.metrics());
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

function fromLoopback(request: FastifyRequest): boolean {
  if (request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined) return false;
  const ip = request.ip;
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}
