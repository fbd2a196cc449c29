/** Migration 0028: the version an event is about (S3's s3.object.versionId), issue 39. */
import type { Kysely, Migration } from 'kysely';

/**
 * Null where the event names no version: an unversioned bucket's writes and
 * deletes, a bucket's own events, and events written before this column.
 */
export function eventVersions(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('webhook_deliveries').addColumn('version_id', 'text').execute();
    },
  };
}
