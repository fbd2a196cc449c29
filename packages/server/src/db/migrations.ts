/**
 * The one migration history for both dialects. Migrations are frozen in time:
 * never edit one that has shipped, add a new one. The few dialect differences
 * are in the column helpers (migrations/columns.ts), not scattered through the
 * migrations, which live under migrations/ in the order they were added.
 */
import type { MigrationProvider } from 'kysely';
import { cacheEpochs, initial, inlineBlobs, keyLimits, objectMetadata, s3Credentials, uploadReservations } from './migrations/accounts-and-files.js';
import type { Dialect } from './migrations/columns.js';
import {
  bucketCors,
  bucketLimits,
  foldedNames,
  multipartChecksums,
  multipartObjects,
  multipartUploads,
  objectChecksums,
  resumableUploads,
  resumableWriters,
} from './migrations/uploads-and-buckets.js';
import { nameSortKeys } from './migrations/name-sort-keys.js';
import { publicAccessBlocks } from './migrations/public-access.js';
import { tags } from './migrations/tags.js';
import { versions } from './migrations/versions.js';
import { auditLog, webhookEvents } from './migrations/events.js';
import { lifecycle } from './migrations/lifecycle.js';
import { objectLock } from './migrations/object-lock.js';
import { userDeletion } from './migrations/user-deletion.js';
import { deliveryPruning } from './migrations/delivery-pruning.js';
import { webhookBatches } from './migrations/webhook-batches.js';
import { eventVersions } from './migrations/event-versions.js';

export type { Dialect } from './migrations/columns.js';

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '0001_initial': initial(dialect),
        '0002_inline_blobs': inlineBlobs(dialect),
        '0003_cache_epochs': cacheEpochs(),
        '0004_upload_reservations': uploadReservations(dialect),
        '0005_key_limits': keyLimits(),
        '0006_s3_credentials': s3Credentials(),
        '0007_object_metadata': objectMetadata(),
        '0008_multipart_uploads': multipartUploads(dialect),
        '0009_object_checksums': objectChecksums(),
        '0010_bucket_cors': bucketCors(dialect),
        '0011_multipart_checksums': multipartChecksums(),
        '0012_bucket_limits': bucketLimits(),
        '0013_folded_names': foldedNames(),
        '0014_resumable_uploads': resumableUploads(dialect),
        '0015_resumable_writers': resumableWriters(),
        '0016_multipart_objects': multipartObjects(),
        '0017_public_access_blocks': publicAccessBlocks(dialect),
        '0018_name_sort_keys': nameSortKeys(dialect),
        '0019_tags': tags(),
        '0020_versions': versions(dialect),
        '0021_lifecycle': lifecycle(dialect),
        '0022_events': webhookEvents(dialect),
        '0023_audit_log': auditLog(dialect),
        '0024_object_lock': objectLock(dialect),
        '0025_user_deletion': userDeletion(),
        '0026_delivery_pruning': deliveryPruning(),
        '0027_webhook_batches': webhookBatches(dialect),
        '0028_event_versions': eventVersions(),
      };
    },
  };
}
