/**
 * ListObjectVersions: buckets here are never versioned, so each file is
 * listed as its only, latest version (VersionId "null"): a tool that purges
 * every version then deletes every file.
 */
import { ownerXml, sendXml, type Handler } from '../handler-support.js';
import { listingHead, listingPage, listParams, objectXml } from '../object-listing.js';
import { queryValue } from '../query.js';

export const ListObjectVersions: Handler = async (ctx, _request, reply, target) => {
  const params = listParams(target);
  const keyMarker = queryValue(target.query, 'key-marker') ?? '';
  const found = await listingPage(ctx, target, params, { after: keyMarker || undefined });
  const truncated = found.nextCursor !== null;
  const result = listingHead(target, params);
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
};
