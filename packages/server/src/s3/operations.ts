/**
 * Which S3 operation a request is. Only the operations Pail serves are
 * recognised, each with the query parameters it understands; anything else
 * (GET ?torrent, PUT ?lifecycle) is
 * 501 NotImplemented, so it can never be mistaken for a plain PutObject or
 * GetObject and change or reveal an object. A write whose headers ask for
 * what Pail cannot do (encryption, website redirects) is 501 too, never
 * stored without it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Action } from '../domain/authorize.js';
import { CHECKSUM_ALGORITHMS } from '../domain/checksum-algorithms.js';
import { s3Errors } from './errors.js';
import { OBJECT_CANNED_ACLS } from './object-acl.js';
import type { QueryPairs } from './query.js';

export type S3Operation =
  | 'ListBuckets'
  | 'CreateBucket'
  | 'HeadBucket'
  | 'DeleteBucket'
  | 'GetBucketLocation'
  | 'GetBucketVersioning'
  | 'PutBucketVersioning'
  | 'GetBucketAcl'
  | 'PutBucketAcl'
  | 'GetBucketCors'
  | 'PutBucketCors'
  | 'DeleteBucketCors'
  | 'GetBucketTagging'
  | 'PutBucketTagging'
  | 'DeleteBucketTagging'
  | 'GetBucketLifecycleConfiguration'
  | 'PutBucketLifecycleConfiguration'
  | 'DeleteBucketLifecycle'
  | 'GetObjectLockConfiguration'
  | 'PutObjectLockConfiguration'
  | 'GetObjectRetention'
  | 'PutObjectRetention'
  | 'GetObjectLegalHold'
  | 'PutObjectLegalHold'
  | 'GetPublicAccessBlock'
  | 'PutPublicAccessBlock'
  | 'DeletePublicAccessBlock'
  | 'ListObjects'
  | 'ListObjectsV2'
  | 'ListObjectVersions'
  | 'PutObject'
  | 'CopyObject'
  | 'GetObject'
  | 'HeadObject'
  | 'DeleteObject'
  | 'DeleteObjects'
  | 'GetObjectAcl'
  | 'PutObjectAcl'
  | 'GetObjectAttributes'
  | 'GetObjectTagging'
  | 'PutObjectTagging'
  | 'DeleteObjectTagging'
  | 'CreateMultipartUpload'
  | 'UploadPart'
  | 'UploadPartCopy'
  | 'CompleteMultipartUpload'
  | 'AbortMultipartUpload'
  | 'ListParts'
  | 'ListMultipartUploads';

/** The action (domain/authorize.ts) each operation is, as the Pail API's operations are (http/operations.ts). */
export const S3_ACTION: Record<S3Operation, Action> = {
  ListBuckets: 'listBuckets',
  // A key limited to some buckets cannot make one, as on the Pail API.
  CreateBucket: 'createBucket',
  HeadBucket: 'readBucket',
  DeleteBucket: 'manageBucket',
  GetBucketLocation: 'readBucket',
  GetBucketVersioning: 'readBucket',
  PutBucketVersioning: 'manageBucket',
  GetBucketAcl: 'readBucket',
  // A bucket's ACL is its visibility, which only a manage key may change (as POST /:id/visibility).
  PutBucketAcl: 'manageBucket',
  GetBucketCors: 'readBucket',
  PutBucketCors: 'manageBucket',
  DeleteBucketCors: 'manageBucket',
  // Bucket settings as its CORS are.
  GetBucketTagging: 'readBucket',
  PutBucketTagging: 'manageBucket',
  DeleteBucketTagging: 'manageBucket',
  // Rules that delete files: changing them manages the bucket, as on the Pail API.
  GetBucketLifecycleConfiguration: 'readBucket',
  PutBucketLifecycleConfiguration: 'manageBucket',
  DeleteBucketLifecycle: 'manageBucket',
  // A bucket setting, as its CORS; once enabled, object lock cannot be turned off, only its default retention changed.
  GetObjectLockConfiguration: 'readBucket',
  PutObjectLockConfiguration: 'manageBucket',
  // A version's lock is part of what a writer writes (x-amz-object-lock-* on PutObject); shortening one is refused by the rule, not the action.
  GetObjectRetention: 'readObject',
  PutObjectRetention: 'writeObject',
  GetObjectLegalHold: 'readObject',
  PutObjectLegalHold: 'writeObject',
  // A bucket setting, as its CORS: reading it reads the bucket, changing it manages it.
  GetPublicAccessBlock: 'readBucket',
  PutPublicAccessBlock: 'manageBucket',
  DeletePublicAccessBlock: 'manageBucket',
  ListObjects: 'listObjects',
  ListObjectsV2: 'listObjects',
  ListObjectVersions: 'listObjects',
  PutObject: 'writeObject',
  // Writes the target and reads the source, in its own bucket (copy-source.ts).
  CopyObject: 'copyObject',
  GetObject: 'readObject',
  HeadObject: 'readObject',
  DeleteObject: 'deleteObject',
  DeleteObjects: 'deleteObject',
  GetObjectAcl: 'readObject',
  // An object's ACL is its bucket's visibility, which only a manage key may change (as PutBucketAcl), even to what it is.
  PutObjectAcl: 'manageBucket',
  // What HeadObject tells, in another shape.
  GetObjectAttributes: 'readObject',
  GetObjectTagging: 'readObject',
  // An object's tags are part of what a writer writes (x-amz-tagging on PutObject); removing them too.
  PutObjectTagging: 'writeObject',
  DeleteObjectTagging: 'writeObject',
  CreateMultipartUpload: 'writeObject',
  UploadPart: 'writeObject',
  UploadPartCopy: 'copyObject',
  CompleteMultipartUpload: 'writeObject',
  // The Pail API's unfinished uploads ask the same (http/operations.ts).
  AbortMultipartUpload: 'cancelUpload',
  ListParts: 'listUploads',
  ListMultipartUploads: 'listUploads',
};

/** Parameters every request may carry: a presigned url's signature (SigV4's or SigV2's), and the operation name SDKs add (x-id). */
const ALWAYS_ALLOWED = new Set([
  'AWSAccessKeyId',
  'Expires',
  'Signature',
  'X-Amz-Algorithm',
  'X-Amz-Content-Sha256',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
  'x-id',
]);
const LIST_BUCKETS_PARAMS = new Set(['max-buckets', 'continuation-token', 'prefix', 'bucket-region']);
/**
 * What a presigned PUT url of a current SDK carries by default: the checksum of
 * the body it was signed with (of an empty body when it had none) and its
 * algorithm. S3 signs them with the url but does not check the body against
 * them (its presigned urls have no flexible checksums), so they change only
 * the signature; a checksum the url signs as a header is checked (checksums.ts).
 */
const PRESIGNED_PUT_CHECKSUM_PARAMS = new Set([
  'x-amz-sdk-checksum-algorithm',
  ...Object.keys(CHECKSUM_ALGORITHMS).map((algorithm) => `x-amz-checksum-${algorithm}`),
]);
const LIST_V1_PARAMS = new Set(['prefix', 'delimiter', 'marker', 'max-keys', 'encoding-type']);
const LIST_V2_PARAMS = new Set(['list-type', 'prefix', 'delimiter', 'max-keys', 'continuation-token', 'start-after', 'encoding-type', 'fetch-owner']);
const LIST_VERSIONS_PARAMS = new Set(['versions', 'prefix', 'delimiter', 'key-marker', 'version-id-marker', 'max-keys', 'encoding-type']);
/** What a GET or HEAD may add: x-amz-checksum-mode (a default SDK's; object-reads.ts returns stored checksums), partNumber (one part's bytes), and S3's response-* header overrides. */
export const RESPONSE_OVERRIDES = [
  'response-content-type',
  'response-content-disposition',
  'response-cache-control',
  'response-content-encoding',
  'response-content-language',
  'response-expires',
] as const;
const GET_OBJECT_PARAMS = new Set<string>(['x-amz-checksum-mode', 'partNumber', 'versionId', ...RESPONSE_OVERRIDES]);
const LIST_UPLOADS_PARAMS = new Set(['uploads', 'prefix', 'delimiter', 'key-marker', 'upload-id-marker', 'max-uploads', 'encoding-type']);
const LIST_PARTS_PARAMS = new Set(['uploadId', 'max-parts', 'part-number-marker', 'encoding-type']);
const UPLOAD_PART_PARAMS = new Set(['partNumber', 'uploadId']);

export function operationOf(method: string, bucket: string, key: string, query: QueryPairs, headers: IncomingHttpHeaders): S3Operation {
  const names = query.map(([name]) => name).filter((name) => !ALWAYS_ALLOWED.has(name) && !(method === 'PUT' && PRESIGNED_PUT_CHECKSUM_PARAMS.has(name)));
  const only = (allowed: ReadonlySet<string>) => names.every((name) => allowed.has(name));
  const unsupported = () =>
    s3Errors.notImplemented(
      names.length > 0 ? `${method} with ?${names.join('&')}` : `${method} on ${key ? 'an object' : bucket ? 'a bucket' : 'the service'}`,
    );

  if (bucket === '') {
    if (method === 'GET' && only(LIST_BUCKETS_PARAMS)) return 'ListBuckets';
    throw unsupported();
  }
  const sole = (name: string) => names.length === 1 && names[0] === name;
  const writing = (operation: S3Operation): S3Operation => {
    refuseUnsupportedWrite(headers);
    return operation;
  };
  if (key === '') {
    if (method === 'GET' && sole('location')) return 'GetBucketLocation';
    if (method === 'GET' && sole('versioning')) return 'GetBucketVersioning';
    if (method === 'PUT' && sole('versioning')) return 'PutBucketVersioning';
    if (method === 'GET' && sole('acl')) return 'GetBucketAcl';
    if (method === 'PUT' && sole('acl')) return 'PutBucketAcl';
    if (method === 'GET' && sole('cors')) return 'GetBucketCors';
    if (method === 'PUT' && sole('cors')) return 'PutBucketCors';
    if (method === 'DELETE' && sole('cors')) return 'DeleteBucketCors';
    if (method === 'GET' && sole('tagging')) return 'GetBucketTagging';
    if (method === 'PUT' && sole('tagging')) return 'PutBucketTagging';
    if (method === 'DELETE' && sole('tagging')) return 'DeleteBucketTagging';
    if (method === 'GET' && sole('lifecycle')) return 'GetBucketLifecycleConfiguration';
    if (method === 'PUT' && sole('lifecycle')) return 'PutBucketLifecycleConfiguration';
    if (method === 'DELETE' && sole('lifecycle')) return 'DeleteBucketLifecycle';
    if (method === 'GET' && sole('object-lock')) return 'GetObjectLockConfiguration';
    if (method === 'PUT' && sole('object-lock')) return 'PutObjectLockConfiguration';
    if (method === 'GET' && sole('publicAccessBlock')) return 'GetPublicAccessBlock';
    if (method === 'PUT' && sole('publicAccessBlock')) return 'PutPublicAccessBlock';
    if (method === 'DELETE' && sole('publicAccessBlock')) return 'DeletePublicAccessBlock';
    if (method === 'POST' && sole('delete')) return 'DeleteObjects';
    if (method === 'GET' && names.includes('uploads') && only(LIST_UPLOADS_PARAMS)) return 'ListMultipartUploads';
    if (method === 'GET' && names.includes('versions') && only(LIST_VERSIONS_PARAMS)) return 'ListObjectVersions';
    if (method === 'GET' && names.includes('list-type')) {
      if (query.some(([name, value]) => name === 'list-type' && value === '2') && only(LIST_V2_PARAMS)) return 'ListObjectsV2';
      throw unsupported();
    }
    if (method === 'GET' && only(LIST_V1_PARAMS)) return 'ListObjects';
    if (names.length > 0) throw unsupported();
    if (method === 'PUT') return 'CreateBucket';
    if (method === 'HEAD') return 'HeadBucket';
    if (method === 'DELETE') return 'DeleteBucket';
    throw unsupported();
  }
  // One version of a key, for good (domain/versions.ts; a locked one is refused: object-lock.ts).
  if (method === 'DELETE' && sole('versionId')) return 'DeleteObject';
  // An object's sub-resources, of its current version or of the one versionId names.
  const subresource = (name: string) => names.includes(name) && only(new Set([name, 'versionId']));
  if (method === 'GET' && subresource('acl')) return 'GetObjectAcl';
  if (method === 'PUT' && subresource('acl')) return 'PutObjectAcl';
  if (method === 'GET' && subresource('attributes')) return 'GetObjectAttributes';
  if (method === 'GET' && subresource('retention')) return 'GetObjectRetention';
  if (method === 'PUT' && subresource('retention')) return 'PutObjectRetention';
  if (method === 'GET' && subresource('legal-hold')) return 'GetObjectLegalHold';
  if (method === 'PUT' && subresource('legal-hold')) return 'PutObjectLegalHold';
  if (method === 'GET' && subresource('tagging')) return 'GetObjectTagging';
  if (method === 'PUT' && subresource('tagging')) return 'PutObjectTagging';
  if (method === 'DELETE' && subresource('tagging')) return 'DeleteObjectTagging';
  if (method === 'POST' && sole('uploads')) return writing('CreateMultipartUpload');
  if (method === 'POST' && sole('uploadId')) return 'CompleteMultipartUpload';
  if (method === 'DELETE' && sole('uploadId')) return 'AbortMultipartUpload';
  if (method === 'GET' && names.includes('uploadId') && only(LIST_PARTS_PARAMS)) return 'ListParts';
  // Only with both parameters is a PUT a part (its bytes copied when it names a copy source); never a PutObject.
  if (method === 'PUT' && names.length === 2 && names.includes('partNumber') && names.includes('uploadId') && only(UPLOAD_PART_PARAMS)) {
    return headers['x-amz-copy-source'] !== undefined ? 'UploadPartCopy' : 'UploadPart';
  }
  if ((method === 'GET' || method === 'HEAD') && only(GET_OBJECT_PARAMS)) return method === 'GET' ? 'GetObject' : 'HeadObject';
  if (names.length > 0) throw unsupported();
  if (method === 'PUT') return writing(headers['x-amz-copy-source'] !== undefined ? 'CopyObject' : 'PutObject');
  if (method === 'GET') return 'GetObject';
  if (method === 'HEAD') return 'HeadObject';
  if (method === 'DELETE') return 'DeleteObject';
  throw unsupported();
}

/** Write headers naming something Pail never does; any value asks for it. */
const UNSUPPORTED_WRITE_HEADERS = ['x-amz-website-redirect-location'];

/**
 * 501 for a new object's headers (or POST Object's form fields, named the
 * same) that ask for what Pail cannot do: storing the object without it
 * would be a success that did nothing. Pail does not encrypt
 * at rest (SSE-S3, SSE-KMS and SSE-C alike; MinIO without KMS answers the
 * same), has no website redirects, one storage class and no
 * per-object ACLs (grants, or canned ACLs beyond the three object-acl.ts
 * weighs). STANDARD is the truth, so it passes. (Tags are kept: tagging.ts.)
 */
export function refuseUnsupportedWrite(headers: Readonly<Record<string, string | string[] | undefined>>): void {
  // One pass over the names (all those weighed here are x-amz-*); the grants are refused after the other checks, as S3 orders them.
  let grant: string | undefined;
  for (const name of Object.keys(headers)) {
    if (!name.startsWith('x-amz-') || headers[name] === undefined) continue;
    if (name.startsWith('x-amz-server-side-encryption') || UNSUPPORTED_WRITE_HEADERS.includes(name)) throw s3Errors.notImplemented(name);
    if (grant === undefined && name.startsWith('x-amz-grant-')) grant = name;
  }
  // Whether a canned ACL fits the bucket is the handler's to say (object-acl.ts); grants and other canned ACLs never do.
  const acl = headers['x-amz-acl'];
  if (acl !== undefined && !OBJECT_CANNED_ACLS.has(String(acl))) throw s3Errors.notImplemented(`x-amz-acl: ${String(acl)} on an object`);
  if (grant !== undefined) throw s3Errors.notImplemented(`${grant} (ACL grants)`);
  const storageClass = headers['x-amz-storage-class'];
  if (storageClass !== undefined && storageClass !== 'STANDARD') throw s3Errors.notImplemented(`x-amz-storage-class ${String(storageClass)}`);
}

/**
 * A browser form upload (POST Object with a signed policy, post-object.ts):
 * a POST of multipart/form-data to a bucket, with no query and no
 * Authorization (the signature is a form field).
 */
export function isPostObject(method: string, bucket: string, key: string, query: QueryPairs, headers: IncomingHttpHeaders): boolean {
  const contentType = headers['content-type'] ?? '';
  const form = /^multipart\/form-data\s*;/i.test(contentType);
  return method === 'POST' && bucket !== '' && key === '' && query.length === 0 && headers.authorization === undefined && form;
}
