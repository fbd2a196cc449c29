/** DeleteBucketLifecycle: the bucket keeps no lifecycle rules any more (204 also when it had none, as S3 answers). */
import { actorOf } from '../../domain/audit.js';
import { deleteBucketLifecycle } from '../../domain/lifecycle.js';
import { ownBucket, type Handler } from '../handler-support.js';

export const DeleteBucketLifecycle: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  await deleteBucketLifecycle(ctx.storage, bucket, actorOf(target.caller.principal));
  return reply.code(204).send();
};
