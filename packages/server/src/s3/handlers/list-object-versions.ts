/**
 * ListObjectVersions: every version of every key (domain/version-listing.ts),
 * delete markers as DeleteMarker entries; in a bucket never versioned each
 * file is its only, latest version (VersionId "null"), so a tool that purges
 * every version deletes every file.
 */
import { listVersionsPage } from '../../domain/version-listing.js';
import { ownBucket, ownerXml, sendXml, type Handler } from '../handler-support.js';
import { listingHead, listParams } from '../object-listing.js';
import { queryValue } from '../query.js';

export const ListObjectVersions: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const params = listParams(target);
  const keyMarker = queryValue(target.query, 'key-marker') ?? '';
  const versionIdMarker = queryValue(target.query, 'version-id-marker') ?? '';
  const page = await listVersionsPage(ctx.storage, bucket, {
    prefix: params.prefix,
    delimiter: params.delimiter,
    keyMarker,
    versionIdMarker,
    maxKeys: params.maxKeys,
  });
  const result = listingHead(target, params);
  result.KeyMarker = params.encode(keyMarker);
  result.VersionIdMarker = versionIdMarker;
  if (page.next) {
    result.NextKeyMarker = params.encode(page.next.keyMarker);
    if (page.next.versionIdMarker !== null) result.NextVersionIdMarker = page.next.versionIdMarker;
  }
  result.MaxKeys = params.maxKeys;
  if (params.delimiter !== undefined) result.Delimiter = params.encode(params.delimiter);
  result.IsTruncated = page.next !== null;
  if (params.encodingType !== undefined) result.EncodingType = params.encodingType;
  const owner = ownerXml(target.caller);
  const common = (version: (typeof page.versions)[number]) => ({
    Key: params.encode(version.filename),
    VersionId: version.version_id ?? 'null',
    IsLatest: version.is_latest,
    LastModified: version.last_modified,
  });
  result.Version = page.versions
    .filter((version) => !version.is_delete_marker)
    .map((version) => ({ ...common(version), ETag: `"${version.etag}"`, Size: version.size, StorageClass: 'STANDARD', Owner: owner }));
  result.DeleteMarker = page.versions.filter((version) => version.is_delete_marker).map((version) => ({ ...common(version), Owner: owner }));
  result.CommonPrefixes = page.prefixes.map((prefix) => ({ Prefix: params.encode(prefix) }));
  return sendXml(reply, 'ListVersionsResult', result);
};
