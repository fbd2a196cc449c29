/**
 * GetObjectTagging: Pail keeps no tags and accepts none (every way of
 * setting one is 501, operations.ts), so an object's tag set is empty, and
 * saying so is the truth. The AWS CLI asks before every multipart
 * s3-to-s3 copy, which a 501 here would fail.
 */
import { findReadable } from '../../domain/objects.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';

export const GetObjectTagging: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  // Read as GetObject reads: a missing key is NoSuchKey.
  await findReadable(ctx.storage, { id: bucket.id }, target.key, target.caller.principal);
  return sendXml(reply, 'Tagging', { TagSet: {} });
};
