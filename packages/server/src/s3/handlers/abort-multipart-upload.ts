/** AbortMultipartUpload: the upload and its parts are gone (domain/multipart.ts). */
import { abortUpload } from '../../domain/multipart.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { answeringRefusals, uploadIdOf } from '../multipart-support.js';

export const AbortMultipartUpload: Handler = answeringRefusals(async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  await abortUpload(ctx.storage, bucket, uploadIdOf(target), 'AbortMultipartUpload');
  return reply.code(204).send();
});
