/**
 * The API's records, response bodies and error codes, as the SDK hands them
 * out: the contract's own types (@pail/shared), declared once there from the
 * schemas the server validates and documents with. Types only: the SDK loads
 * nothing from @pail/shared at run time (browsers get its modules as they are).
 */
export type {
  ApiKey,
  BucketObject,
  CreatedApiKey,
  DeleteFolderResult,
  ErrorCode,
  FileDetails,
  FileVersion,
  ListBucketsResponse as ListBucketsBody,
  ListFilesResponse as ListFilesBody,
  ListUnfinishedUploadsResponse as ListUnfinishedUploadsBody,
  MoveResult,
  Permission,
  SignedUrl,
  StorageBucket,
  TrashEntry,
  UnfinishedUpload,
  UnfinishedUploadKind,
  UploadResult,
} from '@pail/shared';
