/** GetBucketLocation: every bucket is in this service's one region. */
import { ownBucket, sendXml, type Handler } from '../handler-support.js';

export const GetBucketLocation: Handler = async (ctx, _request, reply, target) => {
  await ownBucket(ctx, target);
  return sendXml(reply, 'LocationConstraint', ctx.config.s3ApiRegion);
};
