/**
 * UploadPartCopy: PUT ?partNumber&uploadId with x-amz-copy-source, a part
 * whose bytes are another object's (or a range of them), within one owner's
 * buckets as CopyObject. The bytes go through storePart like an uploaded
 * part's, so the cap, replacing a part and Complete's rules are the same.
 */
import { Readable } from 'node:stream';
import { BlobNotFoundError, type ByteRange } from '../../blob/blob-store.js';
import { getOwnBucketByName } from '../../domain/buckets.js';
import { CHECKSUM_ALGORITHMS, checksumPassing } from '../../domain/checksum-algorithms.js';
import { parsePartNumber, requireUpload, storePart } from '../../domain/multipart.js';
import { objectBody } from '../../domain/object-bytes.js';
import { checkCopySourceConditions } from '../conditions.js';
import { copySourceObject, md5Passing, parseCopySource } from '../copy-source.js';
import { S3Error, s3Errors } from '../errors.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import { answeringRefusals, uploadIdOf } from '../multipart-support.js';
import { queryValue } from '../query.js';

/** x-amz-copy-source-range: `bytes=first-last`, both inclusive and inside the source; none means the whole source. */
function parseCopySourceRange(raw: string | string[] | undefined, size: number): ByteRange | null {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return null;
  const match = /^bytes=(\d+)-(\d+)$/.exec(value.trim());
  const start = Number(match?.[1]);
  const end = Number(match?.[2]);
  if (!match || !Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start > end) {
    throw s3Errors.invalidArgument(
      'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy',
    );
  }
  // Well formed but past the source's end: S3's InvalidRange (as a GET of that range), not a malformed argument.
  if (end >= size) throw new S3Error('InvalidRange', 416, `Range specified is not valid for source object of size: ${size}`);
  return { start, end };
}

export const UploadPartCopy: Handler = answeringRefusals(async (ctx, request, reply, target) => {
  const { caller } = target;
  const partNumber = parsePartNumber(queryValue(target.query, 'partNumber'));
  const from = parseCopySource(request.headers['x-amz-copy-source']);
  // The source is read: its bucket is one the key may read (authorize.ts, copyObject asked read of it already).
  const sourceBucket = await getOwnBucketByName(ctx.db, caller.principal, from.bucket, 'readObject');
  const bucket = await ownBucket(ctx, target);
  const { object: source, headers: sourceHeaders } = await copySourceObject(ctx, sourceBucket.id, from, caller.principal);
  reply.headers(sourceHeaders);
  checkCopySourceConditions(request.headers, source);
  const range = parseCopySourceRange(request.headers['x-amz-copy-source-range'], source.size);

  // A part copy has no body of its own; anything sent is let go.
  request.raw.resume();
  // The source was replaced or deleted after it was found, or while it was read (its bytes retired): it is gone, as S3 would say.
  const gone = (error: unknown): never => {
    throw error instanceof BlobNotFoundError ? s3Errors.noSuchKey() : error;
  };
  // A part of an upload that keeps checksums has its checksum taken as its bytes pass.
  const algorithm = (await requireUpload(ctx.storage, bucket, uploadIdOf(target))).checksum_algorithm;
  const read = await objectBody(ctx.storage, source, range).catch(gone);
  const checksum = algorithm === null ? undefined : checksumPassing(Buffer.isBuffer(read) ? Readable.from([read]) : read, algorithm);
  const body = md5Passing(checksum?.stream ?? read);
  const stored = await storePart(ctx.storage, {
    owner: caller.principal.user,
    bucket,
    uploadId: uploadIdOf(target),
    partNumber,
    body: body.stream,
    declaredSize: range ? range.end - range.start + 1 : source.size,
    rawRequestBody: false,
    md5Hex: body.md5Hex,
    ...(checksum ? { checksum: () => Promise.resolve(checksum.value()) } : {}),
  }).catch((error: unknown) => {
    // Refused before every byte was read (no such upload, over the cap): the store's stream must not stay open.
    body.stream.destroy();
    return gone(error);
  });
  return sendXml(reply, 'CopyPartResult', {
    ETag: `"${stored.md5}"`,
    LastModified: new Date().toISOString(),
    ...(algorithm !== null && stored.checksum !== null ? { [`Checksum${CHECKSUM_ALGORITHMS[algorithm]!.label}`]: stored.checksum } : {}),
  });
});
