/**
 * PutObject: the body goes to the domain's uploadObject as a Pail API
 * upload's does, decoded (aws-chunked) by payload.ts, with its checks
 * (payload hash, MD5, checksums) for uploadObject to run on the bytes it
 * reads; the answer carries S3's ETag (the MD5) and checksums.
 */
import { parseFilename } from '../../domain/objects.js';
import { checkWriteCondition, uploadObject } from '../../domain/uploads.js';
import { contentTypeFor, declaredLength } from '../../http/uploads.js';
import { writeConditionOf } from '../conditions.js';
import { s3Errors } from '../errors.js';
import { ownBucketForNewObject, type Handler } from '../handler-support.js';
import { metadataOf } from '../metadata.js';
import { checksumHeaders } from '../object-reads.js';
import { uploadBody } from '../payload.js';
import { checkLockedWrite, requestedLockOf } from '../object-lock.js';
import { taggingOf } from '../tagging.js';
import { expirationHeader } from '../expiration.js';
import { expirationRules } from '../../domain/lifecycle-expiry.js';
import { bucketRules } from '../../domain/bucket-rules.js';

const isChunked = (value: string | undefined): boolean => value !== undefined && /(^|,)\s*chunked\s*$/i.test(value);

export const PutObject: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucketForNewObject(ctx, target, request);
  const filename = parseFilename(target.key);
  // Before the body is touched: a refused body left unread is drained by Node, so the client still hears the 412.
  const condition = writeConditionOf(request.headers);
  const tags = taggingOf(request.headers);
  const lock = requestedLockOf(request.headers);
  // S3 wants a digest of what it locks: lock headers, or a bucket with a default retention.
  const rules = await bucketRules(ctx.storage, bucket.id);
  checkLockedWrite(request.headers, lock, rules.lock, true);
  if (condition) await checkWriteCondition(ctx.storage, bucket.id, filename, condition);
  // An aws-chunked body declares its decoded length (x-amz-decoded-content-length); Content-Length counts its framing.
  const body = uploadBody(request, target.caller.payloadHash, target.caller, { md5: true });
  const declaredSize = body.declaredSize ?? declaredLength(request);
  // A body sent chunked (Transfer-Encoding) has no length up front: it is held against the cap as it streams.
  if (declaredSize === undefined && !isChunked(request.headers['transfer-encoding'])) throw s3Errors.missingContentLength();
  // Fields left undefined rather than spread in when absent: a spread among fields is a slow copy in V8.
  const result = await uploadObject(ctx.storage, {
    owner: target.caller.principal.user,
    bucket: { id: bucket.id, owner_id: bucket.owner_id, storage_name: bucket.storage_name },
    filename,
    body: body.stream,
    verify: body.verify,
    contentType: contentTypeFor(filename, request.headers['content-type']),
    declaredSize,
    rawRequestBody: body.raw,
    metadata: metadataOf(request.headers),
    tags,
    lock,
    etag: body.md5Hex,
    checksums: body.checksums,
    condition,
    operation: 'PutObject',
  });
  const checksums = checksumHeaders(body.checksums?.());
  // In a versioning-enabled bucket, the version this write made (S3's x-amz-version-id).
  if (result.version_id !== undefined) reply.header('x-amz-version-id', result.version_id);
  // When a lifecycle rule will expire it, counted from now (its Last-Modified, to the second's day).
  reply.headers(
    expirationHeader(expirationRules(rules.lifecycleRules), { filename, size: result.size, tags: tags ?? null, lastModified: ctx.storage.clock.now() }),
  );
  return reply.code(200).header('etag', `"${body.md5Hex!()}"`).headers(checksums).header('x-pail-size', String(result.size)).send();
};
