/** DeleteBucketCors: the bucket keeps no CORS rules any more. */
import { deleteBucketCors } from '../../domain/bucket-cors.js';
import { ownBucket, type Handler } from '../handler-support.js';

export const DeleteBucketCors: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  await deleteBucketCors(ctx.db, bucket.id);
  return reply.code(204).send();
};
