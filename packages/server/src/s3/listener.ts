/**
 * The S3-compatible API's own listener (S3_API_PORT): a second Fastify
 * instance in the same process, on the same services as the Pail API. One
 * catch-all route takes every request; addressing.ts reads the bucket and
 * key (path or virtual-hosted style), operations.ts decides what it is,
 * auth.ts who signed it (an unsigned request may only read a public
 * object), and handler-table.ts names the handler that does it (one file
 * per operation in handlers/). Bodies are left unread for the handlers
 * (uploads stream straight to the domain).
 */
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import { isStoreUnreachable } from '../db/unavailable.js';
import { answerExpectations } from '../http/expectations.js';
import { clientErrorHandler, isClientAbort, type RawAnswer } from '../http/client-errors.js';
import type { Metrics } from '../http/plugins/metrics.js';
import { connectionLimits } from '../http/plugins/connections.js';
import { requestHooks } from '../http/plugins/request-hooks.js';
import { AppError } from '../domain/errors.js';
import { WriteConditionFailed } from '../domain/uploads.js';
import { authorize } from '../domain/authorize.js';
import type { AppContext } from '../http/context.js';
import { addressOf } from './addressing.js';
import { authenticateS3 } from './auth.js';
import { preconditionFailed } from './conditions.js';
import { addCorsHeadersByStorageName, addCorsHeadersForOwner, preflight } from './cors-answers.js';
import { fromAppError, S3Error, s3Errors } from './errors.js';
import { HANDLERS } from './handler-table.js';
import { isUnsigned, readAnonymously } from './object-reads.js';
import { isPostObject, operationOf, S3_ACTION, type S3Operation } from './operations.js';
import { postObject } from './post-object.js';
import { decodePath, splitUrl } from './query.js';
import { xmlDocument } from './xml.js';

/** Keys are up to 1024 bytes, so up to three times that percent-encoded. */
const MAX_PATH_PARAM = 4096;
const NO_QUERY = Object.freeze({});

export class S3Listener {
  private address: string | null = null;

  constructor(
    readonly app: FastifyInstance,
    private readonly port: number,
    private readonly host: string,
  ) {}

  /** Starts listening; the main app's close closes this too (app.ts). */
  async listen(): Promise<string> {
    this.address = await this.app.listen({ port: this.port, host: this.host });
    return this.address;
  }

  /** Where it listens, once it does. */
  get url(): string | null {
    return this.address;
  }

  close(): Promise<void> {
    return this.app.close();
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The Content-Type sent, while Fastify looks for a body parser (setContentTypeAsideWhileParsing). */
    contentTypeAside: string | null;
  }
  interface FastifyInstance {
    /** The S3-compatible API's listener, or null when S3_API_PORT is off. */
    s3Api: S3Listener | null;
  }
}

export async function buildS3Listener(ctx: AppContext, config: Config, options: { logger?: boolean; meter?: Metrics | null } = {}): Promise<S3Listener | null> {
  if (config.s3ApiPort === null) return null;
  const app = Fastify({
    logger: options.logger === false ? false : { level: config.logLevel, base: { listener: 's3' } },
    exposeHeadRoutes: false,
    trustProxy: typeof config.trustProxy === 'number' ? (_address: string, hop: number) => hop < (config.trustProxy as number) : config.trustProxy,
    genReqId: () => randomUUID(),
    // The query is read once, raw and in order, by query.ts (splitUrl): Fastify's parse of it would go unused.
    routerOptions: { maxParamLength: MAX_PATH_PARAM, querystringParser: () => NO_QUERY },
    return503OnClosing: true,
    http: { headersTimeout: config.headersTimeoutSeconds * 1000, connectionsCheckingInterval: 1000 },
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors: (error, request, reply) => void sendError(request, reply, error),
    clientErrorHandler: clientErrorHandler(s3ClientError),
  });
  answerExpectations(app.server);
  // Bodies stay unread: an upload streams to the domain, a bucket operation reads its own small body.
  // The same guard against slow and greedy clients as the Pail API's listener (idle sweep, per-address cap, counted per listener).
  await app.register(connectionLimits, ctx);
  // As on the Pail API: caches learn other instances' changes before any is read, and a change is answered once durable.
  await app.register(requestHooks, ctx);
  // Its requests count in the app's /metrics, by S3 operation (serveS3 names it).
  app.decorateRequest('errorCode', null, []);
  app.decorateRequest('meteredAs', null, []);
  app.decorateRequest('contentTypeAside', null);
  if (options.meter) app.addHook('onResponse', options.meter.onResponse);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  setContentTypeAsideWhileParsing(app);
  app.setErrorHandler((error: FastifyError, request, reply) => sendError(request, reply, error));
  app.route({ method: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS'], url: '/*', handler: (request, reply) => serveS3(ctx, request, reply) });
  await app.ready();
  return new S3Listener(app, config.s3ApiPort, config.host);
}

/**
 * Fastify answers 415 to a Content-Type it cannot parse (an empty one, which
 * boto3 sends for ContentType='') before any handler runs; S3 takes any, and
 * this listener reads bodies itself (its one parser leaves them unread). So
 * the header is set aside while Fastify looks for a parser, and put back, as
 * signed, before the request is served.
 */
function setContentTypeAsideWhileParsing(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const sent = request.headers['content-type'];
    if (sent !== undefined) {
      request.contentTypeAside = sent;
      // Set to undefined, not deleted: a deleted property would turn the headers into a slower dictionary for the rest of the request.
      request.headers['content-type'] = undefined;
    }
    done();
  });
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.contentTypeAside !== null) request.headers['content-type'] = request.contentTypeAside;
    done();
  });
}

async function serveS3(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.header('x-amz-request-id', request.id);
  const { path, query } = splitUrl(request.url);
  const { bucket, key } = addressOf(path, request.headers, ctx.config.s3ApiDomain);
  // Browsers send preflights and form uploads without an Authorization header (cors-answers.ts, post-object.ts).
  // Until the operation is known (readAnonymously and below name it), a request counts as Unknown.
  request.meteredAs = 'Unknown';
  if (request.method === 'OPTIONS') {
    request.meteredAs = 'CorsPreflight';
    return preflight(ctx, request, reply, bucket);
  }
  if (isPostObject(request.method, bucket, key, query, request.headers)) {
    request.meteredAs = 'PostObject';
    return postObject(ctx, request, reply, bucket);
  }
  if (isUnsigned(request.headers, query)) {
    await addCorsHeadersByStorageName(ctx, request, reply, bucket);
    return readAnonymously(ctx, request, reply, { bucket, key, query });
  }
  let operation: S3Operation | undefined;
  try {
    operation = operationOf(request.method, bucket, key, query, request.headers);
    request.meteredAs = operation;
  } catch {
    // Refused below, once the caller is known, as S3 refuses: a stranger learns nothing.
    request.meteredAs = 'NotImplemented';
  }
  const signed = { method: request.method, path, query, headers: request.headers };
  const caller = await authenticateS3(ctx, request, signed).catch(async (error: unknown) => {
    // A refused signature names no owner: its answer gets the CORS headers of the bucket by storage name.
    await addCorsHeadersByStorageName(ctx, request, reply, bucket);
    throw error;
  });
  // (Only a request with an Origin gets CORS headers: the others skip a promise.)
  if (request.headers.origin !== undefined) await addCorsHeadersForOwner(ctx, request, reply, caller.principal.user.id, bucket);
  operation ??= operationOf(request.method, bucket, key, query, request.headers);
  authorize(caller.principal, S3_ACTION[operation]);
  return HANDLERS[operation](ctx, request, reply, { operation, bucket, key, query, caller });
}

function s3ErrorOf(request: FastifyRequest, error: unknown): S3Error {
  if (error instanceof S3Error) return error;
  if (error instanceof AppError) return fromAppError(error);
  if (error instanceof WriteConditionFailed) return preconditionFailed();
  if (isStoreUnreachable(error)) return new S3Error('ServiceUnavailable', 503, 'A backing store cannot be reached; try again shortly');
  // The router's refusal of a path that is not valid percent-encoding: a key S3 cannot parse either.
  if ((error as { code?: unknown }).code === 'FST_ERR_BAD_URL') return s3Errors.invalidUri();
  const statusCode = (error as { statusCode?: unknown }).statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new S3Error('InvalidRequest', 400, error instanceof Error ? error.message : 'Bad request');
  }
  if (isClientAbort(error)) {
    request.log.info({ reqId: request.id }, 'client aborted the request');
    return new S3Error('IncompleteBody', 400, 'The request body ended before the number of bytes its Content-Length named');
  }
  request.log.error({ err: error }, 'S3 request failed');
  return s3Errors.internal();
}

/** S3's error body: <Error> with Code, Message, Resource and RequestId, and no namespace. HEAD answers carry none. */
/** Bodies up to this size are read to their end after a refusal, so the connection lives on; larger ones close it. */
const DRAINED_BODY_BYTES = 64 * 1024;

/** S3's XML for a request that never reached the route: late, too large or malformed headers (http/client-errors.ts). */
function s3ClientError(refusal: AppError): RawAnswer {
  const { code, status, message } = fromAppError(refusal);
  const id = randomUUID();
  return {
    status,
    headers: { 'content-type': 'application/xml', 'x-amz-request-id': id },
    body: xmlDocument('Error', { Code: code, Message: message, RequestId: id }, false),
  };
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  // A body refused midway (cap, checksum, condition) is no longer read by anyone: without this the
  // client, still sending it, never sees the answer.
  if (!request.raw.complete) {
    if (!(Number(request.headers['content-length']) <= DRAINED_BODY_BYTES)) reply.header('connection', 'close');
    request.raw.resume();
  }
  const s3Error = s3ErrorOf(request, error);
  request.errorCode = s3Error.code;
  reply.code(s3Error.status).headers(s3Error.headers).header('x-amz-request-id', request.id);
  if (request.method === 'HEAD') return reply.send();
  const resource = decodePath(splitUrl(request.url).path).join('/');
  const body = xmlDocument('Error', { Code: s3Error.code, Message: s3Error.message, ...s3Error.details, Resource: resource, RequestId: request.id }, false);
  return reply.header('content-type', 'application/xml').send(body);
}
