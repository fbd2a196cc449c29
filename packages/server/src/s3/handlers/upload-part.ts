/**
 * UploadPart: a part's body streams to the blob store as PutObject's does
 * (domain/multipart.ts storePart); its ETag is its MD5.
 */
import { parsePartNumber, requireUpload, storePart } from '../../domain/multipart.js';
import { declaredLength } from '../../http/uploads.js';
import { sentChecksumAlgorithm } from '../checksums.js';
import { s3Errors } from '../errors.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { answeringRefusals, uploadIdOf } from '../multipart-support.js';
import { checksumHeaders } from '../object-reads.js';
import { bodyStream } from '../payload.js';
import { queryValue } from '../query.js';

export const UploadPart: Handler = answeringRefusals(async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const partNumber = parsePartNumber(queryValue(target.query, 'partNumber'));
  const upload = await requireUpload(ctx.storage, bucket, uploadIdOf(target));
  const algorithm = upload.checksum_algorithm ?? undefined;
  const sent = sentChecksumAlgorithm(request.headers);
  if (algorithm !== undefined && sent !== undefined && sent !== algorithm) {
    throw s3Errors.invalidRequest(`Checksum Type mismatch occurred, expected checksum Type: ${algorithm}, actual checksum Type: ${sent}`);
  }
  const body = bodyStream(request, target.caller.payloadHash, target.caller, { md5: true, ...(algorithm ? { checksum: algorithm } : {}) });
  const declaredSize = body.declaredSize ?? declaredLength(request);
  if (declaredSize === undefined) throw s3Errors.missingContentLength();
  const stored = await storePart(ctx.storage, {
    owner: target.caller.principal.user,
    bucket,
    uploadId: uploadIdOf(target),
    upload,
    partNumber,
    body: body.stream,
    declaredSize,
    rawRequestBody: body.raw,
    md5Hex: body.md5Hex!,
    received: () => request.raw.socket.bytesRead,
    ...(body.checksum ? { checksum: body.checksum } : {}),
  });
  // The part's checksum as S3 answers it: the upload's, else the one the request sent (verified).
  const checksums = stored.checksum !== null && algorithm !== undefined ? { [algorithm]: stored.checksum } : body.checksums?.();
  return reply.code(200).header('etag', `"${stored.md5}"`).headers(checksumHeaders(checksums)).send();
});
