/**
 * @pail/sdk: a typed client for Pail's Developer API, for Node 20+ and browsers.
 *
 *   import { Pail } from '@pail/sdk';
 *   const pail = new Pail({ baseUrl: 'http://localhost:8080', apiKey: process.env.PAIL_API_KEY });
 */
export { Pail } from './client.js';
export type {
  ApiKey,
  BucketId,
  BucketLimits,
  BucketObject,
  ByteRange,
  CallOptions,
  CreateBucketOptions,
  CreatedApiKey,
  CreateKeyOptions,
  DownloadOptions,
  ErrorCode,
  FileMetadata,
  FilePage,
  FileSort,
  IterateFilesOptions,
  ListFilesOptions,
  ListUnfinishedUploadsOptions,
  PailOptions,
  Permission,
  ResumableBody,
  ResumableUploadOptions,
  ResumableUploadResult,
  RetryOptions,
  SortOrder,
  SignedUrl,
  SignedUrlOptions,
  StorageBucket,
  UnfinishedUpload,
  UnfinishedUploadKind,
  UnfinishedUploads,
  UploadOptions,
  UploadResult,
  Visibility,
} from './client.js';
export {
  ApiKeyNotFoundError,
  BucketNameTakenError,
  BucketNotFoundError,
  FileNotFoundError,
  ForbiddenError,
  NotFoundError,
  PailError,
  PayloadTooLargeError,
  RangeNotSatisfiableError,
  RateLimitError,
  ServerError,
  StorageLimitExceededError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from './errors.js';
export type { PailErrorDetails, RateLimitDetails } from './errors.js';
export type { PathSource, UploadBody } from './upload-body.js';
