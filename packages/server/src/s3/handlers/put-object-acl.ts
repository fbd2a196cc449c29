/**
 * PutObjectAcl: an object's ACL is its bucket's visibility (object-acl.ts),
 * so the ACL it already has, canned (`x-amz-acl`) or as an
 * AccessControlPolicy body (acl-policy.ts), is taken and changes nothing;
 * any other is refused as S3 refuses ACLs on a bucket that has them
 * disabled (400 AccessControlListNotSupported). PutBucketAcl changes it.
 */
import { requireObject } from '../../domain/objects.js';
import { versionOrCurrent } from '../../domain/versions.js';
import { cannedFromPolicy } from '../acl-policy.js';
import { s3Errors } from '../errors.js';
import { ownBucket, versionIdHeader, type Handler } from '../handler-support.js';
import { queryValue } from '../query.js';
import { checkObjectAcl } from '../object-acl.js';
import { xmlBody } from '../payload.js';

const OTHER_ACL = 'an object has its bucket’s visibility, and no ACL of its own (PutBucketAcl sets the bucket’s)';

export const PutObjectAcl: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const versionId = queryValue(target.query, 'versionId');
  // The object, or the version named, must exist (a delete marker has no ACL: 405).
  if (versionId === undefined) await requireObject(ctx.storage, bucket, target.key);
  else versionIdHeader(reply, bucket, (await versionOrCurrent(ctx.storage, bucket, target.key, versionId)).object.version_id ?? null);
  const body = await xmlBody(request, target.caller.payloadHash, target.caller);
  if (Object.keys(request.headers).some((name) => name.startsWith('x-amz-grant-'))) throw s3Errors.aclNotSupported(OTHER_ACL);
  const header = request.headers['x-amz-acl'];
  if (header !== undefined) {
    checkObjectAcl(header, bucket.public === 1);
  } else if (body.trim() !== '') {
    const canned = cannedFromPolicy(body, target.caller);
    if (canned === undefined) throw s3Errors.aclNotSupported(OTHER_ACL);
    checkObjectAcl(canned, bucket.public === 1);
  } else {
    throw s3Errors.invalidArgument('PutObjectAcl needs an x-amz-acl header or an AccessControlPolicy body');
  }
  return reply.code(200).send();
};
