/** GetObjectRetention: a version's retention (domain/object-lock.ts); none is S3's 404. */
import { lockOf } from '../../domain/object-lock.js';
import { S3Error } from '../errors.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import { lockedVersionOf } from '../lock-targets.js';

export const GetObjectRetention: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const version = await lockedVersionOf(ctx, bucket, target);
  const lock = await lockOf(ctx.db, version.storageKey);
  if (lock.mode === null || lock.retainUntil === null) {
    throw new S3Error('NoSuchObjectLockConfiguration', 404, 'The specified object does not have a ObjectLock configuration');
  }
  return sendXml(reply, 'Retention', { Mode: lock.mode, RetainUntilDate: lock.retainUntil });
};
