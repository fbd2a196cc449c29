/**
 * @pail/sdk: a typed client for Pail's Developer API, for Node 20+ and browsers.
 *
 *   import { Pail } from '@pail/sdk';
 *   const pail = new Pail({ baseUrl: 'http://localhost:8080', apiKey: process.env.PAIL_API_KEY });
 */
export { Pail } from './client.js';
export type {
  ApiKey,
  BucketObject,
  CreatedApiKey,
  DeleteFolderResult,
  ErrorCode,
  FileDetails,
  FileVersion,
  MoveResult,
  Permission,
  SignedUrl,
  StorageBucket,
  TrashEntry,
  UnfinishedUpload,
  UnfinishedUploadKind,
  UploadResult,
} from './types.js';
export type { BucketId, CallOptions } from './call-options.js';
export type { PailOptions, RetryOptions } from './client-options.js';
export type { BucketLimits, CreateBucketOptions, Visibility } from './bucket-options.js';
export type { FilePage, FileSort, IterateFilesOptions, ListFilesOptions, SortOrder } from './file-listing.js';
export type { ListUnfinishedUploadsOptions, UnfinishedUploads, UploadOptions } from './uploads.js';
export type { ByteRange, DownloadOptions, FileMetadata } from './downloads.js';
export type { SignedUrlOptions } from './signed-urls.js';
export type { FileEdit, ZipOptions } from './file-details.js';
export type { ListTrashOptions, ListVersionsOptions, Tags } from './file-history.js';
export type { CreateKeyOptions } from './keys.js';
export type { MoveOptions } from './moves.js';
export type { LifecycleFilter, LifecycleRule } from './lifecycle.js';
export type { RetentionInput, RetentionOptions } from './object-lock.js';
export type { ResumableBody, ResumableUploadOptions, ResumableUploadResult } from './resumable.js';
export {
  ApiKeyNotFoundError,
  BucketNameTakenError,
  BucketNotFoundError,
  FileExistsError,
  FileNotFoundError,
  ForbiddenError,
  NotFoundError,
  ObjectLockedError,
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
export type { AuditEntry, AuditOptions, AuditPage, CreateWebhookInput, UpdateWebhookInput, Webhook, WebhookDelivery, WebhookWithSecret } from './webhooks.js';
