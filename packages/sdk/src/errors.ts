/**
 * Typed errors. Every refusal from the server becomes a PailError (or one of
 * its subclasses) carrying the HTTP status, the machine-readable `code` from
 * the body (`{error, code}`), the human message and the parsed body. The class
 * is chosen from `code` first, and from the status when there is no code
 * (for example a HEAD response, which has no body).
 */
import type { ErrorCode, Permission } from './types.js';

export interface PailErrorDetails {
  status: number;
  code?: ErrorCode | undefined;
  body?: unknown;
  requestId?: string | undefined;
}

export class PailError extends Error {
  /** HTTP status of the response. */
  readonly status: number;
  /** Stable machine-readable code from the error body, when the server sent one. */
  readonly code: ErrorCode | undefined;
  /** The parsed JSON body (or its text, when it was not JSON). Undefined when there was none. */
  readonly body: unknown;
  /** The server's `x-request-id`, useful when reporting a 500. */
  readonly requestId: string | undefined;

  constructor(message: string, details: PailErrorDetails) {
    super(message);
    this.name = new.target.name;
    this.status = details.status;
    this.code = details.code;
    this.body = details.body;
    this.requestId = details.requestId;
  }
}

/** 400: an invalid bucket name, filename, body or parameter. */
export class ValidationError extends PailError {}
/** 401: the API key (or session) is missing, wrong, revoked or expired. */
export class UnauthorizedError extends PailError {}
/** The refusal of a key's limits, as the contract words it (decisions.md, "API keys with limits"). */
const NOT_ALLOWED = /^This API key does not allow (read|write|delete|manage)$/;

/**
 * 403: the server refused the request: the API key's permissions do not allow
 * it, a key limited to some buckets tried to create one, or a signed url is
 * expired, altered or ended.
 */
export class ForbiddenError extends PailError {
  /** The permission the API key lacks, when that is why (`'write'` for an upload with a read-only key). */
  readonly permission: Permission | undefined;

  constructor(message: string, details: PailErrorDetails) {
    super(message, details);
    // The body's code is Forbidden for every 403, so the message is what names the permission.
    this.permission = NOT_ALLOWED.exec(message)?.[1] as Permission | undefined;
  }
}
/** 404: something does not exist. The two subclasses below say what. */
export class NotFoundError extends PailError {}
/** 404: the bucket does not exist, was deleted, or belongs to someone else. */
export class BucketNotFoundError extends NotFoundError {}
/** 404: the bucket exists but has no file of that name. */
export class FileNotFoundError extends NotFoundError {}
/** 404: no live API key of yours has that id (revokeKey). */
export class ApiKeyNotFoundError extends NotFoundError {}
/** 409: you already have a live bucket with this name. */
export class BucketNameTakenError extends PailError {}
/** 409: a move's new name holds a file already (moveFile/moveFolder without `overwrite`); nothing moved. */
export class FileExistsError extends PailError {}
/** 409: the upload would take you over your plan's storage cap; the message names the cap. */
export class StorageLimitExceededError extends PailError {}
/** 403: a version under retention or legal hold (object lock), or a bucket holding one, cannot be removed; the message says until when. */
export class ObjectLockedError extends ForbiddenError {}
/** 413: the file is larger than the server's single-file limit or the bucket's `max_file_bytes`. */
export class PayloadTooLargeError extends PailError {}
/** 415: the file's type (declared, or read from its bytes) is not one the bucket's `allowed_types` take; or the upload's Content-Type is not the one its signed url was made for, or is malformed. */
export class UnsupportedMediaTypeError extends PailError {}
/** 416: the requested byte range lies outside the file. */
export class RangeNotSatisfiableError extends PailError {}

export interface RateLimitDetails extends PailErrorDetails {
  retryAfterSeconds?: number | undefined;
  limit?: number | undefined;
  remaining?: number | undefined;
  resetSeconds?: number | undefined;
}

/** 429: the per-minute request budget of your plan is spent. */
export class RateLimitError extends PailError {
  /** Seconds to wait before trying again, from the `Retry-After` header (undefined if absent). */
  readonly retryAfterSeconds: number | undefined;
  /** The budget per minute (`RateLimit-Limit`), when the server sent it. */
  readonly limit: number | undefined;
  /** Requests left in the window (`RateLimit-Remaining`). */
  readonly remaining: number | undefined;
  /** Seconds until the window resets (`RateLimit-Reset`). */
  readonly resetSeconds: number | undefined;

  constructor(message: string, details: RateLimitDetails) {
    super(message, details);
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.limit = details.limit;
    this.remaining = details.remaining;
    this.resetSeconds = details.resetSeconds;
  }
}

/** 5xx: the server failed. `requestId` identifies the failure in the server's logs. */
export class ServerError extends PailError {}

type ErrorClass = new (message: string, details: PailErrorDetails) => PailError;

const BY_CODE: Partial<Record<ErrorCode, ErrorClass>> = {
  ValidationError,
  Unauthorized: UnauthorizedError,
  Forbidden: ForbiddenError,
  NotFound: NotFoundError,
  BucketNotFound: BucketNotFoundError,
  FileNotFound: FileNotFoundError,
  ApiKeyNotFound: ApiKeyNotFoundError,
  BucketNameTaken: BucketNameTakenError,
  StorageLimitExceeded: StorageLimitExceededError,
  FileExists: FileExistsError,
  ObjectLocked: ObjectLockedError,
  PayloadTooLarge: PayloadTooLargeError,
  UnsupportedMediaType: UnsupportedMediaTypeError,
  RangeNotSatisfiable: RangeNotSatisfiableError,
};

const BY_STATUS: Record<number, ErrorClass> = {
  400: ValidationError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  416: RangeNotSatisfiableError,
};

/** Seconds from a `Retry-After` value: either delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

function numberHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || value.trim() === '') return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

/**
 * The typed error for a failed response. Reads the body (it must not have
 * been read yet). `fallback404` picks the class for a 404 that carries no code.
 */
export async function errorFromResponse(response: Response, fallback404: ErrorClass = NotFoundError): Promise<PailError> {
  let body: unknown;
  let text = '';
  try {
    text = await response.text();
  } catch {
    // A body cut off mid-way: the status is still worth reporting.
  }
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  const fromBody = typeof body === 'object' && body !== null ? (body as { error?: unknown; code?: unknown }) : {};
  const code = typeof fromBody.code === 'string' ? (fromBody.code as ErrorCode) : undefined;
  const message =
    typeof fromBody.error === 'string'
      ? fromBody.error
      : typeof body === 'string' && body.length > 0 && body.length <= 500
        ? body
        : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const details: PailErrorDetails = {
    status: response.status,
    code,
    body,
    requestId: response.headers.get('x-request-id') ?? undefined,
  };

  if (response.status === 429 || code === 'RateLimited') {
    return new RateLimitError(message, {
      ...details,
      retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
      limit: numberHeader(response.headers, 'ratelimit-limit'),
      remaining: numberHeader(response.headers, 'ratelimit-remaining'),
      resetSeconds: numberHeader(response.headers, 'ratelimit-reset'),
    });
  }
  const byCode = code ? BY_CODE[code] : undefined;
  if (byCode) return new byCode(message, details);
  if (response.status === 404) return new fallback404(message, details);
  const byStatus = BY_STATUS[response.status];
  if (byStatus) return new byStatus(message, details);
  if (response.status >= 500) return new ServerError(message, details);
  return new PailError(message, details);
}
