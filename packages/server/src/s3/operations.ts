/**
 * Which S3 operation a request is. Only the operations this slice serves
 * are recognised, each with the query parameters it understands; anything
 * else (a sub-resource such as ?acl, ?tagging or ?uploads, a copy, POST) is
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
  | 'ListObjectsV2'
  | 'PutObject'
  | 'GetObject'
  | 'HeadObject'
  | 'DeleteObject';

/** The permission a key needs for each (as for the Developer API's operations, http/operations.ts). */
export const S3_PERMISSION: Record<S3Operation, Permission> = {
  ListBuckets: 'read',
  CreateBucket: 'manage',
  HeadBucket: 'read',
  DeleteBucket: 'manage',
  GetBucketLocation: 'read',
  ListObjectsV2: 'read',
  PutObject: 'write',
  GetObject: 'read',
  HeadObject: 'read',
  DeleteObject: 'delete',
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
const LIST_V2_PARAMS = new Set(['list-type', 'prefix', 'delimiter', 'max-keys', 'continuation-token', 'start-after', 'encoding-type', 'fetch-owner']);

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
  if (key === '') {
    if (method === 'GET' && names.length === 1 && names[0] === 'location') return 'GetBucketLocation';
    if (method === 'GET' && query.some(([name, value]) => name === 'list-type' && value === '2') && only(LIST_V2_PARAMS)) return 'ListObjectsV2';
    if (method === 'GET' && names.length === 0) throw s3Errors.notImplemented('ListObjects (version 1; use ListObjectsV2)');
    if (names.length > 0) throw unsupported();
    if (method === 'PUT') return 'CreateBucket';
    if (method === 'HEAD') return 'HeadBucket';
    if (method === 'DELETE') return 'DeleteBucket';
    throw unsupported();
  }
  // A default SDK presigns GETs with x-amz-checksum-mode=ENABLED: objects here carry no checksum, so, as S3 does
  // for objects stored without one, there is none to return and the request is a plain read.
  if ((method === 'GET' || method === 'HEAD') && names.every((name) => name === 'x-amz-checksum-mode')) return method === 'GET' ? 'GetObject' : 'HeadObject';
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
