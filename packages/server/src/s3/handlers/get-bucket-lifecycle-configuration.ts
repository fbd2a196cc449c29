/** GetBucketLifecycleConfiguration: the bucket's rules as a LifecycleConfiguration; none kept is NoSuchLifecycleConfiguration. */
import { getBucketLifecycle } from '../../domain/lifecycle.js';
import { S3Error } from '../errors.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import { ruleXml } from '../lifecycle-xml.js';

const noSuchLifecycle = () => new S3Error('NoSuchLifecycleConfiguration', 404, 'The lifecycle configuration does not exist');

export const GetBucketLifecycleConfiguration: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const rules = await getBucketLifecycle(ctx.db, bucket.id);
  if (rules === null) throw noSuchLifecycle();
  return sendXml(reply, 'LifecycleConfiguration', { Rule: rules.map(ruleXml) });
};
