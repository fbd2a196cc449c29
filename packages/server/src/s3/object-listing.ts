/**
 * What the three object listings (ListObjects v1, ListObjectsV2 and
 * ListObjectVersions) share: their query parameters, one page of the
 * domain's listObjectRowsPage, and the XML of a listed object. Buckets here
 * are never versioned, so ListObjectVersions lists each file as its only,
 * latest version.
 */
import type { ListedRow } from '../db/repositories/objects.js';
import { listObjectRowsPage, MAX_PAGE_SIZE } from '../domain/objects.js';
import type { AppContext } from '../http/context.js';
import { s3Errors } from './errors.js';
import { ownBucket, type S3Target } from './handler-support.js';
import { queryValue, strictEncode } from './query.js';
import type { XmlElement } from './xml.js';

export interface ListParams {
  prefix: string;
  delimiter: string | undefined;
  encodingType: 'url' | undefined;
  maxKeys: number;
  /** encoding-type=url: keys, prefixes and markers in the answer percent-encoded (slashes kept), so any key survives XML 1.0. */
  encode: (text: string) => string;
}

export function listParams(target: S3Target): ListParams {
  const param = (name: string) => queryValue(target.query, name);
  const encodingType = param('encoding-type') || undefined;
  if (encodingType !== undefined && encodingType !== 'url') throw s3Errors.invalidArgument('Invalid Encoding Method specified in Request');
  const rawMaxKeys = param('max-keys') ?? String(MAX_PAGE_SIZE);
  if (!/^\d{1,9}$/.test(rawMaxKeys)) throw s3Errors.invalidArgument('max-keys must be a whole number');
  return {
    prefix: param('prefix') ?? '',
    delimiter: param('delimiter') || undefined,
    encodingType,
    // S3 answers at most 1000 keys a page whatever max-keys asks for.
    maxKeys: Math.min(Number(rawMaxKeys), MAX_PAGE_SIZE),
    encode: encodingType === 'url' ? (text) => text.split('/').map(strictEncode).join('/') : (text) => text,
  };
}

/** One page after `after` (a key, or a common prefix, which continues past the whole folder), or from a continuation token. */
export async function listingPage(ctx: AppContext, target: S3Target, params: ListParams, position: { cursor?: string; after?: string }) {
  const bucket = await ownBucket(ctx, target);
  if (params.maxKeys === 0) return { rows: [], folders: [], nextCursor: null, last: undefined };
  const result = await listObjectRowsPage(ctx.storage, bucket, {
    prefix: params.prefix,
    delimiter: params.delimiter,
    limit: String(params.maxKeys),
    ...position,
  });
  // Rows and folders come in name order, so the page's last entry is the greater of the last of each.
  const lastRow = result.rows[result.rows.length - 1]?.filename;
  const lastFolder = result.folders[result.folders.length - 1];
  const last = lastRow === undefined ? lastFolder : lastFolder === undefined || lastRow > lastFolder ? lastRow : lastFolder;
  return { ...result, last };
}

/** The elements every listing starts with, in S3's order (SDKs read any order, some tools do not). */
export const listingHead = (target: S3Target, params: ListParams): XmlElement => ({ Name: target.bucket, Prefix: params.encode(params.prefix) });

export const objectXml = (row: ListedRow, params: ListParams): XmlElement => ({
  Key: params.encode(row.filename),
  LastModified: row.updated_at,
  ETag: `"${row.etag}"`,
  Size: row.size,
  StorageClass: 'STANDARD',
});
