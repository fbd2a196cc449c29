/**
 * Every error the API can return, declared once. The server maps each code to
 * its HTTP status; the SDK maps each code to a typed error class. Bodies are
 * `{error: message, code}`: `error` is for people, `code` is for programs.
 */
export const ERROR_STATUS = {
  ValidationError: 400,
  Unauthorized: 401,
  Forbidden: 403,
  SignupClosed: 403,
  NotFound: 404,
  BucketNotFound: 404,
  FileNotFound: 404,
  /** A file has no version of that id (versioned buckets). */
  VersionNotFound: 404,
  ApiKeyNotFound: 404,
  BucketNameTaken: 409,
  EmailTaken: 409,
  StorageLimitExceeded: 409,
  /** A version under retention or legal hold (object lock), or a bucket or user holding one: the message says until when. */
  ObjectLocked: 403,
  /** A change the bucket's state does not allow: suspending versioning of a bucket with object lock, or turning lock on an unversioned one. */
  InvalidBucketState: 409,
  /** A move's target name holds a file already (and the move did not say overwrite). */
  FileExists: 409,
  /** A resumable upload's request at another offset than the upload's (tus: 409). */
  OffsetMismatch: 409,
  /** A request whose headers did not all arrive within HEADERS_TIMEOUT_SECONDS. */
  RequestTimeout: 408,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  RangeNotSatisfiable: 416,
  /** A request whose headers are larger than the server takes (16 KiB, Node's limit). */
  HeadersTooLarge: 431,
  RateLimited: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  /** One client address has MAX_CONNECTIONS_PER_IP requests in progress already (S3: 503 SlowDown). */
  SlowDown: 503,
  InsufficientStorage: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  error: string;
  code?: ErrorCode;
}
