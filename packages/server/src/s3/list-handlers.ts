/**
 * The three listings S3 has (ListObjects v1, ListObjectsV2 and
 * ListObjectVersions), all one page of the domain's listObjectRowsPage in
 * different XML. Buckets here are never versioned, so each file is listed
 * as its only, latest version (VersionId "null"): a tool that purges every
 * version then deletes every file.
 */
import type { ObjectRow } from '../db/schema.js';
import { listObjectRowsPage, MAX_PAGE_SIZE } from '../domain/objects.js';
import type { AppContext } from '../http/context.js';
import { s3Errors } from './errors.js';
import { ownBucket, ownerXml, sendXml, type Handler, type S3Target } from './handler-support.js';
import { queryValue, strictEncode } from './query.js';
import type { XmlElement } from './xml.js';

interface ListParams {
  prefix: string;
  delimiter: string | undefined;
  encodingType: 'url' | undefined;
  maxKeys: number;
  /** encoding-type=url: keys, prefixes and markers in the answer percent-encoded (slashes kept), so any key survives XML 1.0. */
  encode: (text: string) => string;
}

function listParams(target: S3Target): ListParams {
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
async function page(ctx: AppContext, target: S3Target, params: ListParams, position: { cursor?: string; after?: string }) {
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
const head = (target: S3Target, params: ListParams): XmlElement => ({ Name: target.bucket, Prefix: params.encode(params.prefix) });

const objectXml = (row: ObjectRow, params: ListParams): XmlElement => ({
  Key: params.encode(row.filename),
  LastModified: row.updated_at,
  ETag: `"${row.etag}"`,
  Size: row.size,
  StorageClass: 'STANDARD',
});

export const LIST_HANDLERS: Record<'ListObjects' | 'ListObjectsV2' | 'ListObjectVersions', Handler> = {
  async ListObjects(ctx, _request, reply, target) {
    const params = listParams(target);
    const marker = queryValue(target.query, 'marker') ?? '';
    const found = await page(ctx, target, params, { after: marker || undefined });
    const truncated = found.nextCursor !== null;
    const result = head(target, params);
    result.Marker = params.encode(marker);
    // S3 sends NextMarker only with a delimiter; without one, clients continue after the last key.
    if (truncated && params.delimiter !== undefined && found.last !== undefined) result.NextMarker = params.encode(found.last);
    result.MaxKeys = params.maxKeys;
    if (params.delimiter !== undefined) result.Delimiter = params.encode(params.delimiter);
    result.IsTruncated = truncated;
    if (params.encodingType !== undefined) result.EncodingType = params.encodingType;
    const owner = ownerXml(target.caller);
    result.Contents = found.rows.map((row) => ({ ...objectXml(row, params), Owner: owner }));
    result.CommonPrefixes = found.folders.map((folder) => ({ Prefix: params.encode(folder) }));
    return sendXml(reply, 'ListBucketResult', result);
  },

  async ListObjectsV2(ctx, _request, reply, target) {
    const params = listParams(target);
    const token = queryValue(target.query, 'continuation-token') || undefined;
    const startAfter = queryValue(target.query, 'start-after') || undefined;
    const fetchOwner = queryValue(target.query, 'fetch-owner') === 'true';
    const found = await page(ctx, target, params, { cursor: token, after: startAfter });
    const result = head(target, params);
    if (params.delimiter !== undefined) result.Delimiter = params.encode(params.delimiter);
    Object.assign(result, { MaxKeys: params.maxKeys, KeyCount: found.rows.length + found.folders.length, IsTruncated: found.nextCursor !== null });
    if (params.encodingType !== undefined) result.EncodingType = params.encodingType;
    if (token !== undefined) result.ContinuationToken = token;
    if (found.nextCursor !== null) result.NextContinuationToken = found.nextCursor;
    if (startAfter !== undefined) result.StartAfter = params.encode(startAfter);
    const owner = fetchOwner ? { Owner: ownerXml(target.caller) } : {};
    result.Contents = found.rows.map((row) => ({ ...objectXml(row, params), ...owner }));
    result.CommonPrefixes = found.folders.map((folder) => ({ Prefix: params.encode(folder) }));
    return sendXml(reply, 'ListBucketResult', result);
  },

  async ListObjectVersions(ctx, _request, reply, target) {
    const params = listParams(target);
    const keyMarker = queryValue(target.query, 'key-marker') ?? '';
    const found = await page(ctx, target, params, { after: keyMarker || undefined });
    const truncated = found.nextCursor !== null;
    const result = head(target, params);
    result.KeyMarker = params.encode(keyMarker);
    result.VersionIdMarker = queryValue(target.query, 'version-id-marker') ?? '';
    if (truncated && found.last !== undefined) Object.assign(result, { NextKeyMarker: params.encode(found.last), NextVersionIdMarker: 'null' });
    result.MaxKeys = params.maxKeys;
    if (params.delimiter !== undefined) result.Delimiter = params.encode(params.delimiter);
    result.IsTruncated = truncated;
    if (params.encodingType !== undefined) result.EncodingType = params.encodingType;
    const owner = ownerXml(target.caller);
    result.Version = found.rows.map((row) => {
      const { Key, ...rest } = objectXml(row, params);
      return { Key, VersionId: 'null', IsLatest: true, ...rest, Owner: owner };
    });
    result.CommonPrefixes = found.folders.map((folder) => ({ Prefix: params.encode(folder) }));
    return sendXml(reply, 'ListVersionsResult', result);
  },
};
