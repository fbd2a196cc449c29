/** HeadBucket: whether the caller's bucket exists, with its region. */
import { ownBucket, type Handler } from '../handler-support.js';

export const HeadBucket: Handler = async (ctx, _request, reply, target) => {
  await ownBucket(ctx, target);
  return reply.code(200).header('x-amz-bucket-region', ctx.config.s3ApiRegion).send();
};
