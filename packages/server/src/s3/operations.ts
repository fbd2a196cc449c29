/**
 * Which S3 operation a request is. Only the operations Pail serves are
 * recognised, each with the query parameters it understands; anything else
 * (?tagging, ?uploads, PUT ?acl on an object, PUT ?versioning, a copy) is
 * 501 NotImplemented, so it can never be mistaken for a plain PutObject or
 * GetObject and change or reveal an object.
 */
import type { Permission } from '@pail/shared';
import type { IncomingHttpHeaders } from 'node:http';
import { s3Errors } from './errors.js';
import type { QueryPairs } from './query.js';

export type S3Operation =
  | 'ListBuckets'
  | 'CreateBucket'
  | 'HeadBucket'
  | 'DeleteBucket'
  | 'GetBucketLocation'
  | 'GetBucketVersioning'
  | 'GetBucketAcl'
  | 'PutBucketAcl'
  | 'ListObjects'
  | 'ListObjectsV2'
  | 'ListObjectVersions'
  | 'PutObject'
  | 'GetObject'
  | 'HeadObject'
  | 'DeleteObject'
  | 'DeleteObjects'
  | 'GetObjectAcl';

/** The permission a key needs for each (as for the Developer API's operations, http/operations.ts). */
export const S3_PERMISSION: Record<S3Operation, Permission> = {
  ListBuckets: 'read',
  CreateBucket: 'manage',
  HeadBucket: 'read',
  DeleteBucket: 'manage',
  GetBucketLocation: 'read',
  GetBucketVersioning: 'read',
  GetBucketAcl: 'read',
  // A bucket's ACL is its visibility, which only a manage key may change (as POST /:id/visibility).
  PutBucketAcl: 'manage',
  ListObjects: 'read',
  ListObjectsV2: 'read',
  ListObjectVersions: 'read',
  PutObject: 'write',
  GetObject: 'read',
  HeadObject: 'read',
  DeleteObject: 'delete',
  DeleteObjects: 'delete',
  GetObjectAcl: 'read',
};

/** Parameters every request may carry: a presigned url's signature, and the operation name SDKs add (x-id). */
const ALWAYS_ALLOWED = new Set([
  'X-Amz-Algorithm',
  'X-Amz-Content-Sha256',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
  'x-id',
]);
const LIST_V1_PARAMS = new Set(['prefix', 'delimiter', 'marker', 'max-keys', 'encoding-type']);
const LIST_V2_PARAMS = new Set(['list-type', 'prefix', 'delimiter', 'max-keys', 'continuation-token', 'start-after', 'encoding-type', 'fetch-owner']);
const LIST_VERSIONS_PARAMS = new Set(['versions', 'prefix', 'delimiter', 'key-marker', 'version-id-marker', 'max-keys', 'encoding-type']);
/** What a GET may add: a default SDK's x-amz-checksum-mode (objects here carry no checksum to return, as S3's stored without one), and S3's response-* header overrides. */
export const RESPONSE_OVERRIDES = [
  'response-content-type',
  'response-content-disposition',
  'response-cache-control',
  'response-content-encoding',
  'response-content-language',
  'response-expires',
] as const;
const GET_OBJECT_PARAMS = new Set<string>(['x-amz-checksum-mode', ...RESPONSE_OVERRIDES]);

export function operationOf(method: string, bucket: string, key: string, query: QueryPairs, headers: IncomingHttpHeaders): S3Operation {
  const names = query.map(([name]) => name).filter((name) => !ALWAYS_ALLOWED.has(name));
  const only = (allowed: ReadonlySet<string>) => names.every((name) => allowed.has(name));
  const unsupported = () =>
    s3Errors.notImplemented(
      names.length > 0 ? `${method} with ?${names.join('&')}` : `${method} on ${key ? 'an object' : bucket ? 'a bucket' : 'the service'}`,
    );

  if (bucket === '') {
    if (method === 'GET' && names.length === 0) return 'ListBuckets';
    throw unsupported();
  }
  const sole = (name: string) => names.length === 1 && names[0] === name;
  if (key === '') {
    if (method === 'GET' && sole('location')) return 'GetBucketLocation';
    if (method === 'GET' && sole('versioning')) return 'GetBucketVersioning';
    if (method === 'GET' && sole('acl')) return 'GetBucketAcl';
    if (method === 'PUT' && sole('acl')) return 'PutBucketAcl';
    if (method === 'POST' && sole('delete')) return 'DeleteObjects';
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
  if (method === 'GET' && sole('acl')) return 'GetObjectAcl';
  if ((method === 'GET' || method === 'HEAD') && only(GET_OBJECT_PARAMS)) return method === 'GET' ? 'GetObject' : 'HeadObject';
  if (names.length > 0) throw unsupported();
  if (method === 'PUT') {
    if (headers['x-amz-copy-source'] !== undefined) throw s3Errors.notImplemented('CopyObject');
    return 'PutObject';
  }
  if (method === 'GET') return 'GetObject';
  if (method === 'HEAD') return 'HeadObject';
  if (method === 'DELETE') return 'DeleteObject';
  throw unsupported();
}
