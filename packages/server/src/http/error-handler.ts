/**
 * Every error leaves as `{error, code}` with its real status. Errors the
 * client caused are 4xx with a clear message; anything unexpected is a 500
 * that says nothing internal, is logged, and carries the request id.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { isStoreUnreachable } from '../db/unavailable.js';
import { AppError, errors } from '../domain/errors.js';
import { clientErrorHandler, isClientAbort } from './client-errors.js';

const SMALL_BODY_BYTES = 64 * 1024;

/** Framework and plugin errors a client can cause, and how to say them. */
const CLIENT_ERRORS: Record<string, () => AppError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => errors.validation('Body is not valid JSON'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => errors.validation('Body is empty; send a JSON object'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new AppError('UnsupportedMediaType', 'Unsupported or malformed Content-Type'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => errors.validation('Content-Length does not match the body'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('PayloadTooLarge', 'Request body is too large'),
  FST_INVALID_MULTIPART_CONTENT_TYPE: () => errors.validation("Expected a multipart/form-data body with a file part named 'file'"),
  FST_PARTS_LIMIT: () => errors.validation('Too many parts in the multipart body'),
  FST_FILES_LIMIT: () => errors.validation('Too many files in the multipart body; send one part named file'),
  FST_FIELDS_LIMIT: () => errors.validation('Too many fields in the multipart body'),
  FST_PROTO_VIOLATION: () => errors.validation('Malformed multipart body'),
  FST_ERR_BAD_URL: () => errors.validation('Malformed URL: a path segment is not valid percent-encoding'),
  FST_ERR_MAX_PARAM_LENGTH: () => errors.validation('Malformed URL: a path segment is too long'),
};

/** A full disk, wherever it was met: writing a blob (ENOSPC, EDQUOT) or the database (SQLITE_FULL). */
const DISK_FULL = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

function toAppError(error: FastifyError): AppError | null {
  if (error instanceof AppError) return error;
  if (error.code !== undefined && DISK_FULL.has(error.code)) return errors.insufficientStorage();
  if (isStoreUnreachable(error)) return errors.unavailable('Service unavailable: a backing store cannot be reached; try again shortly');
  if (error.validation) {
    const first = error.validation[0];
    // A message the schema spells out (errorMessage, @pail/shared) is the contract's own text.
    if (first?.keyword === 'errorMessage' && first.message) return errors.validation(first.message);
    const where = error.validationContext ?? 'request';
    const field = first?.instancePath ? first.instancePath.replace(/^\//, '').replace(/\//g, '.') : '';
    return errors.validation(`${where}${field ? `.${field}` : ''} ${first?.message ?? 'is invalid'}`);
  }
  const known = error.code ? CLIENT_ERRORS[error.code] : undefined;
  if (known) return known();
  // busboy's complaints about a broken multipart stream.
  if (/^(Unexpected end of (form|multipart data)|Malformed part header|Multipart: Boundary not found|Part terminated early)/.test(error.message)) {
    return errors.validation('Malformed multipart body');
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError(error.statusCode === 413 ? 'PayloadTooLarge' : 'ValidationError', error.message);
  }
  return null;
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(answerError);
}

/**
 * The one answer to every error: routes' and plugins' (setErrorHandler) and
 * the router's own before any route is found, such as a path that is not
 * valid percent-encoding (Fastify's frameworkErrors option, app.ts).
 */
export function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // A large body we stopped reading (cap reached, bad upload) is not worth
  // draining: close the connection. A small one Node drains, keeping it alive.
  if (!request.raw.complete && !(Number(request.headers['content-length']) <= SMALL_BODY_BYTES)) {
    reply.header('connection', 'close');
  }
  reply.header('x-request-id', request.id);
  const appError = toAppError(error);
  request.errorCode = appError?.code ?? 'InternalError';
  if (appError) {
    if (appError.status >= 500) request.log.warn({ err: error }, appError.message);
    return reply.code(appError.status).headers(appError.headers).send({ error: appError.message, code: appError.code });
  }
  if (isClientAbort(error)) {
    request.log.info({ reqId: request.id }, 'client aborted the request');
    return reply.code(400).send({ error: 'Request aborted', code: 'ValidationError' });
  }
  request.log.error({ err: error }, 'unhandled error');
  return reply.code(500).send({ error: 'Internal server error', code: 'InternalError' });
}

/** The same `{error, code}` for a request that never reached a route: late, too large or malformed headers (client-errors.ts). */
export const answerClientError = clientErrorHandler((refusal) => ({
  status: refusal.status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': randomUUID() },
  body: JSON.stringify({ error: refusal.message, code: refusal.code }),
}));
