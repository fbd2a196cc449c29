/** ListBuckets: the caller's buckets, those a key limited to some buckets may use. */
import { listBuckets } from '../../domain/buckets.js';
import { mayUseBucket } from '../../domain/key-limits.js';
import { ownerXml, sendXml, type Handler } from '../handler-support.js';

export const ListBuckets: Handler = async (ctx, _request, reply, { caller }) => {
  const buckets = (await listBuckets(ctx.db, caller.owner.user.id)).filter((bucket) => mayUseBucket(caller.owner.limits, bucket.id));
  return sendXml(reply, 'ListAllMyBucketsResult', {
    Owner: ownerXml(caller),
    Buckets: { Bucket: buckets.map((bucket) => ({ Name: bucket.name, CreationDate: bucket.created_at })) },
  });
};
