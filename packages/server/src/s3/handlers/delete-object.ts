/**
 * DeleteObject: the domain's deleteObject (in a versioned bucket, a delete
 * marker, added even over no object, as S3 does), or with ?versionId= that
 * version for good (domain/versions.ts); a key that is not there is deleted already.
 * A locked version is refused with 403 AccessDenied (object-lock.ts), unless a key
 * allowed to bypasses GOVERNANCE.
 */
import { AppError } from '../../domain/errors.js';
import { deleteObject } from '../../domain/objects.js';
import { deleteFileVersion, shownVersionId } from '../../domain/versions.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { bypassAsked } from '../object-lock.js';
import { queryValue } from '../query.js';

export const DeleteObject: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const bypassGovernance = bypassAsked(request, target.caller.principal);
  const versionId = queryValue(target.query, 'versionId');
  if (versionId !== undefined) {
    try {
      const removed = await deleteFileVersion(ctx.storage, bucket, target.key, versionId, 'DeleteObject', { bypassGovernance });
      reply.header('x-amz-version-id', shownVersionId(removed.versionId));
      if (removed.isDeleteMarker) reply.header('x-amz-delete-marker', 'true');
    } catch (error) {
      // S3 answers 204 for a version that is not there, as for a key; a malformed id is still 400.
      if (!(error instanceof AppError && error.code === 'VersionNotFound')) throw error;
      reply.header('x-amz-version-id', versionId);
    }
    return reply.code(204).send();
  }
  try {
    const outcome = await deleteObject(ctx.storage, bucket, target.key, 'DeleteObject', {
      by: target.caller.principal,
      evenIfAbsent: bucket.versioning !== 'unversioned',
      bypassGovernance,
    });
    if (outcome.markerVersionId !== null) reply.header('x-amz-delete-marker', 'true').header('x-amz-version-id', outcome.markerVersionId);
  } catch (error) {
    // S3 answers 204 for a key that is not there: deleting is idempotent.
    if (!(error instanceof AppError && error.code === 'FileNotFound')) throw error;
  }
  return reply.code(204).send();
};
