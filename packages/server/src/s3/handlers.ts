/**
 * Every S3 operation, each a thin translation onto the same domain
 * functions the Pail API uses (buckets, listObjects, uploadObject,
 * findReadable, deleteObject): one set of rules, two protocols. Bucket and
 * object basics are here; listings, ACLs, DeleteObjects and reads have
 * files of their own.
 */
import { deleteBucket } from '../domain/bucket-deletion.js';
import { createBucket, listBuckets } from '../domain/buckets.js';
import { AppError } from '../domain/errors.js';
import { mayUseBucket, requireMayCreateBuckets } from '../domain/key-limits.js';
import { deleteObject, parseFilename } from '../domain/objects.js';
import { checkWriteCondition, uploadObject } from '../domain/uploads.js';
import { contentTypeFor, declaredLength } from '../http/uploads.js';
import { ACL_HANDLERS } from './acl-handlers.js';
import { CORS_HANDLERS } from './cors-handlers.js';
import { DeleteObjects } from './delete-objects.js';
import { S3Error, s3Errors } from './errors.js';
import { ownBucket, ownBucketForNewObject, ownerXml, sendXml, type Handler } from './handler-support.js';
import { LIST_HANDLERS } from './list-handlers.js';
import { metadataOf } from './metadata.js';
import { MULTIPART_HANDLERS } from './multipart-handlers.js';
import { MULTIPART_LIST_HANDLERS } from './multipart-lists.js';
import { readObject } from './object-reads.js';
import type { S3Operation } from './operations.js';
import { bodyStream, xmlBody } from './payload.js';
import { CopyObject } from './copy-object.js';
import { UploadPartCopy } from './upload-part-copy.js';
import { TAGGING_HANDLERS } from './tagging.js';
import { writeConditionOf } from './conditions.js';
import { checksumHeaders } from './object-reads.js';
import { parseXml } from './xml.js';

export type { S3Target } from './handler-support.js';

export const HANDLERS: Record<S3Operation, Handler> = {
  async ListBuckets(ctx, _request, reply, { caller }) {
    const buckets = (await listBuckets(ctx.db, caller.owner.user.id)).filter((bucket) => mayUseBucket(caller.owner.limits, bucket.id));
    return sendXml(reply, 'ListAllMyBucketsResult', {
      Owner: ownerXml(caller),
      Buckets: { Bucket: buckets.map((bucket) => ({ Name: bucket.name, CreationDate: bucket.created_at })) },
    });
  },

  async CreateBucket(ctx, request, reply, { bucket, caller }) {
    requireMayCreateBuckets(caller.owner.limits);
    const acl = request.headers['x-amz-acl'];
    if (acl !== undefined && acl !== 'private' && acl !== 'public-read') throw s3Errors.notImplemented(`x-amz-acl: ${String(acl)}`);
    // The body may be a CreateBucketConfiguration naming a region; every region is this one, so it is read and let go.
    const configuration = await xmlBody(request, caller.claimed.payloadHash);
    if (configuration.trim() !== '' && parseXml(configuration) === null) throw s3Errors.malformedXml();
    try {
      await createBucket(ctx.db, caller.owner.user.id, { name: bucket, public: acl === 'public-read' }, ctx.config.maxBucketsPerUser);
    } catch (error) {
      if (error instanceof AppError && error.code === 'ValidationError') throw new S3Error('InvalidBucketName', 400, error.message);
      throw error;
    }
    return reply.code(200).header('location', `/${bucket}`).send();
  },

  async HeadBucket(ctx, _request, reply, target) {
    await ownBucket(ctx, target);
    return reply.code(200).header('x-amz-bucket-region', ctx.config.s3ApiRegion).send();
  },

  async DeleteBucket(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    // S3 deletes only empty buckets (the Pail API deletes a bucket with its files).
    if (bucket.object_count > 0) throw s3Errors.bucketNotEmpty();
    await deleteBucket(ctx.storage, target.caller.owner.user.id, String(bucket.id));
    return reply.code(204).send();
  },

  async GetBucketLocation(ctx, _request, reply, target) {
    await ownBucket(ctx, target);
    return sendXml(reply, 'LocationConstraint', ctx.config.s3ApiRegion);
  },

  ...ACL_HANDLERS,
  ...CORS_HANDLERS,
  ...LIST_HANDLERS,
  ...MULTIPART_HANDLERS,
  ...MULTIPART_LIST_HANDLERS,
  ...TAGGING_HANDLERS,

  async PutObject(ctx, request, reply, target) {
    const bucket = await ownBucketForNewObject(ctx, target, request);
    const filename = parseFilename(target.key);
    // Before the body is touched: a refused body left unread is drained by Node, so the client still hears the 412.
    const condition = writeConditionOf(request.headers);
    if (condition) await checkWriteCondition(ctx.storage, bucket.id, filename, condition);
    // An aws-chunked body declares its decoded length (x-amz-decoded-content-length); Content-Length counts its framing.
    const body = bodyStream(request, target.caller.claimed.payloadHash, target.caller, { md5: true });
    const declaredSize = body.declaredSize ?? declaredLength(request);
    if (declaredSize === undefined) throw s3Errors.missingContentLength();
    const result = await uploadObject(ctx.storage, {
      owner: target.caller.owner.user,
      bucket: { id: bucket.id, owner_id: bucket.owner_id, storage_name: bucket.storage_name },
      filename,
      body: body.stream,
      contentType: contentTypeFor(filename, request.headers['content-type']),
      declaredSize,
      rawRequestBody: body.raw,
      metadata: metadataOf(request.headers),
      etag: body.md5Hex,
      ...(body.checksums ? { checksums: body.checksums } : {}),
      ...(condition ? { condition } : {}),
    });
    const checksums = checksumHeaders(body.checksums?.());
    return reply.code(200).header('etag', `"${body.md5Hex!()}"`).headers(checksums).header('x-pail-size', String(result.size)).send();
  },

  CopyObject,
  UploadPartCopy,
  GetObject: readObject,
  HeadObject: readObject,
  DeleteObjects,

  async DeleteObject(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    try {
      await deleteObject(ctx.storage, bucket, target.key);
    } catch (error) {
      // S3 answers 204 for a key that is not there: deleting is idempotent.
      if (!(error instanceof AppError && error.code === 'FileNotFound')) throw error;
    }
    return reply.code(204).send();
  },
};
