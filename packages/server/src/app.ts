/**
 * buildApp(config): a ready Fastify instance with every port opened and every
 * route registered. It never listens; main.ts does, and tests use inject() or
 * listen on port 0.
 */
import fastifyCookie from '@fastify/cookie';
import fastifyMultipart from '@fastify/multipart';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import { openBlobStore } from './blob/open-blob-store.js';
import type { Config } from './config.js';
import { migrateToLatest, openDatabase } from './db/database.js';
import { ApiKeyAuthenticator } from './domain/api-keys.js';
import { resumePurges } from './domain/bucket-deletion.js';
import { collectGarbage } from './domain/garbage-collection.js';
import { MetadataCache } from './domain/metadata-cache.js';
import { SharedEpochs, type EpochKind } from './domain/shared-epochs.js';
import { ObjectCache } from './domain/object-cache.js';
import type { ReadableObject } from './domain/objects.js';
import { sessionTokens } from './domain/sessions.js';
import { apiKeyAuth, sessionAuth } from './http/auth.js';
import type { AppContext } from './http/context.js';
import { defaultDashboardDir, registerDashboard } from './http/dashboard.js';
import { installErrorHandlers } from './http/error-handler.js';
import { RateLimits } from './http/rate-limits.js';
import { registerAuthRoutes } from './http/routes/auth-routes.js';
import { registerHealthRoutes } from './http/routes/health-routes.js';
import { registerKeyRoutes } from './http/routes/key-routes.js';
import { registerPublicStorageRoutes } from './http/routes/public-storage-routes.js';
import { registerStorageApi } from './http/routes/storage-api.js';
import { sessionSecret } from './secrets.js';

const GC_INTERVAL_MS = 15 * 60 * 1000;

export const DEVELOPER_API = { tag: 'Developer API', bases: ['/api/v1/buckets', '/api/v1/bucket'] } as const;
export const CLIENT_API = { tag: 'Client API', bases: ['/api/buckets'] } as const;

export async function buildApp(config: Config, options: { logger?: boolean } = {}): Promise<FastifyInstance> {
  const { db, dialect, durable, writer, committedElsewhere, close: closeDatabase } = openDatabase(config.database, { checkpointInBackground: true });
  await migrateToLatest(db, dialect);
  const blobs = await openBlobStore(config.blob);
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        // A Redis that stalls (or a network that drops packets) after connecting would
        // otherwise leave a rate-limit check, and so the request, waiting forever.
        commandTimeout: 2000,
        keepAlive: 10_000,
        // Commands issued in the same turn of the event loop share one round trip.
        enableAutoPipelining: true,
      })
    : undefined;
  redis?.on('error', () => {}); // ioredis reconnects by itself; requests meanwhile get 503.
  const cache = new ObjectCache(config.cacheMaxObjectBytes, config.cacheMaxBytes);
  // Lookups are cached where every change reaches every cache: one process on
  // SQLite, or several sharing invalidation counters in Redis (metadata-cache.ts).
  const sharedEpochs = dialect === 'postgres' && redis ? new SharedEpochs(redis, config.redisKeyPrefix) : null;
  const cacheable = dialect === 'sqlite' || sharedEpochs !== null;
  const shared = (kind: EpochKind) =>
    sharedEpochs && { epochs: sharedEpochs, kind, onError: (error: unknown) => app.log.warn({ err: error }, 'cache invalidation did not reach Redis') };
  const lookups = cacheable ? new MetadataCache<ReadableObject>({ max: 10_000, ttlMs: 5_000 }, shared('objects')) : null;
  const keyOwners = cacheable ? new MetadataCache<Awaited<ReturnType<ApiKeyAuthenticator['authenticate']>> & object>({ max: 10_000, ttlMs: 2_000 }, shared('keys')) : null;
  const ctx: AppContext = {
    config,
    db,
    dialect,
    blobs,
    objects: {
      db,
      dialect,
      writer,
      blobs,
      cache,
      lookups,
      plans: config.plans,
      bucketIdentities: new LRUCache({ max: 10_000 }),
      maxFileBytes: config.maxFileBytes,
      inlineMaxBytes: config.inlineMaxBytes,
      storageHost: `${config.publicUrl}/storage`,
    },
    tokens: sessionTokens(await sessionSecret(config.sessionSecret, config.dataDir)),
    apiKeys: new ApiKeyAuthenticator(db, keyOwners),
    rateLimits: new RateLimits(config, redis),
  };

  const app = Fastify({
    logger: options.logger === false ? false : { level: config.logLevel },
    routerOptions: { maxParamLength: 1024 },
    exposeHeadRoutes: false,
    trustProxy: config.trustProxy,
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // One line per request costs a tenth of a small request's time; they are logged at debug level instead (below).
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.decorateRequest('principal', null as never);

  await app.register(fastifyCookie);
  await app.register(fastifyMultipart, {
    limits: { fileSize: config.maxFileBytes + 1, files: 10, fields: 50, parts: 100, fieldSize: 1024 * 1024 },
  });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Pail', version: '1.0.0', description: 'Self-hostable bucket storage: Developer API (API keys) and Client API (sessions).' },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
          session: { type: 'apiKey', in: 'cookie', name: 'pail_session' },
        },
      },
    },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  if (config.logLevel === 'debug' || config.logLevel === 'trace') {
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug({ method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request');
    });
  }
  // A change is answered only once it is on disk (db/wal-sync.ts): one hook,
  // so no write path can forget it. Requests that wrote nothing do not wait.
  // (A callback hook: reads, the hot path, pay no promise for it.)
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (request.method === 'GET' || request.method === 'HEAD') return done(null, payload);
    durable().then(() => done(null, payload), done);
  });
  if (committedElsewhere) {
    // Before any cache is consulted: did the CLI revoke a key or change a plan (db/cache-epoch-watch.ts)?
    app.addHook('onRequest', (_request, _reply, done) => {
      if (committedElsewhere()) {
        keyOwners?.distrust();
        lookups?.distrust();
      }
      done();
    });
  }
  if (sharedEpochs) {
    // Before any cache is consulted: what other instances have changed.
    app.addHook('onRequest', async () => {
      try {
        const epochs = await sharedEpochs.read();
        keyOwners?.adopt(epochs.keys);
        lookups?.adopt(epochs.objects);
      } catch {
        keyOwners?.distrust();
        lookups?.distrust();
      }
    });
  }
  installErrorHandlers(app);
  registerHealthRoutes(app, ctx);
  registerAuthRoutes(app, ctx);
  registerKeyRoutes(app, ctx);
  await app.register(async (scope) => {
    scope.addHook('onRequest', apiKeyAuth(ctx));
    registerStorageApi(scope, ctx, {
      ...DEVELOPER_API,
      bases: [...DEVELOPER_API.bases],
      aliases: { listBuckets: ['/list'], createBucket: ['/create'], deleteBucket: ['/:id/delete'], deleteFile: ['/:id/files/:filename/delete'] },
      visibilityMethods: ['POST'],
    });
  });
  await app.register(async (scope) => {
    scope.addHook('onRequest', sessionAuth(ctx));
    registerStorageApi(scope, ctx, {
      ...CLIENT_API,
      bases: [...CLIENT_API.bases],
      aliases: { listFiles: ['/:id/objects'], uploadMultipart: ['/:id/upload'] },
      visibilityMethods: ['POST', 'PATCH'],
    });
  });
  registerPublicStorageRoutes(app, ctx);

  const spaFallback = await registerDashboard(app, config.dashboardDir ?? defaultDashboardDir());
  app.setNotFoundHandler((request, reply) => {
    if (spaFallback?.(request, reply)) return reply;
    reply.header('x-request-id', request.id);
    return reply.code(404).send({ error: 'Not found', code: 'NotFound' });
  });

  // Finish deletions an earlier process did not, then collect garbage now and then.
  const gc = () =>
    collectGarbage(ctx.objects, config.gcGraceSeconds).catch((error: unknown) => app.log.warn({ err: error }, 'garbage collection failed'));
  const purging = resumePurges(ctx.objects).catch((error: unknown) => app.log.warn({ err: error }, 'resuming bucket deletions failed'));
  const timer = setInterval(gc, GC_INTERVAL_MS);
  timer.unref();

  app.decorate('pail', ctx);
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await purging;
    await closeDatabase();
    await blobs.close?.();
    redis?.disconnect();
  });
  await app.ready();
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's ports, for the CLI and tests. */
    pail: AppContext;
  }
}
