/** GetBucketVersioning: Enabled or Suspended; a bucket never versioned answers an empty configuration (no Status), as S3 does. */
import { ownBucket, sendXml, type Handler } from '../handler-support.js';

export const GetBucketVersioning: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  // Never versioned: no Status at all (Suspended would make tools take the bucket for a versioned one).
  if (bucket.versioning === 'unversioned') return sendXml(reply, 'VersioningConfiguration', {});
  return sendXml(reply, 'VersioningConfiguration', { Status: bucket.versioning === 'enabled' ? 'Enabled' : 'Suspended' });
};
