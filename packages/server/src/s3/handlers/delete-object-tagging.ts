/** DeleteObjectTagging: the object keeps no tags any more (204, as S3). */
import { setObjectTags } from '../../domain/object-tags.js';
import { parseFilename } from '../../domain/objects.js';
import { ownBucket, type Handler } from '../handler-support.js';

export const DeleteObjectTagging: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  await setObjectTags(ctx.storage, bucket, parseFilename(target.key), [], 'DeleteObjectTagging');
  return reply.code(204).send();
};
