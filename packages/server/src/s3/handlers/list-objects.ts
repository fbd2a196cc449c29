/** ListObjects (v1): a page of the bucket's objects after a marker (object-listing.ts). */
import { ownerXml, sendXml, type Handler } from '../handler-support.js';
import { listingHead, listingPage, listParams, objectXml } from '../object-listing.js';
import { queryValue } from '../query.js';

export const ListObjects: Handler = async (ctx, _request, reply, target) => {
  const params = listParams(target);
  const marker = queryValue(target.query, 'marker') ?? '';
  const found = await listingPage(ctx, target, params, { after: marker || undefined });
  const truncated = found.nextCursor !== null;
  const result = listingHead(target, params);
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
};
