/** ListParts: a page of an upload's kept parts, in S3's XML. */
import { listParts } from '../../db/repositories/multipart.js';
import { CHECKSUM_ALGORITHMS } from '../../domain/checksum-algorithms.js';
import { MAX_PART_NUMBER, requireUpload } from '../../domain/multipart.js';
import { s3Errors } from '../errors.js';
import { ownBucket, ownerXml, sendXml, type Handler } from '../handler-support.js';
import { answeringRefusals, encoderOf, pageSize } from '../multipart-support.js';
import { queryValue } from '../query.js';

export const ListParts: Handler = answeringRefusals(async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const upload = await requireUpload(ctx.storage, bucket, queryValue(target.query, 'uploadId') ?? '');
  const maxParts = pageSize(target, 'max-parts');
  const rawMarker = queryValue(target.query, 'part-number-marker') ?? '0';
  if (!/^\d{1,5}$/.test(rawMarker)) throw s3Errors.invalidArgument('part-number-marker must be a whole number');
  const marker = Math.min(Number(rawMarker), MAX_PART_NUMBER);
  const rows = maxParts === 0 ? [] : await listParts(ctx.db, upload.id, marker, maxParts + 1);
  const page = rows.slice(0, maxParts);
  const { encodingType, encode } = encoderOf(target);
  const algorithm = upload.checksum_algorithm === null ? undefined : CHECKSUM_ALGORITHMS[upload.checksum_algorithm];
  return sendXml(reply, 'ListPartsResult', {
    Bucket: target.bucket,
    ...(encodingType ? { EncodingType: encodingType } : {}),
    Key: encode(upload.filename),
    UploadId: upload.id,
    Initiator: ownerXml(target.caller),
    Owner: ownerXml(target.caller),
    StorageClass: 'STANDARD',
    ...(algorithm ? { ChecksumAlgorithm: algorithm.label, ChecksumType: upload.checksum_type ?? 'COMPOSITE' } : {}),
    PartNumberMarker: marker,
    NextPartNumberMarker: page.at(-1)?.part_number ?? marker,
    MaxParts: maxParts,
    IsTruncated: rows.length > maxParts,
    Part: page.map((part) => ({
      PartNumber: part.part_number,
      LastModified: part.created_at,
      ETag: `"${part.md5}"`,
      Size: part.size,
      ...(algorithm && part.checksum !== null ? { [`Checksum${algorithm.label}`]: part.checksum } : {}),
    })),
  });
});
