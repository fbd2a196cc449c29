/** ListObjectsV2: a page of the bucket's objects from a continuation token or after start-after (object-listing.ts). */
import { ownerXml, sendXml, type Handler } from '../handler-support.js';
import { listingHead, listingPage, listParams, objectXml } from '../object-listing.js';
import { queryValue } from '../query.js';

export const ListObjectsV2: Handler = async (ctx, _request, reply, target) => {
  const params = listParams(target);
  // An empty token starts at the beginning, and is echoed as it came (S3 does both).
  const sentToken = queryValue(target.query, 'continuation-token');
  const token = sentToken || undefined;
  const startAfter = queryValue(target.query, 'start-after') || undefined;
  const fetchOwner = queryValue(target.query, 'fetch-owner') === 'true';
  const found = await listingPage(ctx, target, params, { cursor: token, after: startAfter });
  const result = listingHead(target, params);
  if (params.delimiter !== undefined) result.Delimiter = params.encode(params.delimiter);
  Object.assign(result, { MaxKeys: params.maxKeys, KeyCount: found.rows.length + found.folders.length, IsTruncated: found.nextCursor !== null });
  if (params.encodingType !== undefined) result.EncodingType = params.encodingType;
  if (sentToken !== undefined) result.ContinuationToken = sentToken;
  if (found.nextCursor !== null) result.NextContinuationToken = found.nextCursor;
  if (startAfter !== undefined) result.StartAfter = params.encode(startAfter);
  const owner = fetchOwner ? { Owner: ownerXml(target.caller) } : {};
  result.Contents = found.rows.map((row) => ({ ...objectXml(row, params), ...owner }));
  result.CommonPrefixes = found.folders.map((folder) => ({ Prefix: params.encode(folder) }));
  return sendXml(reply, 'ListBucketResult', result);
};
