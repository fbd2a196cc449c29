/** GetObjectAcl: an object's ACL is its bucket's (acl-policy.ts), for its current version or the one versionId names. */
import { findReadable } from '../../domain/objects.js';
import { versionOrCurrent } from '../../domain/versions.js';
import { policyXml } from '../acl-policy.js';
import { ownBucket, sendXml, versionIdHeader, type Handler } from '../handler-support.js';
import { queryValue } from '../query.js';

export const GetObjectAcl: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const versionId = queryValue(target.query, 'versionId');
  const acl = bucket.public === 1 ? 'public-read' : 'private';
  if (versionId !== undefined) {
    // That version must exist (NoSuchVersion; a delete marker has no ACL: 405); its ACL is its bucket's too.
    const version = await versionOrCurrent(ctx.storage, bucket, target.key, versionId);
    return sendXml(versionIdHeader(reply, bucket, version.object.version_id ?? null), 'AccessControlPolicy', policyXml(target.caller, acl));
  }
  // The object must exist (NoSuchKey otherwise); its ACL is its bucket's.
  const found = await findReadable(ctx.storage, { id: bucket.id }, target.key, target.caller.principal);
  return sendXml(reply, 'AccessControlPolicy', policyXml(target.caller, found.bucket.public === 1 ? 'public-read' : 'private'));
};
