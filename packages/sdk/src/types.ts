/**
 * The API's records, response bodies and error codes, as the SDK hands them
 * out: the contract's own types (@pail/shared), declared once there from the
 * schemas the server validates and documents with.
 */
export type {
  BucketObject,
  ErrorCode,
  ListBucketsResponse as ListBucketsBody,
  ListFilesResponse as ListFilesBody,
  StorageBucket,
  UploadResult,
} from '@pail/shared';
