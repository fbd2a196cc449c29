/** GetBucketAcl: the bucket's visibility as a canned ACL (acl-policy.ts). */
import { policyXml } from '../acl-policy.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';

export const GetBucketAcl: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  return sendXml(reply, 'AccessControlPolicy', policyXml(target.caller, bucket.public === 1 ? 'public-read' : 'private'));
};
