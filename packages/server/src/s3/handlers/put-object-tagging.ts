/** PutObjectTagging: a Tagging document replaces the object's tags (domain/object-tags.ts); its bytes and Last-Modified stay. */
import { setObjectTags } from '../../domain/object-tags.js';
import { parseFilename } from '../../domain/objects.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { xmlBody } from '../payload.js';
import { checkedTags, tagsFromXml } from '../tagging.js';

export const PutObjectTagging: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const filename = parseFilename(target.key);
  const tags = tagsFromXml(await xmlBody(request, target.caller.payloadHash, target.caller));
  checkedTags(tags);
  await setObjectTags(ctx.storage, bucket, filename, tags, 'PutObjectTagging');
  return reply.code(200).send();
};
