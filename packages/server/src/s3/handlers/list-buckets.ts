/** ListBuckets: the caller's buckets, those a key limited to some buckets may use. */
import { allows } from '../../domain/authorize.js';
import { listBuckets } from '../../domain/buckets.js';
import { ownerXml, sendXml, type Handler } from '../handler-support.js';

export const ListBuckets: Handler = async (ctx, _request, reply, { caller }) => {
  const { principal } = caller;
  const buckets = (await listBuckets(ctx.db, principal.user.id)).filter((bucket) => allows(principal, 'listBuckets', { id: bucket.id }));
  return sendXml(reply, 'ListAllMyBucketsResult', {
    Owner: ownerXml(caller),
    Buckets: { Bucket: buckets.map((bucket) => ({ Name: bucket.name, CreationDate: bucket.created_at })) },
  });
};
