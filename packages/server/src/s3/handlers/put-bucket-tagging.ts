/** PutBucketTagging: a Tagging document replaces the bucket's tags (at most 50, domain/object-tags.ts). */
import { setBucketTags } from '../../domain/object-tags.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { xmlBody } from '../payload.js';
import { checkedTags, tagsFromXml } from '../tagging.js';

export const PutBucketTagging: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const tags = tagsFromXml(await xmlBody(request, target.caller.payloadHash, target.caller));
  checkedTags(tags, 'bucket');
  await setBucketTags(ctx.db, bucket.id, tags);
  return reply.code(204).send();
};
