/**
 * ListMultipartUploads: a page of a bucket's unfinished uploads, rolled up
 * into common prefixes with a delimiter, in S3's XML.
 */
import { pastPrefix } from '../../db/name-ranges.js';
import { listUploads, type MultipartUploadRow } from '../../db/repositories/multipart.js';
import { CHECKSUM_ALGORITHMS } from '../../domain/checksum-algorithms.js';
import type { AppContext } from '../../http/context.js';
import { ownBucket, ownerXml, sendXml, type Handler } from '../handler-support.js';
import { encoderOf, pageSize } from '../multipart-support.js';
import { queryValue } from '../query.js';

type UploadEntry = { upload: MultipartUploadRow } | { commonPrefix: string };

/**
 * Up to `limit` entries after the markers: uploads, and with a delimiter the
 * keys' common prefixes, each once, in key order, as S3 rolls them up. A
 * key-marker that is itself a common prefix resumes after all of it.
 */
async function uploadEntries(
  ctx: AppContext,
  bucketId: number,
  page: { prefix: string; delimiter: string | undefined; keyMarker: string; uploadIdMarker: string; limit: number },
): Promise<UploadEntry[]> {
  const { prefix, delimiter, limit } = page;
  if (delimiter === undefined) {
    return (await listUploads(ctx.db, bucketId, { ...page })).map((upload) => ({ upload }));
  }
  const entries: UploadEntry[] = [];
  // Where the next query starts: after an upload (its key and id), or at the first key past a common prefix.
  let next: { keyMarker: string; uploadIdMarker: string; from?: string } = { keyMarker: page.keyMarker, uploadIdMarker: page.uploadIdMarker };
  const pastAll = (commonPrefix: string) => {
    const from = pastPrefix(commonPrefix);
    return from === null ? null : { keyMarker: '', uploadIdMarker: '', from };
  };
  // A marker that is itself a common prefix (the prefix, then a part ending at the first delimiter after it).
  const marker = page.keyMarker;
  if (marker.length > prefix.length && marker.startsWith(prefix) && marker.indexOf(delimiter, prefix.length) === marker.length - delimiter.length) {
    const past = pastAll(page.keyMarker);
    if (past === null) return entries;
    next = past;
  }
  while (entries.length < limit) {
    const wanted = limit - entries.length;
    const rows = await listUploads(ctx.db, bucketId, { prefix, ...next, limit: wanted });
    let rolledUp = false;
    for (const upload of rows) {
      const cut = upload.filename.indexOf(delimiter, prefix.length);
      if (cut < 0) {
        entries.push({ upload });
        next = { keyMarker: upload.filename, uploadIdMarker: upload.id };
        continue;
      }
      const commonPrefix = upload.filename.slice(0, cut + delimiter.length);
      entries.push({ commonPrefix });
      // The rest under this prefix rolls up into it: the next query starts past them all (none: nothing is past them).
      const past = pastAll(commonPrefix);
      if (past === null) return entries;
      next = past;
      rolledUp = true;
      break;
    }
    if (!rolledUp && rows.length < wanted) break;
  }
  return entries;
}

export const ListMultipartUploads: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const maxUploads = pageSize(target, 'max-uploads');
  const prefix = queryValue(target.query, 'prefix') ?? '';
  const delimiter = queryValue(target.query, 'delimiter') || undefined;
  const keyMarker = queryValue(target.query, 'key-marker') ?? '';
  const uploadIdMarker = queryValue(target.query, 'upload-id-marker') ?? '';
  const entries = maxUploads === 0 ? [] : await uploadEntries(ctx, bucket.id, { prefix, delimiter, keyMarker, uploadIdMarker, limit: maxUploads + 1 });
  const page = entries.slice(0, maxUploads);
  const truncated = entries.length > maxUploads;
  const { encodingType, encode } = encoderOf(target);
  const last = page.at(-1);
  const next = last === undefined ? undefined : 'upload' in last ? { key: last.upload.filename, id: last.upload.id } : { key: last.commonPrefix, id: '' };
  return sendXml(reply, 'ListMultipartUploadsResult', {
    Bucket: target.bucket,
    ...(encodingType ? { EncodingType: encodingType } : {}),
    KeyMarker: encode(keyMarker),
    UploadIdMarker: uploadIdMarker,
    ...(truncated && next ? { NextKeyMarker: encode(next.key), NextUploadIdMarker: next.id } : {}),
    ...(delimiter !== undefined ? { Delimiter: encode(delimiter) } : {}),
    Prefix: encode(prefix),
    MaxUploads: maxUploads,
    IsTruncated: truncated,
    Upload: page.flatMap((entry) =>
      'upload' in entry
        ? [
            {
              Key: encode(entry.upload.filename),
              UploadId: entry.upload.id,
              Initiator: ownerXml(target.caller),
              Owner: ownerXml(target.caller),
              StorageClass: 'STANDARD',
              Initiated: entry.upload.created_at,
              ...(entry.upload.checksum_algorithm !== null
                ? { ChecksumAlgorithm: CHECKSUM_ALGORITHMS[entry.upload.checksum_algorithm]!.label, ChecksumType: entry.upload.checksum_type ?? 'COMPOSITE' }
                : {}),
            },
          ]
        : [],
    ),
    CommonPrefixes: page.flatMap((entry) => ('commonPrefix' in entry ? [{ Prefix: encode(entry.commonPrefix) }] : [])),
  });
};
