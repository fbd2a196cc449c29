/** DeleteBucketTagging: the bucket keeps no tags any more (204, as S3). */
import { setBucketTags } from '../../domain/object-tags.js';
import { ownBucket, type Handler } from '../handler-support.js';

export const DeleteBucketTagging: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  await setBucketTags(ctx.db, bucket.id, []);
  return reply.code(204).send();
};
