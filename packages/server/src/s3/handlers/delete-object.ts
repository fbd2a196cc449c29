/** DeleteObject: the domain's deleteObject; a key that is not there is deleted already. */
import { AppError } from '../../domain/errors.js';
import { deleteObject } from '../../domain/objects.js';
import { ownBucket, type Handler } from '../handler-support.js';

export const DeleteObject: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  try {
    await deleteObject(ctx.storage, bucket, target.key, 'DeleteObject');
  } catch (error) {
    // S3 answers 204 for a key that is not there: deleting is idempotent.
    if (!(error instanceof AppError && error.code === 'FileNotFound')) throw error;
  }
  return reply.code(204).send();
};
