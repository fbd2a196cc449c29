/**
 * CopyObject: PUT with x-amz-copy-source, within one owner's buckets. The
 * copy is a new object with a blob of its own: the source's bytes are read
 * from the store and go through uploadObject like any upload's, so the cap,
 * the counts and the commit are the usual ones, and deleting either object
 * later leaves the other whole.
 */
import { BlobNotFoundError } from '../../blob/blob-store.js';
import { getOwnBucketByName } from '../../domain/buckets.js';
import { isComposite } from '../../domain/checksum-algorithms.js';
import { objectBody } from '../../domain/object-bytes.js';
import { parseFilename } from '../../domain/objects.js';
import { checkWriteCondition, uploadObject } from '../../domain/uploads.js';
import { contentTypeFor } from '../../http/uploads.js';
import { CHECKSUM_ALGORITHMS } from '../checksums.js';
import { checkCopySourceConditions, writeConditionOf } from '../conditions.js';
import { S3Error, s3Errors } from '../errors.js';
import { ownBucketForNewObject, sendXml, type Handler } from '../handler-support.js';
import { copySourceObject, md5Passing, parseCopySource } from '../copy-source.js';
import { metadataOf, storedMetadata } from '../metadata.js';
import { checkLockedWrite, requestedLockOf } from '../object-lock.js';
import { taggingOf } from '../tagging.js';
import { bucketRules } from '../../domain/bucket-rules.js';
import { expirationRules } from '../../domain/lifecycle-expiry.js';
import { expirationHeader } from '../expiration.js';

export const CopyObject: Handler = async (ctx, request, reply, target) => {
  const { caller } = target;
  const directive = request.headers['x-amz-metadata-directive'] ?? 'COPY';
  if (directive !== 'COPY' && directive !== 'REPLACE') throw s3Errors.invalidArgument('Unknown metadata directive.');
  // The copy's tags: the source's (COPY, the default) or x-amz-tagging's (REPLACE; none without it).
  const taggingDirective = request.headers['x-amz-tagging-directive'] ?? 'COPY';
  if (taggingDirective !== 'COPY' && taggingDirective !== 'REPLACE') throw s3Errors.invalidArgument('Unknown tagging directive.');
  const replacedTags = taggingDirective === 'REPLACE' ? taggingOf(request.headers) : undefined;
  // A copy's lock is its own request's (or the bucket's default), never the source's, as S3 copies.
  const from = parseCopySource(request.headers['x-amz-copy-source']);
  // The source is read: its bucket is one the key may read (authorize.ts, copyObject asked read of it already).
  const sourceBucket = await getOwnBucketByName(ctx.db, caller.principal, from.bucket, 'readObject');
  const bucket = await ownBucketForNewObject(ctx, target, request);
  const filename = parseFilename(target.key);
  if (sourceBucket.id === bucket.id && from.key === filename && directive === 'COPY' && from.versionId === undefined) {
    throw new S3Error(
      'InvalidRequest',
      400,
      "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
    );
  }
  const lock = requestedLockOf(request.headers);
  const rules = await bucketRules(ctx.storage, bucket.id);
  checkLockedWrite(request.headers, lock, rules.lock, false);
  const { object: source, headers: sourceHeaders } = await copySourceObject(ctx, sourceBucket.id, from, caller.principal);
  reply.headers(sourceHeaders);
  checkCopySourceConditions(request.headers, source);
  const condition = writeConditionOf(request.headers);
  if (condition) await checkWriteCondition(ctx.storage, bucket.id, filename, condition);

  // A copy has no body of its own; anything sent is let go.
  request.raw.resume();
  const replace = directive === 'REPLACE';
  const body = md5Passing(await objectBody(ctx.storage, source, null));
  // A COMPOSITE checksum describes the source's parts, which the copy (one part) does not have.
  const checksums =
    source.checksums === null
      ? undefined
      : Object.fromEntries(Object.entries(JSON.parse(source.checksums) as Record<string, string>).filter(([, value]) => !isComposite(value)));
  const tags = taggingDirective === 'REPLACE' ? replacedTags : (source.tags ?? undefined);
  const upload = uploadObject(ctx.storage, {
    owner: caller.principal.user,
    bucket: { id: bucket.id, owner_id: bucket.owner_id, storage_name: bucket.storage_name },
    filename,
    body: body.stream,
    contentType: replace ? contentTypeFor(filename, request.headers['content-type']) : source.content_type,
    declaredSize: source.size,
    metadata: replace ? metadataOf(request.headers) : storedMetadata(source),
    tags,
    lock,
    etag: body.md5Hex,
    // The same bytes have the same full-object checksums.
    checksums: () => checksums,
    ...(condition ? { condition } : {}),
    operation: 'CopyObject',
  });
  const result = await upload.catch((error: unknown) => {
    body.stream.destroy();
    // The source was replaced or deleted while it was being read (its bytes retired): it is gone, as S3 would say.
    throw error instanceof BlobNotFoundError ? s3Errors.noSuchKey() : error;
  });
  const checksumElements = Object.fromEntries(
    Object.entries(checksums ?? {}).map(([algorithm, value]) => [`Checksum${CHECKSUM_ALGORITHMS[algorithm]?.label ?? algorithm}`, value]),
  );
  if (result.version_id !== undefined) reply.header('x-amz-version-id', result.version_id);
  // When a lifecycle rule will expire the copy, as PutObject tells it.
  reply.headers(
    expirationHeader(expirationRules(rules.lifecycleRules), { filename, size: result.size, tags: tags ?? null, lastModified: ctx.storage.clock.now() }),
  );
  return sendXml(reply, 'CopyObjectResult', { ETag: `"${body.md5Hex()}"`, LastModified: new Date().toISOString(), ...checksumElements });
};
