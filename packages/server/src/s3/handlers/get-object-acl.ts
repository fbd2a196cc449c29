/** GetObjectAcl: an object's ACL is its bucket's (acl-policy.ts). */
import { findReadable } from '../../domain/objects.js';
import { policyXml } from '../acl-policy.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';

export const GetObjectAcl: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  // The object must exist (NoSuchKey otherwise); its ACL is its bucket's.
  const found = await findReadable(ctx.storage, { id: bucket.id }, target.key, target.caller.principal);
  return sendXml(reply, 'AccessControlPolicy', policyXml(target.caller, found.bucket.public === 1 ? 'public-read' : 'private'));
};
