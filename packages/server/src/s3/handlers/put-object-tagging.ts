/**
 * PutObjectTagging: a Tagging document replaces a version's tags (domain/object-tags.ts), the current version's
 * or the one versionId names; its bytes and Last-Modified stay.
 */
import { setObjectTags } from '../../domain/object-tags.js';
import { parseFilename } from '../../domain/objects.js';
import { ownBucket, versionIdHeader, type Handler } from '../handler-support.js';
import { xmlBody } from '../payload.js';
import { queryValue } from '../query.js';
import { checkedTags, tagsFromXml } from '../tagging.js';

export const PutObjectTagging: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const filename = parseFilename(target.key);
  const tags = tagsFromXml(await xmlBody(request, target.caller.payloadHash, target.caller));
  checkedTags(tags);
  const kept = await setObjectTags(ctx.storage, bucket, filename, tags, 'PutObjectTagging', queryValue(target.query, 'versionId'));
  return versionIdHeader(reply, bucket, kept.versionId).code(200).send();
};
