/**
 * The API's records and error codes, as the SDK hands them out. They are the
 * contract of @pail/shared restated, so that the published type declarations
 * stand on their own; contract-check.ts fails the build if the two drift apart.
 */

export interface StorageBucket {
  id: number;
  name: string;
  public: boolean;
  object_count: number;
  total_bytes: number;
  /** ISO 8601 */
  created_at: string;
}

export interface BucketObject {
  /** `<bucket_id>/<filename>` */
  id: string;
  bucket_id: number;
  /** Key of the object in the server's blob store. */
  storage_name: string;
  filename: string;
  size: number;
  content_type: string;
  /** Download URL: `<storage_host>/<storage_bucket_name>/<filename>`. */
  url: string;
  /** ISO 8601 */
  created_at: string;
}

export interface UploadResult {
  filename: string;
  size: number;
  /** True when a file of that name was replaced. */
  updated: boolean;
}

/** The machine-readable `code` of an error body. */
export type ErrorCode =
  | 'ValidationError'
  | 'Unauthorized'
  | 'Forbidden'
  | 'SignupClosed'
  | 'NotFound'
  | 'BucketNotFound'
  | 'FileNotFound'
  | 'ApiKeyNotFound'
  | 'MethodNotAllowed'
  | 'BucketNameTaken'
  | 'EmailTaken'
  | 'StorageLimitExceeded'
  | 'PayloadTooLarge'
  | 'UnsupportedMediaType'
  | 'RangeNotSatisfiable'
  | 'RateLimited'
  | 'InternalError'
  | 'ServiceUnavailable';

/** Response bodies, as the client reads them. */
export interface ListBucketsBody {
  data: StorageBucket[];
  buckets: StorageBucket[];
}
export interface ListFilesBody {
  data: BucketObject[];
  objects: BucketObject[];
  next_cursor: string | null;
}
