/** DeletePublicAccessBlock: the bucket keeps no block any more (204 also when it had none, as S3 answers). */
import { removePublicAccessBlock } from '../../domain/public-access.js';
import { ownBucket, type Handler } from '../handler-support.js';

export const DeletePublicAccessBlock: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  await removePublicAccessBlock(ctx.storage, bucket.id);
  return reply.code(204).send();
};
