/** GetBucketVersioning: versioning is never enabled, and the answer says so with an empty configuration. */
import { ownBucket, sendXml, type Handler } from '../handler-support.js';

export const GetBucketVersioning: Handler = async (ctx, _request, reply, target) => {
  await ownBucket(ctx, target);
  // Never enabled: no Status at all (Suspended would make tools take the bucket for a versioned one).
  return sendXml(reply, 'VersioningConfiguration', {});
};
