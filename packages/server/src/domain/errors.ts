/**
 * One error type for everything the API refuses, with named factories so each
 * message is written once. The HTTP status comes from the shared code table.
 */
import { ERROR_STATUS, formatBytes, type ErrorCode } from '@pail/shared';

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    // A refusal (4xx) is an answer, not a fault: nothing reads its stack, and
    // capturing one was a large share of the CPU spent answering a flood of
    // 429s (docs/performance.md). Faults (5xx) keep theirs: it is logged.
    const stackTraceLimit = Error.stackTraceLimit;
    if (ERROR_STATUS[code] < 500) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}

export const errors = {
  validation: (message: string) => new AppError('ValidationError', message),
  unauthorized: () => new AppError('Unauthorized', 'Unauthorized'),
  invalidCredentials: () => new AppError('Unauthorized', 'Invalid email or password'),
  forbidden: (message: string) => new AppError('Forbidden', message),
  signupClosed: () => new AppError('SignupClosed', 'Signup is closed on this server; ask an operator for an account'),
  notFound: () => new AppError('NotFound', 'Not found'),
  bucketNotFound: () => new AppError('BucketNotFound', 'Bucket not found'),
  fileNotFound: () => new AppError('FileNotFound', 'File not found'),
  versioningLocked: () =>
    new AppError('InvalidBucketState', 'An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.'),
  invalidVersionId: () => new AppError('ValidationError', 'Invalid version id specified'),
  versionNotFound: () => new AppError('VersionNotFound', 'The specified version does not exist.'),
  nothingToZip: () => new AppError('FileNotFound', 'Nothing to zip: the folder or selection holds no file'),
  uploadNotFound: () => new AppError('NotFound', 'Upload not found (it finished, expired or was terminated)'),
  noLifecycle: () => new AppError('NotFound', 'The bucket has no lifecycle rules'),
  offsetMismatch: (message: string) => new AppError('OffsetMismatch', message),
  apiKeyNotFound: () => new AppError('ApiKeyNotFound', 'API key not found'),
  fileExists: (filename: string) => new AppError('FileExists', `A file named ${filename} is there already; move with overwrite: true to replace it`),
  bucketNameTaken: () => new AppError('BucketNameTaken', 'Bucket name already exists'),
  emailTaken: () => new AppError('EmailTaken', 'An account with this email already exists'),
  storageLimit: (plan: string, capBytes: number) =>
    new AppError('StorageLimitExceeded', `Storage limit exceeded: the ${plan} plan allows ${formatBytes(capBytes)}`),
  folderMarkerNotEmpty: () => new AppError('ValidationError', 'A folder marker (a name ending in /) must be empty'),
  publicAccessBlocked: () => new AppError('Forbidden', "This bucket's public access block (BlockPublicAcls) forbids making it public; remove the block first"),
  signedUrlRefused: (why: string) => new AppError('Forbidden', `This signed url ${why}`),
  contentTypeRefused: (allowed: string) => new AppError('UnsupportedMediaType', `This signed url uploads only ${allowed}`),
  unsupportedMediaType: (message: string) => new AppError('UnsupportedMediaType', message),
  fileTooLarge: (maxBytes: number) => new AppError('PayloadTooLarge', `File too large: the limit is ${formatBytes(maxBytes)} per file`),
  rangeNotSatisfiable: (size: number) => new AppError('RangeNotSatisfiable', 'Range not satisfiable', { 'content-range': `bytes */${size}` }),
  headersLate: () => new AppError('RequestTimeout', "Request timeout: the request's headers did not all arrive in time"),
  headersTooLarge: () => new AppError('HeadersTooLarge', 'Request header fields too large: at most 16 KiB of headers'),
  rateLimited: (retryAfterSeconds: number) => new AppError('RateLimited', 'Rate limit exceeded', { 'retry-after': String(retryAfterSeconds) }),
  unavailable: (message: string) => new AppError('ServiceUnavailable', message),
  tooManyInProgress: (max: number) =>
    new AppError('SlowDown', `Slow down: ${max} requests from your address are in progress already; retry when one has finished`, { 'retry-after': '1' }),
  insufficientStorage: () => new AppError('InsufficientStorage', 'Insufficient storage: the server has no disk space left for this upload; try again later'),
  tooManyUploads: (max: number) =>
    new AppError('RateLimited', `Too many uploads in progress: at most ${max} at a time; try again when one has finished`, { 'retry-after': '1' }),
  tooMany: (what: 'buckets' | 'API keys', max: number) => new AppError('Forbidden', `Limit reached: a user may have at most ${max} ${what}; delete one first`),
};
