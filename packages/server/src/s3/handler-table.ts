/**
 * Which handler does each S3 operation: one table, one file per operation
 * (s3/README.md). The listener looks the operation up here once it is
 * known and the caller may do it.
 */
import { AbortMultipartUpload } from './handlers/abort-multipart-upload.js';
import { CompleteMultipartUpload } from './handlers/complete-multipart-upload.js';
import { CopyObject } from './handlers/copy-object.js';
import { CreateBucket } from './handlers/create-bucket.js';
import { CreateMultipartUpload } from './handlers/create-multipart-upload.js';
import { DeleteBucket } from './handlers/delete-bucket.js';
import { DeleteBucketCors } from './handlers/delete-bucket-cors.js';
import { DeleteBucketLifecycle } from './handlers/delete-bucket-lifecycle.js';
import { DeleteBucketTagging } from './handlers/delete-bucket-tagging.js';
import { DeleteObject } from './handlers/delete-object.js';
import { DeleteObjects } from './handlers/delete-objects.js';
import { DeleteObjectTagging } from './handlers/delete-object-tagging.js';
import { DeletePublicAccessBlock } from './handlers/delete-public-access-block.js';
import { GetBucketAcl } from './handlers/get-bucket-acl.js';
import { GetBucketCors } from './handlers/get-bucket-cors.js';
import { GetBucketLifecycleConfiguration } from './handlers/get-bucket-lifecycle-configuration.js';
import { GetBucketTagging } from './handlers/get-bucket-tagging.js';
import { GetBucketLocation } from './handlers/get-bucket-location.js';
import { GetBucketVersioning } from './handlers/get-bucket-versioning.js';
import { PutBucketVersioning } from './handlers/put-bucket-versioning.js';
import { GetObject } from './handlers/get-object.js';
import { GetObjectAcl } from './handlers/get-object-acl.js';
import { GetObjectAttributes } from './handlers/get-object-attributes.js';
import { GetObjectLegalHold } from './handlers/get-object-legal-hold.js';
import { GetObjectLockConfiguration } from './handlers/get-object-lock-configuration.js';
import { GetObjectRetention } from './handlers/get-object-retention.js';
import { GetObjectTagging } from './handlers/get-object-tagging.js';
import { GetPublicAccessBlock } from './handlers/get-public-access-block.js';
import { HeadBucket } from './handlers/head-bucket.js';
import { HeadObject } from './handlers/head-object.js';
import { ListBuckets } from './handlers/list-buckets.js';
import { ListMultipartUploads } from './handlers/list-multipart-uploads.js';
import { ListObjectVersions } from './handlers/list-object-versions.js';
import { ListObjects } from './handlers/list-objects.js';
import { ListObjectsV2 } from './handlers/list-objects-v2.js';
import { ListParts } from './handlers/list-parts.js';
import { PutBucketAcl } from './handlers/put-bucket-acl.js';
import { PutBucketCors } from './handlers/put-bucket-cors.js';
import { PutBucketLifecycleConfiguration } from './handlers/put-bucket-lifecycle-configuration.js';
import { PutBucketTagging } from './handlers/put-bucket-tagging.js';
import { PutObject } from './handlers/put-object.js';
import { PutObjectAcl } from './handlers/put-object-acl.js';
import { PutObjectLegalHold } from './handlers/put-object-legal-hold.js';
import { PutObjectLockConfiguration } from './handlers/put-object-lock-configuration.js';
import { PutObjectRetention } from './handlers/put-object-retention.js';
import { PutObjectTagging } from './handlers/put-object-tagging.js';
import { PutPublicAccessBlock } from './handlers/put-public-access-block.js';
import { UploadPart } from './handlers/upload-part.js';
import { UploadPartCopy } from './handlers/upload-part-copy.js';
import type { Handler } from './handler-support.js';
import type { S3Operation } from './operations.js';

export const HANDLERS: Record<S3Operation, Handler> = {
  ListBuckets,
  CreateBucket,
  HeadBucket,
  DeleteBucket,
  GetBucketLocation,
  GetBucketVersioning,
  PutBucketVersioning,
  GetBucketAcl,
  PutBucketAcl,
  GetBucketCors,
  PutBucketCors,
  DeleteBucketCors,
  GetBucketTagging,
  PutBucketTagging,
  DeleteBucketTagging,
  GetBucketLifecycleConfiguration,
  PutBucketLifecycleConfiguration,
  DeleteBucketLifecycle,
  GetObjectLockConfiguration,
  PutObjectLockConfiguration,
  GetObjectRetention,
  PutObjectRetention,
  GetObjectLegalHold,
  PutObjectLegalHold,
  GetPublicAccessBlock,
  PutPublicAccessBlock,
  DeletePublicAccessBlock,
  ListObjects,
  ListObjectsV2,
  ListObjectVersions,
  PutObject,
  CopyObject,
  GetObject,
  HeadObject,
  DeleteObject,
  DeleteObjects,
  GetObjectAcl,
  PutObjectAcl,
  GetObjectAttributes,
  GetObjectTagging,
  PutObjectTagging,
  DeleteObjectTagging,
  CreateMultipartUpload,
  UploadPart,
  UploadPartCopy,
  CompleteMultipartUpload,
  AbortMultipartUpload,
  ListParts,
  ListMultipartUploads,
};
