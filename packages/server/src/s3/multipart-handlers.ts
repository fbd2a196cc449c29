/**
 * S3 multipart uploads at the door: CreateMultipartUpload, UploadPart,
 * CompleteMultipartUpload and AbortMultipartUpload, each translated onto
 * domain/multipart.ts and multipart-complete.ts (listings: multipart-lists.ts).
 * A part's body streams to the blob store as PutObject's does; its ETag is
 * its MD5.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { CHECKSUM_ALGORITHMS, isComposite } from '../domain/checksum-algorithms.js';
import { completeUpload, type ListedPart } from '../domain/multipart-complete.js';
import { abortUpload, beginUpload, MAX_PART_NUMBER, parsePartNumber, requireUpload, storePart } from '../domain/multipart.js';
import { MultipartRefused, type MultipartRefusal } from '../domain/multipart-refusals.js';
import { parseFilename } from '../domain/objects.js';
import { checkWriteCondition } from '../domain/uploads.js';
import { contentTypeFor, declaredLength } from '../http/uploads.js';
import { writeConditionOf } from './conditions.js';
import { S3Error, s3Errors } from './errors.js';
import { ownBucket, ownBucketForNewObject, sendXml, type Handler, type S3Target } from './handler-support.js';
import { metadataOf } from './metadata.js';
import type { S3Operation } from './operations.js';
import { bodyStream, xmlBody, type XmlBodyLimits } from './payload.js';
import { checksumAlgorithmOf, sentChecksumAlgorithm } from './checksums.js';
import { checksumHeaders } from './object-reads.js';
import { queryValue, strictEncode } from './query.js';
import { parseXml } from './xml.js';

/**
 * A part list names up to 10,000 parts. A part is a few hundred bytes (its
 * number, its quoted ETag, a checksum, some whitespace) and at most 8
 * elements (Part, PartNumber, ETag and the five checksums), 16 tags.
 */
const COMPLETE_BODY: XmlBodyLimits = { maxBytes: MAX_PART_NUMBER * 320 + 1024, maxTags: MAX_PART_NUMBER * 16 + 64 };

const S3_CODES: Record<MultipartRefusal, string> = {
  'no-upload': 'NoSuchUpload',
  'invalid-part': 'InvalidPart',
  'invalid-part-order': 'InvalidPartOrder',
  'too-small': 'EntityTooSmall',
  'invalid-part-number': 'InvalidArgument',
  'missing-part-checksum': 'InvalidRequest',
  'bad-digest': 'BadDigest',
};

/** The handler, its multipart refusals answered as S3's errors (NoSuchUpload is a 404, the rest 400). */
export function answeringRefusals(handler: Handler): Handler {
  return async (ctx, request, reply, target) => {
    try {
      return await handler(ctx, request, reply, target);
    } catch (error) {
      if (error instanceof MultipartRefused) throw new S3Error(S3_CODES[error.refusal], error.refusal === 'no-upload' ? 404 : 400, error.message);
      throw error;
    }
  };
}

export const uploadIdOf = (target: S3Target): string => queryValue(target.query, 'uploadId') ?? '';

type MultipartOperation = 'CreateMultipartUpload' | 'UploadPart' | 'CompleteMultipartUpload' | 'AbortMultipartUpload';

const handlers: Record<MultipartOperation, Handler> = {
  async CreateMultipartUpload(ctx, request, reply, target) {
    const bucket = await ownBucketForNewObject(ctx, target, request);
    const filename = parseFilename(target.key);
    const checksum = uploadChecksumOf(request.headers);
    const uploadId = await beginUpload(ctx.storage, {
      owner: target.caller.owner.user,
      bucket,
      filename,
      contentType: contentTypeFor(filename, request.headers['content-type']),
      metadata: metadataOf(request.headers),
      checksum,
    });
    if (checksum) reply.header('x-amz-checksum-algorithm', CHECKSUM_ALGORITHMS[checksum.algorithm]!.label).header('x-amz-checksum-type', checksum.type);
    return sendXml(reply, 'InitiateMultipartUploadResult', { Bucket: target.bucket, Key: target.key, UploadId: uploadId });
  },

  async UploadPart(ctx, request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    const partNumber = parsePartNumber(queryValue(target.query, 'partNumber'));
    const upload = await requireUpload(ctx.storage, bucket, uploadIdOf(target));
    const algorithm = upload.checksum_algorithm ?? undefined;
    const sent = sentChecksumAlgorithm(request.headers);
    if (algorithm !== undefined && sent !== undefined && sent !== algorithm) {
      throw s3Errors.invalidRequest(`Checksum Type mismatch occurred, expected checksum Type: ${algorithm}, actual checksum Type: ${sent}`);
    }
    const body = bodyStream(request, target.caller.claimed.payloadHash, target.caller, { md5: true, ...(algorithm ? { checksum: algorithm } : {}) });
    const declaredSize = body.declaredSize ?? declaredLength(request);
    if (declaredSize === undefined) throw s3Errors.missingContentLength();
    const stored = await storePart(ctx.storage, {
      owner: target.caller.owner.user,
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
  },

  async CompleteMultipartUpload(ctx, request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    // The cheap checks before the body is read: the upload is in the caller's bucket, and (as PutObject) the
    // write condition holds; both are checked again in the commit.
    await requireUpload(ctx.storage, bucket, uploadIdOf(target));
    const condition = writeConditionOf(request.headers);
    if (condition) await checkWriteCondition(ctx.storage, bucket.id, parseFilename(target.key), condition);
    // The body's checksum headers describe the object, not the body.
    const body = await xmlBody(request, target.caller.claimed.payloadHash, target.caller, COMPLETE_BODY, { objectChecksumHeaders: true });
    const parts = partList(body);
    const result = await completeUpload(ctx.storage, {
      owner: target.caller.owner.user,
      bucket,
      uploadId: uploadIdOf(target),
      parts,
      condition,
      sentChecksums: sentChecksums(request.headers),
    });
    const path = [target.bucket, ...target.key.split('/')].map(strictEncode).join('/');
    return sendXml(reply, 'CompleteMultipartUploadResult', {
      Location: `${request.protocol}://${request.host}/${path}`,
      Bucket: target.bucket,
      Key: target.key,
      ETag: `"${result.etag}"`,
      ...checksumElements(result.checksum),
    });
  },

  async AbortMultipartUpload(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    await abortUpload(ctx.storage, bucket, uploadIdOf(target));
    return reply.code(204).send();
  },
};

export const MULTIPART_HANDLERS: Pick<Record<S3Operation, Handler>, MultipartOperation> = {
  CreateMultipartUpload: answeringRefusals(handlers.CreateMultipartUpload),
  UploadPart: answeringRefusals(handlers.UploadPart),
  CompleteMultipartUpload: answeringRefusals(handlers.CompleteMultipartUpload),
  AbortMultipartUpload: answeringRefusals(handlers.AbortMultipartUpload),
};

/** <CompleteMultipartUpload><Part><PartNumber/><ETag/></Part>…; anything else, or no part at all, is MalformedXML. */
function partList(text: string): ListedPart[] {
  const root = parseXml(text)?.['CompleteMultipartUpload'];
  const raw = typeof root === 'object' && root !== null ? (root as Record<string, unknown>)['Part'] : undefined;
  const entries = Array.isArray(raw) ? (raw as unknown[]) : raw === undefined ? [] : [raw];
  const parts = entries.map((entry) => {
    const fields = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {};
    const number = fields['PartNumber'];
    const etag = fields['ETag'];
    if (typeof number !== 'string' || typeof etag !== 'string') throw s3Errors.malformedXml();
    const checksums: Record<string, string> = {};
    for (const [algorithm, { label }] of Object.entries(CHECKSUM_ALGORITHMS)) {
      const value = fields[`Checksum${label}`];
      if (typeof value === 'string') checksums[algorithm] = value.trim();
    }
    return { partNumber: parsePartNumber(number), etag, checksums };
  });
  if (parts.length === 0) throw s3Errors.malformedXml();
  return parts;
}

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

/** The whole object's checksums a CompleteMultipartUpload states in its headers (algorithm to base64), to be checked. */
function sentChecksums(headers: IncomingHttpHeaders): Record<string, string> {
  const sent: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const algorithm = checksumAlgorithmOf(name);
    if (algorithm !== undefined && typeof value === 'string') sent[algorithm] = value.trim();
  }
  return sent;
}

/** ChecksumCRC32 (…) and ChecksumType elements of a result, for the object's checksum when it keeps one. */
export function checksumElements(checksum: { algorithm: string; value: string } | undefined): Record<string, string> {
  if (checksum === undefined) return {};
  const label = CHECKSUM_ALGORITHMS[checksum.algorithm]!.label;
  return { [`Checksum${label}`]: checksum.value, ChecksumType: isComposite(checksum.value) ? 'COMPOSITE' : 'FULL_OBJECT' };
}
