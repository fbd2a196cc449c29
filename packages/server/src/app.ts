/**
 * buildApp(config): a ready Fastify instance with every service opened and
 * every route registered. It never listens; main.ts does, and tests use
 * inject() or listen on port 0. Its `s3Api` is the S3-compatible API's
 * listener (src/s3/), started by whoever starts the app.
 */
import fastifyCookie from '@fastify/cookie';
import fastifyMultipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import ajvErrorsModule from 'ajv-errors';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Config } from './config.js';
import { defaultDashboardDir, installDashboard } from './api/dashboard.js';
import { answerExpectations } from './http/expectations.js';
import { routeFileSuffixes } from './http/file-suffixes.js';
import { answerClientError, answerError, installErrorHandlers } from './http/error-handler.js';
import { backgroundWork } from './http/plugins/background-work.js';
import { connectionLimits } from './http/plugins/connections.js';
import { Metrics, metrics } from './http/plugins/metrics.js';
import { openApi } from './http/plugins/openapi.js';
import { requestHooks } from './http/plugins/request-hooks.js';
import { registerAccountRoutes } from './api/accounts.js';
import { registerHealthRoutes } from './api/health.js';
import { registerKeyRoutes } from './api/keys.js';
import { registerStorageApis } from './storage-apis.js';
import { registerStorageUrlRoutes } from './api/storage-urls.js';
import { buildS3Listener } from './s3/listener.js';
import { openServices, type ServiceOverrides } from './services.js';

const MULTIPART_FIELDS = 8;
const trustHops = (count: number) => (_address: string, hop: number) => hop < count;

/** `passwordCost` and `clock` are for tests (services.ts); the server runs without them. */
export async function buildApp(config: Config, options: { logger?: boolean } & ServiceOverrides = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger === false ? false : { level: config.logLevel },
    routerOptions: { maxParamLength: 1024 },
    // `…/files/<filename>/tags` and the like reach their operation's own route (http/file-suffixes.ts).
    rewriteUrl: routeFileSuffixes,
    exposeHeadRoutes: false,
    // A hop count N believes the nearest N entries of X-Forwarded-For (as proxy-addr counts hops).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // Headers must arrive in time (idle connections: http/plugins/connections.ts). No limit on a whole
    // request, which would cut long uploads whose bytes keep moving.
    http: { headersTimeout: config.headersTimeoutSeconds * 1000, connectionsCheckingInterval: 1000 },
    // Requests are logged by request-hooks.ts, at debug level.
    logController: new LogController({ disableRequestLogging: true }),
    // Body schemas carry their own messages (errorMessage, in @pail/shared); a wrong type is refused, never coerced.
    // The router's own refusals (a path that is not valid percent-encoding) answer like every other error.
    frameworkErrors: (error, request, reply) => void answerError(error, request, reply),
    // A request that never reached a route (late, too large or malformed headers) gets the same {error, code}.
    clientErrorHandler: answerClientError,
    ajv: { customOptions: { allErrors: true, coerceTypes: false }, plugins: [(ajv) => ajvErrorsModule.default(ajv)] },
  }).withTypeProvider<TypeBoxTypeProvider>();
  answerExpectations(app.server);

  const ctx = await openServices(config, (error, what) => app.log.warn({ err: error }, what), {
    passwordCost: options.passwordCost,
    clock: options.clock,
  });
  app.decorate('pail', ctx);
  app.decorateRequest('principal', null, []);
  app.decorateRequest('errorCode', null, []);
  app.decorateRequest('meteredAs', null, []);
  // First, so every route takes it, the plugins' own (GET /metrics) too: a route keeps the error handler set when it was added.
  installErrorHandlers(app);
  // Before any other hook: a request past the per-address cap is refused before it costs anything.
  await app.register(connectionLimits, ctx);

  await app.register(backgroundWork, ctx);
  await app.register(requestHooks, ctx);
  // One set of counts for both listeners (the S3 listener records into it too).
  const meter = config.metrics ? new Metrics(ctx) : null;
  if (meter) {
    await app.register(metrics, { ctx, meter });
    ctx.storage.events.listen(meter.onObjectEvent);
  }
  await app.register(fastifyCookie);
  // One file part and a few small text fields: text fields are held in memory, so they are kept tiny.
  await app.register(fastifyMultipart, {
    limits: { fileSize: config.maxFileBytes + 1, files: 1, fields: MULTIPART_FIELDS, parts: MULTIPART_FIELDS + 1, fieldSize: 1024, headerPairs: 20 },
  });
  await app.register(openApi, { publicUrl: config.publicUrl });

  registerHealthRoutes(app, ctx);
  registerAccountRoutes(app, ctx);
  registerKeyRoutes(app, ctx);
  await registerStorageApis(app, ctx);
  registerStorageUrlRoutes(app, ctx);
  await installDashboard(app, config.dashboardDir ?? defaultDashboardDir());

  // The S3-compatible API (S3_API_PORT) shares these services; whoever listens on the app starts it
  // (app.s3Api.listen()), and it stops, its requests finished, before the services close.
  const s3Api = await buildS3Listener(ctx, config, { logger: options.logger, meter });
  app.decorate('s3Api', s3Api);
  app.addHook('preClose', async () => {
    await s3Api?.close();
  });

  await app.ready();
  return app;
}
