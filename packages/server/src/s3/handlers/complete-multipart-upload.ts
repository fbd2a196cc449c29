/**
 * CompleteMultipartUpload: the listed parts become the object
 * (domain/multipart-complete.ts), checked against the whole object's
 * checksums the request states. Repeated once it has succeeded (an SDK's
 * retry), it answers the same while the object it made is current.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { CHECKSUM_ALGORITHMS, isComposite } from '../../domain/checksum-algorithms.js';
import { completeUpload, requireCompletable, type ListedPart } from '../../domain/multipart-complete.js';
import { MAX_PART_NUMBER, parsePartNumber } from '../../domain/multipart.js';
import { parseFilename } from '../../domain/objects.js';
import { checkWriteCondition } from '../../domain/uploads.js';
import { bucketRules } from '../../domain/bucket-rules.js';
import { expirationRules } from '../../domain/lifecycle-expiry.js';
import { checksumAlgorithmOf } from '../checksums.js';
import { expirationHeader } from '../expiration.js';
import { writeConditionOf } from '../conditions.js';
import { s3Errors } from '../errors.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import { answeringRefusals, uploadIdOf } from '../multipart-support.js';
import { xmlBody, type XmlBodyLimits } from '../payload.js';
import { strictEncode } from '../query.js';
import { parseXml } from '../xml.js';

/**
 * A part list names up to 10,000 parts. A part is a few hundred bytes (its
 * number, its quoted ETag, a checksum, some whitespace) and at most 8
 * elements (Part, PartNumber, ETag and the five checksums), 16 tags.
 */
const COMPLETE_BODY: XmlBodyLimits = { maxBytes: MAX_PART_NUMBER * 320 + 1024, maxTags: MAX_PART_NUMBER * 16 + 64 };

export const CompleteMultipartUpload: Handler = answeringRefusals(async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const named = { bucket, uploadId: uploadIdOf(target), filename: parseFilename(target.key) };
  // The cheap checks before the body is read: the upload is in the caller's bucket (or was completed
  // there already: a repeat is answered as the completion was), and (as PutObject) the write condition
  // holds; both are checked again in the commit. A repeat's condition guarded the write already made.
  const earlier = await requireCompletable(ctx.storage, named);
  const rules = await bucketRules(ctx.storage, bucket.id);
  const condition = writeConditionOf(request.headers);
  if (condition && !earlier) await checkWriteCondition(ctx.storage, bucket.id, named.filename, condition);
  // The body's checksum headers describe the object, not the body.
  const body = await xmlBody(request, target.caller.payloadHash, target.caller, COMPLETE_BODY, { objectChecksumHeaders: true });
  const parts = partList(body);
  const result =
    earlier ??
    (await completeUpload(ctx.storage, {
      ...named,
      owner: target.caller.principal.user,
      parts,
      condition,
      sentChecksums: sentChecksums(request.headers),
      operation: 'CompleteMultipartUpload',
    }));
  const path = [target.bucket, ...target.key.split('/')].map(strictEncode).join('/');
  if ('version_id' in result && typeof result.version_id === 'string') reply.header('x-amz-version-id', result.version_id);
  // As PutObject: when a lifecycle rule will expire the object, counted from when it was made.
  reply.headers(
    expirationHeader(expirationRules(rules.lifecycleRules), {
      filename: named.filename,
      size: result.size,
      tags: result.tags,
      lastModified: result.lastModified,
    }),
  );
  return sendXml(reply, 'CompleteMultipartUploadResult', {
    Location: `${request.protocol}://${request.host}/${path}`,
    Bucket: target.bucket,
    Key: target.key,
    ETag: `"${result.etag}"`,
    ...checksumElements(result.checksum),
  });
});

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
function checksumElements(checksum: { algorithm: string; value: string } | undefined): Record<string, string> {
  if (checksum === undefined) return {};
  const label = CHECKSUM_ALGORITHMS[checksum.algorithm]!.label;
  return { [`Checksum${label}`]: checksum.value, ChecksumType: isComposite(checksum.value) ? 'COMPOSITE' : 'FULL_OBJECT' };
}
