/** A user's bucket named on the command line by its id or its name, as the file commands take it. */
import type { BucketRow } from '@pail/server/commands';
import { type Context, requireUser, server } from '../context.js';

export async function ownBucket(ctx: Context, email: string, bucket: string): Promise<{ bucket: BucketRow }> {
  const { getOwnBucket, getOwnBucketByName, operatorFor } = await server();
  const owner = await requireUser(ctx.db, email);
  const found = /^\d+$/.test(bucket)
    ? await getOwnBucket(ctx.db, owner.id, bucket)
    : await getOwnBucketByName(ctx.db, operatorFor(owner), bucket, 'readObject');
  return { bucket: found };
}
