/**
 * The version an object's lock sub-resource (?retention, ?legal-hold) is
 * on: the key's current version, or the one `versionId` names (domain/lock-changes.ts).
 */
import type { BucketRow } from '../db/schema.js';
import { AppError } from '../domain/errors.js';
import { lockedVersion, type LockedVersion } from '../domain/lock-changes.js';
import { parseFilename } from '../domain/objects.js';
import type { AppContext } from '../http/context.js';
import { S3Error } from './errors.js';
import type { S3Target } from './handler-support.js';
import { lockNotEnabled } from './object-lock.js';
import { queryValue } from './query.js';

export async function lockedVersionOf(ctx: AppContext, bucket: BucketRow, target: S3Target): Promise<LockedVersion> {
  if (bucket.object_lock !== 1) throw lockNotEnabled();
  const versionId = queryValue(target.query, 'versionId');
  try {
    return await lockedVersion(ctx.storage, bucket, parseFilename(target.key), versionId);
  } catch (error) {
    if (error instanceof AppError && error.code === 'FileNotFound' && versionId !== undefined) {
      throw new S3Error('NoSuchVersion', 404, 'The specified version does not exist.');
    }
    throw error;
  }
}
