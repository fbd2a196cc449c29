/** GetObjectLockConfiguration: a bucket made with object lock answers its configuration; any other, S3's 404. */
import { S3Error } from '../errors.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import { lockConfigurationXml } from '../object-lock.js';

export const GetObjectLockConfiguration: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  if (bucket.object_lock !== 1) {
    throw new S3Error('ObjectLockConfigurationNotFoundError', 404, 'Object Lock configuration does not exist for this bucket');
  }
  return sendXml(reply, 'ObjectLockConfiguration', lockConfigurationXml(bucket));
};
