/**
 * PutObjectLockConfiguration: a bucket's default retention (domain/bucket-lock.ts). Object lock itself is
 * chosen when the bucket is made (x-amz-bucket-object-lock-enabled) or, as S3 allows, turned on for good
 * here in a bucket whose versioning is enabled; any other bucket answers S3's 409.
 */
import { actorOf } from '../../domain/audit.js';
import { setLockConfiguration } from '../../domain/bucket-lock.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { lockConfigurationFromXml } from '../object-lock.js';
import { xmlBody } from '../payload.js';

export const PutObjectLockConfiguration: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const body = await xmlBody(request, target.caller.payloadHash, target.caller);
  // As S3: lock may be turned on for good in a bucket whose versioning is enabled, never in another (bucket-lock.ts).
  await setLockConfiguration(ctx.storage, bucket, lockConfigurationFromXml(body), actorOf(target.caller.principal));
  return reply.code(200).send();
};
