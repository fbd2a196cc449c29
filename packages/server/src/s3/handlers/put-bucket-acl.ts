/**
 * PutBucketAcl: the bucket's visibility, set from a canned ACL header or an
 * AccessControlPolicy body that is one. Only private and public-read are
 * understood; anything else (grants to other accounts, write grants) is
 * 501, never a silent success.
 */
import { setVisibility } from '../../domain/buckets.js';
import { cannedFromPolicy, type CannedAcl } from '../acl-policy.js';
import { s3Errors } from '../errors.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { xmlBody } from '../payload.js';
import { actorOf } from '../../domain/audit.js';

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
    const canned = cannedFromPolicy(body, target.caller);
    if (canned === undefined) throw s3Errors.notImplemented('An ACL other than the canned private or public-read');
    acl = canned;
  } else {
    throw s3Errors.invalidArgument('PutBucketAcl needs an x-amz-acl header or an AccessControlPolicy body');
  }
  await setVisibility(ctx.storage, target.caller.principal.user.id, String(bucket.id), { public: acl === 'public-read' }, actorOf(target.caller.principal));
  return reply.code(200).send();
};
