/**
 * GetObjectTagging: a version's tags (domain/object-tags.ts) as a Tagging document; none is an empty <TagSet/>.
 * The current version, or the one versionId names; a delete marker has none (405).
 */
import { objectTags } from '../../domain/object-tags.js';
import { ownBucket, sendXml, versionIdHeader, type Handler } from '../handler-support.js';
import { queryValue } from '../query.js';
import { tagSetXml } from '../tagging.js';

export const GetObjectTagging: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const { tags, versionId } = await objectTags(ctx.storage, bucket, target.key, queryValue(target.query, 'versionId'));
  return sendXml(versionIdHeader(reply, bucket, versionId), 'Tagging', tagSetXml(tags));
};
