/**
 * PutBucketAcl: the bucket's visibility, set from a canned ACL header or an
 * AccessControlPolicy body that is one. Only private and public-read are
 * understood; anything else (grants to other accounts, write grants) is
 * 501, never a silent success.
 */
import { setVisibility } from '../../domain/buckets.js';
import { ALL_USERS, type CannedAcl } from '../acl-policy.js';
import type { S3Caller } from '../auth.js';
import { s3Errors } from '../errors.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { xmlBody } from '../payload.js';
import { asList, field, parseXml } from '../xml.js';

/** Which canned ACL an AccessControlPolicy body is: exactly the owner's FULL_CONTROL, plus READ for everyone or not. */
function cannedFromPolicy(body: string, caller: S3Caller): CannedAcl {
  const notCanned = () => s3Errors.notImplemented('An ACL other than the canned private or public-read');
  const policy = field(parseXml(body), 'AccessControlPolicy');
  if (policy === undefined) throw s3Errors.malformedXml();
  let ownerGrants = 0;
  let publicGrants = 0;
  for (const grant of asList(field(field(policy, 'AccessControlList'), 'Grant'))) {
    const grantee = field(grant, 'Grantee');
    const permission = field(grant, 'Permission');
    if (field(grantee, 'ID') === String(caller.principal.user.id) && permission === 'FULL_CONTROL') ownerGrants += 1;
    else if (field(grantee, 'URI') === ALL_USERS && permission === 'READ') publicGrants += 1;
    else throw notCanned();
  }
  if (ownerGrants !== 1 || publicGrants > 1) throw notCanned();
  return publicGrants === 1 ? 'public-read' : 'private';
}

export const PutBucketAcl: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  if (Object.keys(request.headers).some((name) => name.startsWith('x-amz-grant-'))) throw s3Errors.notImplemented('x-amz-grant-* ACL grants');
  const header = request.headers['x-amz-acl'];
  const body = await xmlBody(request, target.caller.payloadHash, target.caller);
  let acl: CannedAcl;
  if (header !== undefined) {
    if (header !== 'private' && header !== 'public-read') throw s3Errors.notImplemented(`x-amz-acl: ${String(header)}`);
    acl = header;
  } else if (body.trim() !== '') {
    acl = cannedFromPolicy(body, target.caller);
  } else {
    throw s3Errors.invalidArgument('PutBucketAcl needs an x-amz-acl header or an AccessControlPolicy body');
  }
  await setVisibility(ctx.storage, target.caller.principal.user.id, String(bucket.id), { public: acl === 'public-read' });
  return reply.code(200).send();
};
