/**
 * CreateBucket: a new bucket, private or public-read by its canned ACL; the
 * Pail API's createBucket with S3's name error. A key limited to some
 * buckets was refused before (authorize.ts, createBucket). Names are per
 * owner: another owner's bucket of the same name is no conflict.
 */
import { createBucket } from '../../domain/buckets.js';
import { AppError } from '../../domain/errors.js';
import { S3Error, s3Errors } from '../errors.js';
import type { Handler } from '../handler-support.js';
import { xmlBody } from '../payload.js';
import { parseXml } from '../xml.js';
import { actorOf } from '../../domain/audit.js';

export const CreateBucket: Handler = async (ctx, request, reply, { bucket, caller }) => {
  const acl = request.headers['x-amz-acl'];
  if (acl !== undefined && acl !== 'private' && acl !== 'public-read') throw s3Errors.notImplemented(`x-amz-acl: ${String(acl)}`);
  // The body may be a CreateBucketConfiguration naming a region; every region is this one, so it is read and let go.
  const configuration = await xmlBody(request, caller.payloadHash);
  if (configuration.trim() !== '' && parseXml(configuration) === null) throw s3Errors.malformedXml();
  try {
    // x-amz-bucket-object-lock-enabled: true makes it with object lock, versioned for good (domain/object-lock.ts).
    const objectLock = String(request.headers['x-amz-bucket-object-lock-enabled'] ?? '').toLowerCase() === 'true';
    await createBucket(
      ctx.db,
      caller.principal.user.id,
      { name: bucket, public: acl === 'public-read', object_lock: objectLock },
      ctx.config.maxBucketsPerUser,
      actorOf(caller.principal),
    );
  } catch (error) {
    if (error instanceof AppError && error.code === 'ValidationError') throw new S3Error('InvalidBucketName', 400, error.message);
    // In us-east-1, S3 answers a create of a bucket the caller already owns with 200 and leaves the bucket as it is
    // (its files and visibility); every other region answers 409 BucketAlreadyOwnedByYou.
    if (error instanceof AppError && error.code === 'BucketNameTaken' && ctx.config.s3ApiRegion === 'us-east-1') {
      return reply.code(200).header('location', `/${bucket}`).send();
    }
    throw error;
  }
  return reply.code(200).header('location', `/${bucket}`).send();
};
