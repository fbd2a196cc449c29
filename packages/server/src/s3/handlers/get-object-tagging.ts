/** GetObjectTagging: the object's tags (domain/object-tags.ts) as a Tagging document; none is an empty <TagSet/>. */
import { decodeTags } from '../../domain/object-tags.js';
import { findReadable } from '../../domain/objects.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import { tagSetXml } from '../tagging.js';

export const GetObjectTagging: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  // Read as GetObject reads: a missing key is NoSuchKey.
  const { object } = await findReadable(ctx.storage, { id: bucket.id }, target.key, target.caller.principal);
  return sendXml(reply, 'Tagging', tagSetXml(decodeTags(object.tags)));
};
