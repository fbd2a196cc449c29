/** DeleteBucket: an empty bucket only, as S3 (the Pail API deletes a bucket with its files). */
import { deleteBucket } from '../../domain/bucket-deletion.js';
import { s3Errors } from '../errors.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { actorOf } from '../../domain/audit.js';

export const DeleteBucket: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  // S3 deletes only empty buckets (the Pail API deletes a bucket with its files).
  if (bucket.object_count > 0) throw s3Errors.bucketNotEmpty();
  await deleteBucket(ctx.storage, target.caller.principal.user.id, String(bucket.id), 'DeleteBucket', actorOf(target.caller.principal));
  return reply.code(204).send();
};
