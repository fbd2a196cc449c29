/** GetPublicAccessBlock: the bucket's block (domain/public-access.ts) as a PublicAccessBlockConfiguration; none kept is NoSuchPublicAccessBlockConfiguration. */
import { getPublicAccessBlock } from '../../domain/public-access.js';
import { S3Error } from '../errors.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';

const noSuchBlock = () => new S3Error('NoSuchPublicAccessBlockConfiguration', 404, 'The public access block configuration was not found');

export const GetPublicAccessBlock: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const block = await getPublicAccessBlock(ctx.db, bucket.id);
  if (block === null) throw noSuchBlock();
  return sendXml(reply, 'PublicAccessBlockConfiguration', {
    BlockPublicAcls: block.blockPublicAcls,
    IgnorePublicAcls: block.ignorePublicAcls,
    BlockPublicPolicy: block.blockPublicPolicy,
    RestrictPublicBuckets: block.restrictPublicBuckets,
  });
};
