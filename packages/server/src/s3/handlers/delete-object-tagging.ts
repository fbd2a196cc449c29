/** DeleteObjectTagging: a version (the current one, or the one versionId names) keeps no tags any more (204, as S3). */
import { setObjectTags } from '../../domain/object-tags.js';
import { parseFilename } from '../../domain/objects.js';
import { ownBucket, versionIdHeader, type Handler } from '../handler-support.js';
import { queryValue } from '../query.js';

export const DeleteObjectTagging: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const kept = await setObjectTags(ctx.storage, bucket, parseFilename(target.key), [], 'DeleteObjectTagging', queryValue(target.query, 'versionId'));
  return versionIdHeader(reply, bucket, kept.versionId).code(204).send();
};
