/** GetBucketTagging: the bucket's tags as a Tagging document; none kept is NoSuchTagSet (404), as S3 answers. */
import { getBucketTags } from '../../domain/object-tags.js';
import { S3Error } from '../errors.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import { tagSetXml } from '../tagging.js';

export const GetBucketTagging: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const tags = await getBucketTags(ctx.db, bucket.id);
  if (tags === null) throw new S3Error('NoSuchTagSet', 404, 'The TagSet does not exist');
  return sendXml(reply, 'Tagging', tagSetXml(tags));
};
