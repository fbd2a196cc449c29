/**
 * What the CLI's commands use: configuration, the database and the domain
 * functions, without the HTTP side (Fastify, the doors, sessions, rate
 * budgets), which a command never needs and which takes long to load.
 * index.ts exports all of it too.
 */
export { loadConfig, configOrExit, ConfigError, type Config } from './config.js';
export type { BucketRow, Db } from './db/schema.js';
export { listUsers } from './db/repositories/users.js';
export { openCommandServices, s3CredentialSealer, type CommandServices } from './command-services.js';
export { createUser, findUser, setPlan, userView, userWithHoldings, planOf } from './domain/users.js';
export { deleteUser, deletedEmail, findDeletedAccount, userDeletionPreview, type UserDeletion, type UserHoldings } from './domain/user-deletion.js';
export { cancelUnfinishedUpload, listUnfinishedUploads } from './domain/unfinished-uploads.js';
export { getOwnBucket, getOwnBucketByName } from './domain/buckets.js';
export { moveFiles } from './domain/moves.js';
export { deleteFolder } from './domain/folder-deletion.js';
export { operatorFor } from './domain/principal.js';
export { createApiKey, listApiKeys, revokeApiKey } from './domain/api-keys.js';
export { AppError } from './domain/errors.js';
export { userDeletionBlocker, bucketDeletionBlocker, removalBlocker, lockOf, fileLockView } from './domain/object-lock.js';
export { lockedVersion, setLegalHold, setRetention } from './domain/lock-changes.js';
export { collectGarbage } from './domain/garbage-collection.js';
export { expireMultipartUploads } from './domain/multipart-expiry.js';
export { expireResumableUploads, RESUMABLE_IDLE_SECONDS } from './domain/resumable-uploads.js';
export { requireObject, parseFilename } from './domain/objects.js';
export { editObjectMetadata, fileDetails, fileDetailsOf } from './domain/object-metadata.js';
export { startZip } from './domain/zip-archives.js';
export { folderZip, selectionZip } from './domain/zip-selection.js';
export { decodeTags, setObjectTags, tagMap, tagsOfMap } from './domain/object-tags.js';
export { deleteBucketLifecycle, getBucketLifecycle, lifecycleRulesFromJson, putBucketLifecycle } from './domain/lifecycle.js';
export { runLifecycleSweep, leaseHolderName } from './domain/lifecycle-lease.js';
export { readAudit, recordAudit, OPERATOR, type AuditAction } from './domain/audit.js';
export { setVersioning } from './domain/buckets.js';
export {
  deleteFileVersion,
  fileVersions,
  findReadableVersion,
  restoreVersion,
  shownVersionId,
  trash,
  trashView,
  versionView,
  VERSIONS_PAGE_MAX,
} from './domain/versions.js';
export { objectBody } from './domain/object-bytes.js';
