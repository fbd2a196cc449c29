/**
 * CreateMultipartUpload: a new upload in the caller's bucket
 * (domain/multipart.ts), keeping the checksum algorithm and type it names.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { CHECKSUM_ALGORITHMS } from '../../domain/checksum-algorithms.js';
import { beginUpload } from '../../domain/multipart.js';
import { parseFilename } from '../../domain/objects.js';
import { contentTypeFor } from '../../http/uploads.js';
import { s3Errors } from '../errors.js';
import { ownBucketForNewObject, sendXml, type Handler } from '../handler-support.js';
import { metadataOf } from '../metadata.js';
import { answeringRefusals } from '../multipart-support.js';
import { checkLockedWrite, requestedLockOf } from '../object-lock.js';
import { taggingOf } from '../tagging.js';
import { bucketRules } from '../../domain/bucket-rules.js';

export const CreateMultipartUpload: Handler = answeringRefusals(async (ctx, request, reply, target) => {
  const bucket = await ownBucketForNewObject(ctx, target, request);
  const filename = parseFilename(target.key);
  const checksum = uploadChecksumOf(request.headers);
  const lock = requestedLockOf(request.headers);
  checkLockedWrite(request.headers, lock, (await bucketRules(ctx.storage, bucket.id)).lock, false);
  const uploadId = await beginUpload(ctx.storage, {
    owner: target.caller.principal.user,
    bucket,
    filename,
    contentType: contentTypeFor(filename, request.headers['content-type']),
    metadata: metadataOf(request.headers),
    // Kept with the upload, written with the object when it completes.
    tags: taggingOf(request.headers),
    lock,
    checksum,
  });
  if (checksum) reply.header('x-amz-checksum-algorithm', CHECKSUM_ALGORITHMS[checksum.algorithm]!.label).header('x-amz-checksum-type', checksum.type);
  return sendXml(reply, 'InitiateMultipartUploadResult', { Bucket: target.bucket, Key: target.key, UploadId: uploadId });
});

/**
 * x-amz-checksum-algorithm and x-amz-checksum-type of CreateMultipartUpload.
 * As S3: the type defaults to FULL_OBJECT for CRC64NVME and COMPOSITE for the
 * rest; the SHAs cannot be FULL_OBJECT, nor CRC64NVME COMPOSITE.
 */
function uploadChecksumOf(headers: IncomingHttpHeaders): { algorithm: string; type: 'COMPOSITE' | 'FULL_OBJECT' } | undefined {
  const rawAlgorithm = headers['x-amz-checksum-algorithm'];
  const rawType = headers['x-amz-checksum-type'];
  if (rawAlgorithm === undefined) {
    if (rawType !== undefined) throw s3Errors.invalidRequest('The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.');
    return undefined;
  }
  const algorithm = String(rawAlgorithm).trim().toLowerCase();
  const known = CHECKSUM_ALGORITHMS[algorithm];
  if (!Object.hasOwn(CHECKSUM_ALGORITHMS, algorithm) || known === undefined) {
    throw s3Errors.invalidRequest(
      'Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]',
    );
  }
  const type = rawType === undefined ? (algorithm === 'crc64nvme' ? 'FULL_OBJECT' : 'COMPOSITE') : String(rawType).trim().toUpperCase();
  if (type !== 'COMPOSITE' && type !== 'FULL_OBJECT') throw s3Errors.invalidRequest('Value for x-amz-checksum-type header is invalid.');
  if ((type === 'FULL_OBJECT' && !known.fullObject) || (type === 'COMPOSITE' && algorithm === 'crc64nvme')) {
    throw s3Errors.invalidRequest(`The ${type} checksum type cannot be used with the ${algorithm} checksum algorithm.`);
  }
  return { algorithm, type };
}
