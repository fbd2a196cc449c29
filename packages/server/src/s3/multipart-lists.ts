/**
 * ListParts and ListMultipartUploads: a page of an upload's kept parts, and
 * of a bucket's unfinished uploads, in S3's XML. encoding-type=url encodes
 * keys as the object listings do.
 */
import { listParts, listUploads } from '../db/repositories/multipart.js';
import { CHECKSUM_ALGORITHMS } from '../domain/checksum-algorithms.js';
import { MAX_PART_NUMBER, requireUpload } from '../domain/multipart.js';
import { s3Errors } from './errors.js';
import { ownBucket, ownerXml, sendXml, type Handler, type S3Target } from './handler-support.js';
import { answeringRefusals } from './multipart-handlers.js';
import type { S3Operation } from './operations.js';
import { queryValue, strictEncode } from './query.js';

const MAX_PAGE = 1000;

function pageSize(target: S3Target, name: string): number {
  const raw = queryValue(target.query, name) ?? String(MAX_PAGE);
  if (!/^\d{1,9}$/.test(raw)) throw s3Errors.invalidArgument(`${name} must be a whole number`);
  // S3 answers at most 1000 a page whatever is asked for.
  return Math.min(Number(raw), MAX_PAGE);
}

function encoderOf(target: S3Target): { encodingType?: string; encode: (text: string) => string } {
  const encodingType = queryValue(target.query, 'encoding-type') || undefined;
  if (encodingType === undefined) return { encode: (text) => text };
  if (encodingType !== 'url') throw s3Errors.invalidArgument('Invalid Encoding Method specified in Request');
  return { encodingType, encode: (text) => text.split('/').map(strictEncode).join('/') };
}

const ListParts: Handler = async (ctx, _request, reply, target) => {
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
};

const ListMultipartUploads: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const maxUploads = pageSize(target, 'max-uploads');
  const prefix = queryValue(target.query, 'prefix') ?? '';
  const keyMarker = queryValue(target.query, 'key-marker') ?? '';
  const uploadIdMarker = queryValue(target.query, 'upload-id-marker') ?? '';
  const rows = maxUploads === 0 ? [] : await listUploads(ctx.db, bucket.id, { prefix, keyMarker, uploadIdMarker, limit: maxUploads + 1 });
  const page = rows.slice(0, maxUploads);
  const truncated = rows.length > maxUploads;
  const { encodingType, encode } = encoderOf(target);
  const last = page.at(-1);
  return sendXml(reply, 'ListMultipartUploadsResult', {
    Bucket: target.bucket,
    ...(encodingType ? { EncodingType: encodingType } : {}),
    KeyMarker: encode(keyMarker),
    UploadIdMarker: uploadIdMarker,
    ...(truncated && last ? { NextKeyMarker: encode(last.filename), NextUploadIdMarker: last.id } : {}),
    Prefix: encode(prefix),
    MaxUploads: maxUploads,
    IsTruncated: truncated,
    Upload: page.map((upload) => ({
      Key: encode(upload.filename),
      UploadId: upload.id,
      Initiator: ownerXml(target.caller),
      Owner: ownerXml(target.caller),
      StorageClass: 'STANDARD',
      Initiated: upload.created_at,
    })),
  });
};

export const MULTIPART_LIST_HANDLERS: Pick<Record<S3Operation, Handler>, 'ListParts' | 'ListMultipartUploads'> = {
  ListParts: answeringRefusals(ListParts),
  ListMultipartUploads,
};
